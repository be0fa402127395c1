"""How a table marks its tests: the run's hypotheses (``results/hypotheses.parquet``,
:data:`plmfair.multiplicity.DECIDED_SCHEMA`) joined to the rows that print them.

A row's test is in the confirmatory family (a primary question, Holm) or the secondary one
(Benjamini-Yekutieli over the whole report), or it is untestable (its smallest attainable p cannot reach
its family's threshold, or its design cannot support its level: ``limit``) or uninformative (a degenerate null
distribution). A tested row prints its
adjusted p with ``*`` when it is below alpha; an untested one prints neither a mark nor an interval, and
says why. An interval is the test's own at 1 - alpha, so a marked row's interval excludes the null value;
one that excludes it without a mark is significant before the adjustment only ("nominal").
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from plmfair.errors import DataError
from plmfair.rendering.numbers import p_value

TESTED = ("confirmatory", "secondary")
DECISION_COLUMNS = (
    "family",
    "procedure",
    "p_adjusted",
    "significant",
    "nominal",
    "p_min",
    "size",
    "limit",
    "threshold",
    "alpha",
)


def decisions(frame: pd.DataFrame, hypotheses: pd.DataFrame, *, hypothesis: str = "hypothesis") -> pd.DataFrame:
    """The decision on each row's test (:data:`DECISION_COLUMNS`, aligned with ``frame``); a row whose
    test the hypotheses do not hold is an error naming it (hypotheses older than their results)."""
    ids = frame[hypothesis].astype(str)
    known = hypotheses.set_index("hypothesis")
    missing = sorted(set(ids) - set(known.index))
    if missing:
        raise DataError(
            f"the run's hypotheses hold no test {missing[:3]}{' ...' if len(missing) > 3 else ''}: it is older "
            "than the results it should adjust; rerun the workflow (its hypotheses job)"
        )
    return known.loc[ids, list(DECISION_COLUMNS)].set_index(frame.index)


def note(row: pd.Series) -> str:
    """Why a row carries no mark where that is not the test's verdict: untestable, uninformative or nominal."""
    if row["family"] == "untestable" and row["limit"]:
        return f"untestable ({row['limit']})"
    if row["family"] == "untestable":
        # each printed on its own side of the other (0.0093 is not < 0.0092, where both would round to 0.009)
        smallest = p_value(row["p_min"], alpha=row["alpha"], keep=[row["threshold"]])
        limit = (
            ""
            if pd.isna(row["threshold"])
            else f" < {p_value(row['threshold'], alpha=row['alpha'], keep=[row['p_min']])}"
        )
        return f"untestable (smallest attainable p {smallest}, not{limit})"
    if row["family"] == "uninformative":
        return "uninformative (every assignment gives the same statistic)"
    if row["nominal"]:
        return "nominal only (not after the run's adjustment)"
    return ""


def add_decisions(
    out: pd.DataFrame,
    frame: pd.DataFrame,
    hypotheses: pd.DataFrame,
    *,
    hypothesis: str = "hypothesis",
    untested: Iterable[str] = (),
    label: str = "p adjusted",
    prefix: str = "",
) -> dict:
    """Add to ``out`` (a table built from ``frame``, row for row) the adjusted p (``label``, marked
    where significant), the test's family and a note (:func:`note`); the ``untested`` columns (an
    interval's ends) are blanked where the row is not tested. Returns the marks of its
    :class:`plmfair.rendering.table_format.Display`."""
    decided = decisions(frame, hypotheses, hypothesis=hypothesis)
    tested = decided["family"].isin(TESTED).to_numpy()
    for column in untested:
        out[column] = out[column].where(tested)
    out[f"{prefix}family"] = decided["family"].to_numpy()
    out[label] = decided["p_adjusted"].to_numpy()
    significant = f"{prefix}significant"
    out[significant] = decided["significant"].to_numpy(dtype=bool)
    out[f"{prefix}note"] = [note(r) for _, r in decided.iterrows()]
    return {label: significant}
