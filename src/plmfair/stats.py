"""Significance tests and intervals used across the studies.

- :func:`binomial_summary`: exact two-sided binomial test of k successes in n against p0,
  with the Wilson score interval (scipy ``binomtest`` and ``proportion_ci(method="wilson")``).
- :func:`bonferroni`: Bonferroni adjustment, min(1, p x m).
- :func:`mcnemar_exact`: exact McNemar test on paired binary outcomes: the two-sided binomial
  test of b against b + c discordant pairs with p = 0.5; :func:`paired_mcnemar` runs it for
  every two conditions on the items they share (joined on item id).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats


@dataclass(frozen=True)
class BinomialSummary:
    k: int
    n: int
    proportion: float
    ci_low: float
    ci_high: float
    p_value: float


def binomial_summary(k: int, n: int, *, p0: float = 0.5, confidence: float = 0.95) -> BinomialSummary:
    """Proportion k/n with its Wilson interval and the exact two-sided binomial test against ``p0``.

    With n = 0 every field but k and n is NaN.
    """
    if n == 0:
        nan = float("nan")
        return BinomialSummary(k, n, nan, nan, nan, nan)
    res = stats.binomtest(int(k), int(n), p0, alternative="two-sided")
    ci = res.proportion_ci(confidence_level=confidence, method="wilson")
    return BinomialSummary(int(k), int(n), k / n, float(ci.low), float(ci.high), float(res.pvalue))


def bonferroni(p_values: Sequence[float]) -> np.ndarray:
    """Bonferroni-adjusted p-values over the non-missing entries (NaN stays NaN)."""
    p = np.asarray(p_values, dtype=float)
    m = int(np.sum(~np.isnan(p)))
    return np.minimum(1.0, p * m)


@dataclass(frozen=True)
class McNemar:
    b: int  # first positive, second negative
    c: int  # first negative, second positive
    p_value: float


def mcnemar_exact(first: Sequence[bool], second: Sequence[bool]) -> McNemar:
    """Exact McNemar test of two paired binary outcomes (same items, same order)."""
    a = np.asarray(first, dtype=bool)
    b_ = np.asarray(second, dtype=bool)
    if a.shape != b_.shape:
        raise ValueError("paired outcomes must have the same length")
    b = int(np.sum(a & ~b_))
    c = int(np.sum(~a & b_))
    p = 1.0 if b + c == 0 else float(stats.binomtest(b, b + c, 0.5, alternative="two-sided").pvalue)
    return McNemar(b, c, p)


def paired_mcnemar(outcomes: Mapping[str, pd.Series]) -> pd.DataFrame:
    """Exact McNemar test for every two conditions (sorted by name) on the items both have.

    ``outcomes`` maps a condition (a model, a language) to a boolean Series indexed by item
    id. Columns: a, b, n (shared items), score_a, score_b (percent of True on those items),
    a_only, b_only (discordant items), p_value, p_adjusted (Bonferroni across the rows).
    """
    rows = []
    for a, b in combinations(sorted(outcomes), 2):
        sa, sb = outcomes[a], outcomes[b]
        ids = sa.index[sa.index.isin(sb.index)]
        ba, bb = sa.loc[ids].to_numpy(dtype=bool), sb.loc[ids].to_numpy(dtype=bool)
        res = mcnemar_exact(ba, bb)
        n = len(ids)
        rows.append({
            "a": a, "b": b, "n": n,
            "score_a": 100 * ba.mean() if n else float("nan"), "score_b": 100 * bb.mean() if n else float("nan"),
            "a_only": res.b, "b_only": res.c, "p_value": res.p_value,
        })
    out = pd.DataFrame(rows, columns=["a", "b", "n", "score_a", "score_b", "a_only", "b_only", "p_value"])
    out["p_adjusted"] = bonferroni(out["p_value"].to_numpy()) if len(out) else []
    return out
