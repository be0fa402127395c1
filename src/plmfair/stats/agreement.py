"""The agreement of raters ranking the same items: :func:`kendalls_w`, and :func:`ranking_agreement`, it for items
ranked by shares, with a conservative interval from the shares' simultaneous intervals.
"""

from __future__ import annotations

import graphlib
import math

import numpy as np
from scipy import stats

from plmfair.stats.proportions import binomial_summary


def kendalls_w(table: np.ndarray) -> float:
    """Kendall's W of raters ranking items, ``table`` (items x raters) of the values they rank by: tied values
    share their mean rank and are corrected for, W = 12 S / (m^2 (n^3 - n) - m T) (Kendall & Babington Smith
    1939) for n items, m raters, S the squared deviations of the items' rank sums and T the raters' sum of
    t^3 - t over groups of t ties (scipy ``tiecorrect`` gives each rater's); it is Friedman's chi2 / (m (n - 1)).
    NaN with fewer than 3 items or 2 raters, a missing value, or every rater tying every item."""
    n, m = table.shape
    if n < 3 or m < 2 or not np.isfinite(table).all():
        return float("nan")
    ranks = stats.rankdata(table, axis=0)
    sums = ranks.sum(axis=1)
    spread = float(((sums - sums.mean()) ** 2).sum())
    ties = sum((1 - stats.tiecorrect(ranks[:, rater])) * (n**3 - n) for rater in range(m))
    denominator = m**2 * (n**3 - n) - m * ties
    return 12 * spread / denominator if denominator > 0 else float("nan")


def _rank_ranges(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ranks each item can take under each rater when its value may lie anywhere in its interval: from 1
    plus the items certainly below it to n minus those certainly above (``low``, ``high``: items x raters)."""
    n = low.shape[0]
    below = (high[None, :, :] < low[:, None, :]).sum(axis=1)  # [i, p]: items j whose interval lies under i's
    above = (low[None, :, :] > high[:, None, :]).sum(axis=1)
    return 1 + below, n - above


def ranking_agreement(decisive: np.ndarray, preferring: np.ndarray, *, confidence: float) -> tuple[float, float, float]:
    """Kendall's W (:func:`kendalls_w`) of raters ranking items by a share (``preferring`` / ``decisive``,
    items x raters), with a conservative interval at ``confidence`` of the population shares' W: every share's
    Clopper-Pearson interval at the Bonferroni level over the items x raters cells, so that all hold the true
    shares together with at least that probability; then the W of every ranking those intervals allow lies
    between the bounds returned. The upper bound is 1 where one order of the items fits every rater's intervals,
    else the largest W the rank ranges allow; the lower one the smallest, each rater's ranks relaxed to their
    ranges (a bound, not the exact extreme: the interval is conservative, its coverage measured by make
    bench-stats). Returns (W, low, high); NaN with fewer than 3 items or 2 raters."""
    n, m = decisive.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        w = kendalls_w(preferring / decisive)
    if not math.isfinite(w):
        return w, float("nan"), float("nan")
    cell = 1 - (1 - confidence) / (n * m)
    bounds = [
        binomial_summary(int(k), int(d), confidence=cell, method="exact")
        for k, d in zip(preferring.ravel(), decisive.ravel(), strict=True)
    ]
    low = np.array([b.ci_low for b in bounds]).reshape(n, m)
    high = np.array([b.ci_high for b in bounds]).reshape(n, m)
    first, last = _rank_ranges(low, high)
    lowest, highest = first.sum(axis=1), last.sum(axis=1)  # each item's rank sum, over the raters
    centre, scale = m * (n + 1) / 2, m**2 * (n**3 - n) / 12
    # the spread of the rank sums is a sum of one convex term per item: each term is least at the point of its
    # range nearest the centre and largest at the range's farther end
    least = float(((np.clip(centre, lowest, highest) - centre) ** 2).sum()) / scale
    largest = float(np.maximum((lowest - centre) ** 2, (highest - centre) ** 2).sum()) / scale
    return w, min(least, w), 1.0 if _one_order_fits(low, high) else max(min(largest, 1.0), w)


def _one_order_fits(low: np.ndarray, high: np.ndarray) -> bool:
    """Whether one order of the items is consistent with every rater's intervals: no item certainly below
    another under one rater and certainly above it under another, nor a longer cycle (the graph of "certainly
    below" has a topological order: stdlib ``graphlib``)."""
    before: np.ndarray = np.any(high[:, None, :] < low[None, :, :], axis=2)  # [i, j]: i certainly below j
    graph = {j: {int(i) for i in np.flatnonzero(before[:, j])} for j in range(len(low))}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError:
        return False
    return True
