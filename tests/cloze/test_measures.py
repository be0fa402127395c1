"""The cloze metrics are one list (plmfair.cloze.measures): a metric added as one entry reaches the annotation
scores, the metrics, their schemas, the breakdowns, the group tests, the comparisons of runs, the tables,
the labels and the run record, with nothing else edited."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest

from plmfair.cloze.measures import COLUMNS, METRICS, PRIMARY, TESTED, TIE_BREAK, TOP, listed
from plmfair.rendering.labels import metric_label

P_AT_10 = """    Metric(
        "p_at_10",
        "hit10",
        "P@10",
        "hit in the top 10",
        10,
        False,
        "percentage of annotations whose answer is among the top 10 candidates",
        "1 when the answer is among the model's top 10 candidates, else 0",
    ),
"""

# Each place a metric reaches, exercised in a copy of the library with P@10 added. Sentence 1's answers
# rank 1 and 7, sentence 2's 3 and 12 (absent), by groups MN, FN, MNN, FNN in turn.
CHECKS = r"""
import numpy as np, pandas as pd
from plmfair.cloze import breakdowns, changes, disparity, metrics, record_part, schemas, tables
from plmfair.rendering.labels import metric_label
from plmfair.runs.record import record_schema

groups = ["MN", "FN", "MNN", "FNN"]
ann = pd.DataFrame({"lang": "fr", "s_id": ["1"] * 4 + ["2"] * 4, "u_id": list("abcd") * 2, "group": groups * 2,
                    "answer": list("wxyzWXYZ"), "text": ["Le [MASK] dort ."] * 8, "tag": ["NOUN"] * 8})
ranks = [1, 7, 1, 7, 3, 12, 3, 12]
scored = pd.DataFrame({"s_id": ann["s_id"], "answer": ann["answer"], "answer_norm": [f"c{r}" for r in ranks],
                       "logprob": -np.arange(1.0, 9.0), "n_pieces": 1})
preds = pd.DataFrame({"s_id": ["1"] * 10 + ["2"] * 10, "rank": list(range(1, 11)) * 2,
                      "candidate_norm": [f"c{r}" for r in range(1, 11)] * 2})
per_annotation = metrics.annotation_scores(ann, preds, scored, model="m", lang="fr")
assert per_annotation["hit10"].tolist() == [1, 1, 1, 1, 1, 0, 1, 0] and "hit10" in metrics.ANNOTATION_SCORES_SCHEMA
by_group = metrics.compute_metrics(ann, preds, scored, model="m", lang="fr").set_index("group")
assert by_group.loc["FN", "p_at_10"] == 50.0 and by_group.loc["FN", "p_at_5"] == 0.0, by_group
assert by_group.loc["MN", "p_at_10"] == 100.0 and "p_at_10" in schemas.METRICS_SCHEMA
cells = breakdowns.cloze_breakdowns(per_annotation, ann)
assert "p_at_10" in cells and cells.query("group == 'FN'")["p_at_10"].eq(50.0).all()
assert "p_at_10" in breakdowns.CLOZE_BREAKDOWN_SCHEMA
sigma = disparity.group_disparity(per_annotation, cloze_set="t", alpha=0.05, permutations=19, seed=0)
assert "p_at_10" in set(sigma["metric"]) and "p_at_10" in disparity.GROUP_DISPARITY_SCHEMA["metric"]
moved = changes.annotation_changes(per_annotation, per_annotation.assign(hit10=1), alpha=0.05, permutations=19, seed=0)
fn = moved.query("metric == 'p_at_10' and group == 'FN' and lang == 'fr'").iloc[0]
assert (fn["value_a"], fn["value_b"]) == (50.0, 100.0) and "p_at_10" in changes.CLOZE_CHANGE_SCHEMA["metric"]
paper = tables.paper_table(by_group.reset_index().assign(model="m", lang="fr"), metric="p_at_10", alpha=0.05)
cells = paper.set_index(["group", "column"])["value"]
assert cells[("FN", "fr")] == 50.0 and cells[("MN", "fr")] == 100.0, cells
assert metric_label("hit10") == "P@10 (hit in the top 10)"
schema = record_schema()["properties"]["results"]["properties"]
assert "p_at_10" in schema["cloze"]["items"]["required"]
assert "p_at_10" in schema["disparity"]["items"]["properties"]["metric"]["enum"]
assert "p_at_10" in record_part.CLOZE_FIELDS and "P@10" in record_part.HEADLINES[0].caption
print("P@10 reached every place")
"""


def test_each_metric_is_one_entry_its_scores_and_its_means():
    rank = np.array([1.0, 3.0, 7.0, np.nan])
    by_column = {m.column: m for m in METRICS}
    assert by_column["p_at_1"].scores(rank).tolist() == [1, 0, 0, 0]
    assert by_column["p_at_5"].mean(rank) == 50.0
    assert by_column["mrr"].scores(rank).tolist() == [1.0, 1 / 3, 0.0, 0.0] and by_column["mrr"].mean(
        rank
    ) == pytest.approx(100 * (1 + 1 / 3) / 4)
    assert COLUMNS == ("p_at_1", "p_at_5", "mrr") and TOP == 5 and PRIMARY.column == "mrr"
    assert TESTED == ("rr", "hit1") and TIE_BREAK == {"hit1": "rr"}
    assert listed(COLUMNS) == "p_at_1, p_at_5 or mrr" and metric_label("hit5") == "P@5 (hit in the top 5)"


def test_p_at_10_added_as_one_entry_reaches_every_place(repo, tmp_path):
    library = tmp_path / "src"
    shutil.copytree(repo / "src", library, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(repo / "workflow" / "schemas", tmp_path / "workflow" / "schemas")  # the record's schema
    measures = library / "plmfair" / "cloze" / "measures.py"
    text = measures.read_text(encoding="utf-8")
    start = "METRICS: tuple[Metric, ...] = (\n"
    assert text.count(start) == 1
    measures.write_text(text.replace(start, start + P_AT_10), encoding="utf-8")
    changed = [
        p.relative_to(tmp_path).as_posix()
        for p in library.rglob("*.py")
        if p.read_bytes() != (repo / p.relative_to(tmp_path)).read_bytes()
    ]
    print(f"P@10: {len(changed)} file changed ({', '.join(changed)}), one entry of {len(P_AT_10.splitlines())} lines")
    assert changed == ["src/plmfair/cloze/measures.py"]
    done = subprocess.run(
        [sys.executable, "-c", CHECKS],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(library), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "P@10 reached every place" in done.stdout
