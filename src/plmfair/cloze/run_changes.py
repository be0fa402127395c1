"""Cloze sets in ``plmfair compare`` (:mod:`plmfair.runs.comparison`): for every two runs, each cloze set
and model in both, the annotation-by-annotation changes of :mod:`plmfair.cloze.changes` (P@1, P@5, MRR per
group, sigma_gd, each with its flip test)."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from pathlib import Path

import pandas as pd

from plmfair.cloze.changes import CLOZE_CHANGE_SCHEMA, annotation_changes
from plmfair.cloze.plan import set_file
from plmfair.errors import missing_result
from plmfair.io.parquet import read_parquet
from plmfair.rendering.marks import add_decisions
from plmfair.rendering.table_format import with_display

KEY = "cloze changes"  # its part of the comparison
TITLE = (
    "Cloze sets, did it move? The same model in two runs compared annotation by annotation: P@1, P@5, MRR "
    "(percent) per language and group and σ_gd across the four groups (percentage points) under each, the "
    "change, and the p of its flip test (the two runs' scores exchanged sentence by sentence; no interval); * "
    ": Holm-adjusted p < {alpha} over every test of this comparison"
)


def sections(record: Mapping) -> set[str]:
    """The configuration sections a run's cloze numbers depend on: each set's own and the cloze study's."""
    results = record["results"].get("cloze", [])
    return {r["set"] for r in results} | ({"cloze"} if results else set())


def changes(
    folders: Mapping[str, Path],
    records: Mapping[str, dict],
    *,
    alpha: float,
    source: str,
    other_models: bool = False,
) -> pd.DataFrame:
    """For every two runs, each cloze set and model in both, the annotation-by-annotation changes of
    P@1, P@5, MRR per language and group and of sigma_gd, each with its flip test
    (:mod:`plmfair.cloze.changes`), its tests named for the hypotheses of ``source``; a model is only
    compared with itself (``other_models`` has no effect here). The flip tests draw the permutations the
    first run of the two was configured with (its ``analysis.permutations`` and ``analysis.seed``)."""
    scored = {run: {(r["set"], r["model"]) for r in record["results"]["cloze"]} for run, record in records.items()}
    frames = []
    for first, second in combinations(records, 2):
        for cloze_set, model in sorted(scored[first] & scored[second]):
            both = []
            for run in (first, second):
                path = folders[run] / set_file(cloze_set, "annotation_scores")
                if not path.is_file():
                    raise missing_result(path, run, folders[run])
                scores = read_parquet(path)
                both.append(scores[scores["model"] == model])
            analysis = records[first]["config"]["analysis"]
            change = annotation_changes(
                *both, alpha=alpha, permutations=analysis["permutations"], seed=analysis["seed"]
            )
            a, b = f"{first}/{model}", f"{second}/{model}"
            change["hypothesis"] = [
                f"{source}/cloze/{cloze_set}/{a}/{b}/{lang}/{group}/{metric}"
                for lang, group, metric in zip(change["lang"], change["group"], change["metric"], strict=True)
            ]
            frames.append(change.assign(set=cloze_set, a=a, b=b))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(CLOZE_CHANGE_SCHEMA))
    return out[list(CLOZE_CHANGE_SCHEMA)]


def tests(table: pd.DataFrame) -> list[pd.DataFrame]:
    """The flip tests of the changes, as the comparison's hypotheses."""
    return [
        pd.DataFrame(
            {
                "hypothesis": table["hypothesis"],
                "p_value": table["p_value"].astype(float),
                "p_min": table["p_min"].astype(float),
                "size": table["size"].astype(float),
                "informative": True,
                "limit": "",
            }
        )
    ]


def decided(table: pd.DataFrame, hypotheses: pd.DataFrame) -> pd.DataFrame:
    """The changes with each flip test's adjusted p and mark, printed by the display rule."""
    out = table.copy()
    marks: dict = {}
    if len(out):
        marks = add_decisions(out, table, hypotheses)
    return with_display(out, alpha=hypotheses.attrs["alpha"], nulls={"change": 0.0}, marks=marks)
