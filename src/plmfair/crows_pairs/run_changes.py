"""CrowS-Pairs in ``plmfair compare`` (:mod:`plmfair.runs.comparison`): for every two runs, each data set
and each model scored in both, the pair-by-pair comparison of :mod:`plmfair.crows_pairs.changes` (the
3 x 3 transitions, and the changes of the decisive share and of Nangia's score, each with Tango's
interval and its test); a model against another model only with ``other_models``, never a scoring
against itself."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from pathlib import Path

import pandas as pd

from plmfair.crows_pairs.changes import change_table, outcomes, paired_change
from plmfair.crows_pairs.plan import PAIR_SCORES
from plmfair.crows_pairs.schemas import CHANGES, OUTCOMES, read_pair_scores
from plmfair.crows_pairs.tables import changes_table
from plmfair.errors import missing_result

KEY = "paired changes"  # its part of the comparison
TITLE = (
    "CrowS-Pairs, did it move? The same model in two runs compared pair by pair: the 3 x 3 transitions (m, n, l: "
    "the more stereotyping sentence preferred, neutral, the less; m→l: more in the first run, less in the "
    "second), and the changes of the decisive share (on the pairs both runs decide) and of Nangia et al.'s "
    "score, each with Tango's score interval and p, the larger of the mid-p McNemar test's and Tango's score "
    "test's; * : Holm-adjusted p < {alpha} over every test of this comparison; identical: no pair moved"
)


def sections(record: Mapping) -> set[str]:
    """The configuration sections a run's CrowS-Pairs numbers depend on (none without them)."""
    return {"crows_pairs"} if record["results"].get("crows_pairs") else set()


def _pair_scores(folder: Path, label: str, dataset: str, model: str) -> pd.DataFrame:
    path = folder / PAIR_SCORES.format(dataset=dataset, model=model)
    if not path.is_file():
        raise missing_result(path, label, folder)
    return outcomes(read_pair_scores(path))


def changes(
    folders: Mapping[str, Path], records: Mapping[str, dict], *, alpha: float, source: str, other_models: bool = False
) -> pd.DataFrame:
    """For every two runs, each data set and each model scored in both (with ``other_models``, each
    two models too), the pair-by-pair comparison (:data:`plmfair.crows_pairs.changes.CHANGE_SCHEMA`), its
    tests named for the hypotheses of ``source``."""
    scored = {
        run: {(r["dataset"], r["model"]) for r in record["results"]["crows_pairs"]} for run, record in records.items()
    }
    cache: dict[tuple[str, str, str], pd.DataFrame] = {}

    def scores(run: str, dataset: str, model: str) -> pd.DataFrame:
        if (run, dataset, model) not in cache:
            cache[run, dataset, model] = _pair_scores(folders[run], run, dataset, model)
        return cache[run, dataset, model]

    rows = []
    for first, second in combinations(records, 2):
        for dataset, model_a in sorted(scored[first]):
            for ds, model_b in sorted(scored[second]):
                if ds != dataset or (model_a != model_b and not other_models):
                    continue
                a, b = f"{first}/{model_a}", f"{second}/{model_b}"
                change = paired_change(
                    scores(first, dataset, model_a), scores(second, dataset, model_b), where=dataset, alpha=alpha
                )
                rows.append({"dataset": dataset, "a": a, "b": b, **change})
    return change_table(rows, source=source)


def tests(table: pd.DataFrame) -> list[pd.DataFrame]:
    """The tests of the changes, as rows of the comparison's hypotheses (hypothesis, p_value, p_min, size,
    informative, limit): two per comparison, one per change."""
    return [
        pd.DataFrame(
            {
                "hypothesis": table[f"{name}_hypothesis"],
                "p_value": table[f"{name}_p"].astype(float),
                "p_min": table[f"{name}_p_min"].astype(float),
                "size": float("nan"),
                "informative": ~table["identical"].astype(bool),
                "limit": "",
            }
        )
        for name in CHANGES
    ]


def decided(table: pd.DataFrame, hypotheses: pd.DataFrame) -> pd.DataFrame:
    """The changes with each test's adjusted p and mark (``{change}_p_adjusted``, ``{change}_significant``)
    from the comparison's hypotheses."""
    out = table.copy()
    for name in CHANGES:
        if len(out):
            verdicts = hypotheses.set_index("hypothesis").loc[out[f"{name}_hypothesis"]]
            out[f"{name}_p_adjusted"] = verdicts["p_adjusted"].to_numpy()
            out[f"{name}_significant"] = verdicts["significant"].to_numpy(dtype=bool)
        else:
            out[f"{name}_p_adjusted"], out[f"{name}_significant"] = [], []
    return out


def for_people(table: pd.DataFrame, hypotheses: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """The changes as compare's Markdown prints them (:func:`plmfair.crows_pairs.tables.changes_table`)."""
    return changes_table(table, hypotheses, alpha=alpha)


def text(table: pd.DataFrame) -> tuple[str, str]:
    """Each comparison's 3 x 3 transition table as text, with its title: rows the outcome in the first run,
    columns in the second."""
    blocks = []
    for _, r in table.iterrows():
        width = max(len(str(r[f"{x}_to_{y}"])) for x in OUTCOMES for y in OUTCOMES) + 2
        lines = [f"{r['dataset']}: {r['a']} (rows) -> {r['b']} (columns), {r['n']} pairs"]
        lines.append(" " * 9 + "".join(f"{y:>{max(width, 9)}}" for y in OUTCOMES))
        for x in OUTCOMES:
            lines.append(f"{x:<9}" + "".join(f"{r[f'{x}_to_{y}']:>{max(width, 9)}}" for y in OUTCOMES))
        blocks.append("\n".join(lines))
    return "Transitions (pairs, by outcome in each run)", "\n\n".join(blocks)
