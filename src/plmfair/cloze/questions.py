"""The cloze studies' part of a run's hypotheses (:mod:`plmfair.multiplicity`), for each set with answers.

Their primary question, one per set and model: does the model serve the annotator groups differently?
Tested by the permutation test of sigma_gd of MRR across the four groups with every language of the set
pooled (each language's batches kept apart; the omnibus null: all four groups exchangeable), the most
powerful of the group tests on MozArt's design (docs/statistics.md, "Power"); the estimand is the true
disparity, the sigma_gd of the groups' true MRR, with the interval that inverts that test. The
population its p-value refers to: annotators of each group, of whom the set's are taken as a sample,
answering the set's sentences.

Secondary: sigma_gd of every metric and language, the gaps to the reference group, the omnibus, 2 x 2
and group x language tests, and the win/loss of every two groups.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from plmfair.cloze.measures import PRIMARY
from plmfair.multiplicity import HYPOTHESIS_SCHEMA, Primary, hypotheses_of

PRIMARY_METRIC = PRIMARY.column  # the disparity a cloze set's primary question is about, as the headline prints it
POOLED = "all"


def _where(rows: pd.DataFrame) -> list[str]:
    return [
        f"{metric}, {'languages pooled' if lang == POOLED else lang}"
        for metric, lang in zip(rows["metric"], rows["lang"], strict=True)
    ]


def _frame(rows: pd.DataFrame, study: str, source: str, question: list[str], primary: Primary) -> pd.DataFrame:
    return hypotheses_of(
        rows,
        study=study,
        source=source,
        question=question,
        primary=primary,
        p_value="p_permutation",
        informative=rows["informative"],
    )


def _disparity(rows: pd.DataFrame, cloze_set: str) -> tuple[list[str], Primary]:
    question = [
        f"{m} serves the annotator groups of {cloze_set} differently ({w})"
        for m, w in zip(rows["model"], _where(rows), strict=True)
    ]
    return question, (rows["lang"] == POOLED) & (rows["metric"] == PRIMARY_METRIC)


def _gaps(rows: pd.DataFrame, cloze_set: str) -> tuple[list[str], Primary]:
    question = [
        f"{m}: {g} and {r} differ on {cloze_set} ({w})"
        for m, g, r, w in zip(rows["model"], rows["group"], rows["reference"], _where(rows), strict=True)
    ]
    return question, False


def _tests(rows: pd.DataFrame, cloze_set: str) -> tuple[list[str], Primary]:
    question = [
        f"{m}: {t} on {cloze_set} ({w})" for m, t, w in zip(rows["model"], rows["test"], _where(rows), strict=True)
    ]
    return question, False


def _winloss(rows: pd.DataFrame, cloze_set: str) -> tuple[list[str], Primary]:
    question = [
        f"{m}: {a} and {b} win equally often on {cloze_set} ({w})"
        for m, a, b, w in zip(rows["model"], rows["group_a"], rows["group_b"], _where(rows), strict=True)
    ]
    return question, False


READERS = {"group_disparity": _disparity, "group_gaps": _gaps, "group_tests": _tests, "group_winloss": _winloss}


def _questions(study: str, results: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    frames = []
    for path, rows in results.items():
        if not len(rows):
            continue
        cloze_set, kind = Path(path).parent.name, Path(path).stem
        question, primary = READERS[kind](rows, cloze_set)
        frames.append(_frame(rows, study, path, question, primary))
    if not frames:
        return pd.DataFrame(columns=list(HYPOTHESIS_SCHEMA))
    return pd.concat(frames, ignore_index=True)[list(HYPOTHESIS_SCHEMA)]


def mozart_questions(results: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every test the tables of the ready-made cloze tests mark, from their result files by path, as the rows
    of :data:`plmfair.multiplicity.HYPOTHESIS_SCHEMA`."""
    return _questions("mozart", results)


def cloze_questions(results: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The same for the constructed cloze sets with answers."""
    return _questions("cloze", results)
