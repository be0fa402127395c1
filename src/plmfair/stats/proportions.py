"""Tests and intervals of a share.

- :func:`binomial_summary`: exact two-sided binomial test of k successes in n against p0, with the Wilson score
  interval or the Clopper-Pearson interval, which inverts that exact test (scipy ``binomtest`` and ``proportion_ci``);
- :func:`smallest_sign_test_p`: the smallest p an exact sign test can give (whether it can reject at all);
  :func:`mover_mean_interval`: the interval of a mean of independent estimates (MOVER); :func:`fisher_exact`;
- :func:`cluster_score_test`: a share's test and interval when clusters, not units, are the independent draws;
- :func:`win_loss` and :func:`sign_test`: two conditions compared on the same units (win, loss, tie of their mean
  scores per unit) with an exact sign test, as dialect-robust evaluation compares dialects on the same examples
  (where the units are independent).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats


@dataclass(frozen=True)
class BinomialSummary:
    """k of n, their share, its interval at the confidence asked and the test's p (:func:`binomial_summary`)."""

    k: int
    n: int
    proportion: float
    ci_low: float
    ci_high: float
    p_value: float


def binomial_summary(
    k: int, n: int, *, p0: float = 0.5, confidence: float = 0.95, method: str = "wilson"
) -> BinomialSummary:
    """Proportion k/n with its interval (``method``: "wilson", or "exact" for Clopper-Pearson) and the
    exact two-sided binomial test against ``p0``.

    At p0 = 0.5 the binomial is symmetric, so scipy's two-sided p is twice the smaller tail and the
    Clopper-Pearson interval at ``confidence`` excludes 0.5 exactly when p < 1 - confidence (the
    Wilson interval inverts the score test instead and can disagree with the exact test near the
    boundary). With n = 0 every field but k and n is NaN.
    """
    if n == 0:
        nan = float("nan")
        return BinomialSummary(k, n, nan, nan, nan, nan)
    res = stats.binomtest(int(k), int(n), p0, alternative="two-sided")
    ci = res.proportion_ci(confidence_level=confidence, method=method)
    return BinomialSummary(int(k), int(n), k / n, float(ci.low), float(ci.high), float(res.pvalue))


def smallest_sign_test_p(n: int) -> float:
    """The smallest p the exact two-sided sign test (binomial, p0 = 0.5) can give with ``n`` decisive
    units: 2 x 0.5^n (1 without a unit). A test whose level is below it cannot reject, whatever the data."""
    return 1.0 if n <= 0 else min(1.0, 2 * 0.5**n)


def mover_mean_interval(
    estimates: Sequence[float], lows: Sequence[float], highs: Sequence[float]
) -> tuple[float, float]:
    """The interval of the mean of independent estimates from their own intervals by the method of
    variance estimates recovery (MOVER; Zou & Donner 2008, Newcombe 2011): for the sum,
    sum - sqrt(sum (e_i - l_i)^2) to sum + sqrt(sum (h_i - e_i)^2); divided by their number."""
    e, lo, hi = (np.asarray(v, dtype=float) for v in (estimates, lows, highs))
    total = e.sum()
    return (
        float((total - np.sqrt(np.sum((e - lo) ** 2))) / len(e)),
        float((total + np.sqrt(np.sum((hi - e) ** 2))) / len(e)),
    )


def fisher_exact(table: ArrayLike) -> float:
    """Fisher's exact two-sided test of a 2 x 2 table of counts (NaN when a margin is empty)."""
    t = np.asarray(table, dtype=int)
    if (t.sum(axis=0) == 0).any() or (t.sum(axis=1) == 0).any():
        return float("nan")
    return float(stats.fisher_exact(t).pvalue)


@dataclass(frozen=True)
class ClusterTest:
    """:func:`cluster_score_test`'s answer: the share, the two-sided p of the null share, the smallest p the
    test can give with these clusters (a lower bound), the interval that inverts the test, and the clusters."""

    proportion: float
    p_value: float
    p_min: float
    ci_low: float
    ci_high: float
    clusters: int


def cluster_score_test(
    values: np.ndarray, clusters: np.ndarray, *, p0: float = 0.5, confidence: float = 0.95
) -> ClusterTest:
    """The test of a share r = sum(values) / n of 0/1 values against ``p0`` when clusters of units (the pairs
    one writer wrote), not units, are the independent draws: the cluster-robust score test, its variance the
    clusters' squared deviations from the null, sum_g (v_g - p0 n_g)^2 over n^2 (unbiased under the null
    whatever the units of a cluster share), referred to Student's t with G - 1 degrees of freedom (Cameron &
    Miller 2015, for G clusters), and the interval of the p0 it does not reject (a quadratic's roots: inside
    [0, 1], defined at r = 0 and 1). Its statistic is at most sqrt(G) (Cauchy-Schwarz over the clusters), so
    p_min = 2 T_{G-1}(-sqrt(G)) bounds the smallest p it can give from below. Its level under writer effects
    on Nangia et al.'s writers is make bench-stats' (docs/statistics.md). NaN with fewer than two clusters."""
    codes, _ = pd.factorize(pd.Series(clusters, dtype="object"))
    g = int(codes.max()) + 1 if len(codes) else 0
    values = np.asarray(values, dtype=float)
    if g < 2:
        return ClusterTest(float(values.mean()) if len(values) else math.nan, *(math.nan,) * 4, clusters=g)
    v = np.bincount(codes, weights=values, minlength=g)
    w = np.bincount(codes, minlength=g).astype(float)
    n, ratio = w.sum(), v.sum() / w.sum()
    deviation = v - p0 * w
    squares = float(np.sum(deviation**2))
    t = (ratio - p0) * n / math.sqrt(squares) if squares > 0 else 0.0
    p_value = float(2 * stats.t.sf(abs(t), g - 1))
    p_min = float(2 * stats.t.sf(math.sqrt(g), g - 1))
    # the p0 with (r - p0)^2 n^2 <= q^2 sum_g (v_g - p0 n_g)^2: a p0^2 + b p0 + c <= 0
    q2 = float(stats.t.ppf(0.5 + confidence / 2, g - 1)) ** 2
    a = n**2 - q2 * np.sum(w**2)
    b = -2 * (ratio * n**2 - q2 * np.sum(v * w))
    c = ratio**2 * n**2 - q2 * np.sum(v**2)
    if a <= 0:  # too few clusters for the interval to close: every share
        low, high = 0.0, 1.0
    else:
        root = math.sqrt(max(b * b - 4 * a * c, 0.0))
        low, high = max((-b - root) / (2 * a), 0.0), min((-b + root) / (2 * a), 1.0)
    return ClusterTest(float(ratio), p_value, p_min, float(low), float(high), clusters=g)


def sign_test(wins_a: int, wins_b: int) -> tuple[float, float]:
    """Exact binomial (sign) test of ``wins_a`` among ``wins_a + wins_b`` against p = 0.5:
    (two-sided p, one-sided p for the alternative that a wins more). Without any win, (1, 1)."""
    n = wins_a + wins_b
    if n == 0:
        return 1.0, 1.0
    two = stats.binomtest(int(wins_a), n, 0.5, alternative="two-sided").pvalue
    one = stats.binomtest(int(wins_a), n, 0.5, alternative="greater").pvalue
    return float(two), float(one)


def win_loss(
    values: pd.DataFrame, *, unit: Sequence[str], condition: str, value: str, pairs: Sequence[tuple[str, str]]
) -> pd.DataFrame:
    """Compare conditions on the same units, as dialect-robust evaluation compares dialects.

    For every unit (a sentence, a pair) each condition's score is the mean of ``value`` over
    its rows of that unit; for each pair of conditions (a, b), over the units both have:
    n_units, wins_a (a's mean higher), wins_b, ties, and the sign test of wins_a among the
    decisive units (p_two_sided; p_one_sided for "a wins more"). With no shared unit the
    p-values are NaN (nothing to test); with only ties they are 1.
    """
    means = values.groupby([*unit, condition], sort=False)[value].mean().unstack(condition)
    rows = []
    for a, b in pairs:
        both = means.reindex(columns=[a, b]).dropna()
        wins_a, wins_b = int((both[a] > both[b]).sum()), int((both[a] < both[b]).sum())
        two, one = sign_test(wins_a, wins_b) if len(both) else (float("nan"), float("nan"))
        rows.append(
            {
                "a": a,
                "b": b,
                "n_units": len(both),
                "wins_a": wins_a,
                "wins_b": wins_b,
                "ties": len(both) - wins_a - wins_b,
                "p_two_sided": two,
                "p_one_sided": one,
            }
        )
    return pd.DataFrame(rows, columns=["a", "b", "n_units", "wins_a", "wins_b", "ties", "p_two_sided", "p_one_sided"])
