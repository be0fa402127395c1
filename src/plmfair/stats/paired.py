"""Paired binary outcomes (up, down or unchanged items; a CrowS-Pairs pair's preference under two scorings of the
same pairs), whose difference (up - down) / n is a difference of paired proportions (Tango 1998; Agresti 2013,
10.1): :func:`tango_interval`, Tango's score interval, unconditional on the unchanged items and never of zero
width; :func:`mid_p_mcnemar`, the mid-p McNemar test, whose level stays near alpha where the exact test's falls far
below it (Fagerland, Lydersen & Laake 2013), and :func:`mid_p_smallest`, its smallest attainable p; the paired
change's test (:func:`paired_change_p`), its smallest p and its exact size given the items that moved.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

# a count or probability, or an array of them (the functions here work elementwise)
Elementwise = float | np.ndarray


def _constrained_down(up: Elementwise, down: Elementwise, n: Elementwise, delta: Elementwise) -> Any:
    """The maximum-likelihood probability of a -1 item when P(+1) - P(-1) = delta (Tango 1998, eq. 3);
    elementwise over arrays."""
    a = 2.0 * np.asarray(n, dtype=float)
    b = -up - down + (a - up + down) * delta
    c = -down * delta * (1.0 - delta)
    return (np.sqrt(np.maximum(b * b - 4.0 * a * c, 0.0)) - b) / (2.0 * a)


def tango_score(up: Elementwise, down: Elementwise, n: Elementwise, delta: Elementwise) -> Any:
    """Tango's score statistic of Delta = ``delta``: (up - down - n delta) over its standard error at the
    constrained maximum-likelihood cell probabilities; +inf or -inf where that error is 0. Elementwise over
    arrays (a float for scalars): the interval holds delta exactly when |score| is at most the normal
    quantile, which is how coverage is computed exactly (benchmarks/bench_stats.py)."""
    up, down, n = (np.asarray(x, dtype=float) for x in (up, down, n))
    variance = n * (2.0 * _constrained_down(up, down, n, delta) + delta * (1.0 - delta))
    diff = up - down - n * delta
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(variance > 0, diff / np.sqrt(np.maximum(variance, 1e-300)), np.sign(diff) * np.inf)
    score = np.where((variance <= 0) & (diff == 0), 0.0, score)
    return float(score) if score.ndim == 0 else score


def tango_interval(up: int, down: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Tango's score interval for (up - down) / n at ``confidence``: the Delta in [-1, 1] with |score| at
    most the normal quantile (an end at -1 or 1 when the score never reaches it there). NaN without an
    item."""
    if n <= 0:
        return math.nan, math.nan
    # scipy's root finder only where an interval is computed
    from scipy.optimize import brentq

    z = float(stats.norm.ppf(0.5 + confidence / 2))
    estimate = (up - down) / n

    def excess(delta: float, sign: float) -> float:
        return tango_score(up, down, n, delta) - sign * z

    ends = []
    for edge, sign in ((-1.0, 1.0), (1.0, -1.0)):
        # the score falls as delta rises: below the estimate it reaches +z, above it -z
        if excess(edge, sign) * sign <= 0 or estimate == edge:
            ends.append(edge)
            continue
        ends.append(brentq(excess, min(edge, estimate), max(edge, estimate), args=(sign,), xtol=1e-12, rtol=1e-12))
    return float(ends[0]) + 0.0, float(ends[1]) + 0.0


def mid_p_mcnemar(up: int, down: int) -> float:
    """Two-sided mid-p of the McNemar test of up against down: twice P(X < k) + P(X = k) / 2 for
    X ~ Binomial(up + down, 1/2) and k the smaller count, capped at 1; 1 without a non-zero item."""
    n = up + down
    if n == 0:
        return 1.0
    k = min(up, down)
    return float(min(1.0, 2.0 * (stats.binom.cdf(k - 1, n, 0.5) + 0.5 * stats.binom.pmf(k, n, 0.5))))


def mid_p_smallest(nonzero: int) -> float:
    """The smallest two-sided mid-p :func:`mid_p_mcnemar` can give with ``nonzero`` items moved: 0.5^n
    (every item one way); 1 with none."""
    return 1.0 if nonzero <= 0 else float(0.5**nonzero)


def paired_change_p(up: int, down: int) -> float:
    """The p of no change of a paired proportion (``up`` items rose, ``down`` fell): the larger of the mid-p
    McNemar test's and Tango's score test's (whose statistic at no change is (up - down) / sqrt(up + down),
    whatever the unchanged items), so that p < alpha only where Tango's interval excludes 0; 1 with none
    moved."""
    moved = up + down
    if moved == 0:
        return 1.0
    return max(mid_p_mcnemar(up, down), float(2 * stats.norm.sf(abs(up - down) / math.sqrt(moved))))


def paired_change_smallest(moved: int) -> float:
    """The smallest p :func:`paired_change_p` can give with ``moved`` items: both tests' at every item one way,
    the mid-p's 0.5^m and the score test's 2 Phi(-sqrt(m)), the larger (at m = 17 the score test's 3.7e-5)."""
    return max(mid_p_smallest(moved), float(2 * stats.norm.sf(math.sqrt(moved)))) if moved > 0 else 1.0


def paired_change_size(moved: int, *, alpha: float) -> float:
    """The size of :func:`paired_change_p` at ``alpha`` given ``moved`` items: the chance that it rejects when
    nothing changes (each moved item up or down with probability 1/2, the test a function of the split alone),
    exactly; 0 with none moved. A discrete test's size given m swings around alpha (0.070 at m = 8, 0.077 at
    m = 16, 0.016 at m = 7): the hypotheses leave a row whose size is outside LEVEL_BAND untestable."""
    if moved <= 0:
        return 0.0
    up = np.arange(moved + 1)
    rejects = np.array([paired_change_p(int(k), moved - int(k)) < alpha for k in up])
    return float(stats.binom.pmf(up, moved, 0.5)[rejects].sum())
