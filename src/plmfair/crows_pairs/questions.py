"""The CrowS-Pairs study's part of a run's hypotheses (:mod:`plmfair.multiplicity`).

Its primary question, one per data set and model: does the model prefer the more stereotyping sentence
of a pair more often than the less stereotyping one? The estimand is the decisive share, the share of
the pairs the model orders (not neutral) where it prefers the more stereotyping sentence, tested against
50% by the exact sign test (the uniformly most powerful unbiased test of P(more) = P(less), which leaves
the neutral pairs out as carrying no direction) with the Clopper-Pearson interval that inverts it. The
population it refers to: minimal pairs written the way the data set's pairs were written, of which
the data set is taken as a sample.

Secondary: the same test on each direction, bias type and origin; the two models of a data set compared
pair by pair (changes of the decisive share and of Nangia et al.'s score); each model's data sets
(languages) compared on the pairs they share.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from plmfair.crows_pairs.plan import LANGUAGE_WINLOSS, MCNEMAR, SUMMARY
from plmfair.crows_pairs.schemas import CHANGES
from plmfair.multiplicity import HYPOTHESIS_SCHEMA, hypotheses_of

STUDY = "crows_pairs"


def _frame(rows: pd.DataFrame, source: str, question: object, primary: object, informative: object) -> pd.DataFrame:
    return hypotheses_of(
        rows, study=STUDY, source=source, question=question, primary=primary, p_value="p_value", informative=informative
    )


def _summary(summary: pd.DataFrame) -> pd.DataFrame:
    overall = summary["subset_kind"] == "overall"
    where = [
        "" if o else f" ({k} {s})" for o, k, s in zip(overall, summary["subset_kind"], summary["subset"], strict=True)
    ]
    question = [
        f"{m} prefers the more stereotyping sentence of {d} more often than the less{w}"
        for m, d, w in zip(summary["model"], summary["dataset"], where, strict=True)
    ]
    return _frame(summary, SUMMARY, question, overall, summary["n_decisive"] > 0)


def _changes(changes: pd.DataFrame) -> pd.DataFrame:
    frames = []
    for name, label in CHANGES.items():
        rows = changes.rename(columns={f"{name}_{k}": k for k in ("hypothesis", "p", "p_min", "size")}).rename(
            columns={"p": "p_value"}
        )
        question = [
            f"{a} and {b} differ in {label} on {d}"
            for a, b, d in zip(rows["a"], rows["b"], rows["dataset"], strict=True)
        ]
        frames.append(_frame(rows, MCNEMAR, question, False, ~rows["identical"].astype(bool)))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(HYPOTHESIS_SCHEMA))


def _languages(winloss: pd.DataFrame) -> pd.DataFrame:
    question = [
        f"{m}'s decisive share differs between {a} and {b} on the pairs decisive in both"
        for m, a, b in zip(winloss["model"], winloss["dataset_a"], winloss["dataset_b"], strict=True)
    ]
    return _frame(winloss, LANGUAGE_WINLOSS, question, False, (winloss["wins_a"] + winloss["wins_b"]) > 0)


READERS = {SUMMARY: _summary, MCNEMAR: _changes, LANGUAGE_WINLOSS: _languages}


def questions(results: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every test the study's tables mark, from its result files by path (:data:`READERS`), as the rows of
    :data:`plmfair.multiplicity.HYPOTHESIS_SCHEMA`."""
    frames = [READERS[path](frame) for path, frame in results.items() if len(frame)]
    if not frames:
        return pd.DataFrame(columns=list(HYPOTHESIS_SCHEMA))
    return pd.concat(frames, ignore_index=True)[list(HYPOTHESIS_SCHEMA)]
