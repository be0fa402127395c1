"""Buckets of an attribute for the breakdowns: equal-size buckets of a number, the categories of a label, counts
capped at a top bucket, each with its printed range.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

N_BUCKETS = 4


def range_label(lo: float, hi: float) -> str:
    """'lo-hi' (or one value), as integers when both are whole numbers, else with 2 decimals."""
    whole = float(lo).is_integer() and float(hi).is_integer()
    fmt = "{:.0f}" if whole else "{:.2f}"
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}-{fmt.format(hi)}"


def equal_size_buckets(values: pd.Series, n: int = N_BUCKETS) -> pd.DataFrame:
    """``bucket`` label and ``bucket_order`` of every value: up to ``n`` buckets of as equal
    size as ties allow (cut at the quantiles), labelled with the values they hold."""
    codes = pd.qcut(values.astype(float), q=n, labels=False, duplicates="drop")
    codes = codes.fillna(0).astype(int) if len(values) else codes
    bounds = values.astype(float).groupby(codes).agg(["min", "max"])
    labels = {code: range_label(row["min"], row["max"]) for code, row in bounds.iterrows()}
    return pd.DataFrame({"bucket": codes.map(labels), "bucket_order": codes}, index=values.index)


def category_buckets(values: pd.Series, order: Iterable[str] | None = None) -> pd.DataFrame:
    """Bucket = the value itself, ordered by ``order`` (else sorted)."""
    values = values.astype("string").fillna("(none)")
    order = list(order) if order is not None else sorted(values.unique())
    order += sorted(set(values) - set(order))
    rank = {v: i for i, v in enumerate(order)}
    return pd.DataFrame({"bucket": values, "bucket_order": values.map(rank).astype(int)}, index=values.index)


def capped_buckets(counts: pd.Series, cap: int) -> pd.DataFrame:
    """Counts as buckets 1 .. cap-1 and 'cap+'."""
    counts = counts.astype(int)
    labels = counts.where(counts < cap, cap).map(lambda v: f"{v}+" if v == cap else str(v))
    return pd.DataFrame({"bucket": labels, "bucket_order": counts.clip(upper=cap)}, index=counts.index)
