"""Permutation tests: :func:`permutation_p` and :func:`assignment_p`, permutation p-values; :func:`attainable`,
the smallest p and the size a test can have on its design; :func:`inverted_permutation_interval` and
:func:`accepted_shifts`, the shifts a permutation test does not reject (:func:`accepted_extent`: how near and
how far from 0 they reach along many lines at once); :func:`permutation_threshold`, the value an observed
statistic must exceed to be significant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def permutation_p(
    observed: np.ndarray,
    null: np.ndarray,
    *,
    two_sided: bool = True,
    secondary: Sequence[tuple[np.ndarray, np.ndarray]] = (),
) -> np.ndarray:
    """Permutation p-values, (1 + #{null at least as extreme as observed}) / (1 + B), per column of
    ``null`` (B permutations x statistics); |statistic| compared when ``two_sided``. NaN where the
    observed statistic is NaN. Ties count as extreme (floating-point ties within 1e-12), unless
    ``secondary`` statistics, (observed, null) pairs of the same shapes, break them in turn: a
    permutation tied on every statistic before one is as extreme when that one is larger, and a tie
    on all of them counts. Any statistic keeps the test exact; a finer one keeps a coarse primary
    statistic (net wins, or a gap of a 0/1 metric) from counting most permutations as ties."""
    extreme = None
    # from the last statistic, whose ties count, to the first, which decides before the others
    for stat, stat_null in reversed([(observed, null), *secondary]):
        stat, stat_null = np.asarray(stat, dtype=float), np.asarray(stat_null, dtype=float)
        if two_sided:
            stat, stat_null = np.abs(stat), np.abs(stat_null)
        above = stat_null > stat[None, :] + 1e-12
        tied = np.abs(stat_null - stat[None, :]) <= 1e-12
        extreme = above | tied if extreme is None else above | (tied & extreme)
    assert extreme is not None  # the primary statistic's, at least
    p = (1 + extreme.sum(axis=0)) / (1 + np.asarray(null).shape[0])
    return np.where(np.isnan(np.asarray(observed, dtype=float)), np.nan, p)


@dataclass(frozen=True)
class AcceptedShifts:
    """The shifts a permutation test does not reject: their hull ``[low, high]`` (-inf or inf where the
    permutations cannot bound it; NaN when the statistic is) and whether they form one interval
    (``connected``: false when ties accept an isolated shift, or a shift inside the hull is rejected)."""

    low: float
    high: float
    connected: bool


def accepted_shifts(qa: np.ndarray, qb: np.ndarray, qc: np.ndarray, *, alpha: float) -> AcceptedShifts:
    """The shifts t a permutation test does not reject when each permutation's "at least as extreme as the
    data" is the quadratic inequality qa t^2 + qb t + qc >= 0 (one row of coefficients per permutation): t
    is accepted when p(t) = (1 + #{extreme at t}) / (1 + B) >= alpha. Each permutation's extreme set is
    solved exactly and the count swept over the sorted roots (closed ends count, so a tie is extreme as
    :func:`permutation_p` counts it)."""
    qa, qb, qc = (np.asarray(q, dtype=float) for q in (qa, qb, qc))
    total = len(qa)
    keep = np.isfinite(qa) & np.isfinite(qb) & np.isfinite(qc)
    qa, qb, qc = qa[keep], qb[keep], qc[keep]
    start_parts: list[np.ndarray] = []  # closed intervals of t where a permutation counts as extreme
    end_parts: list[np.ndarray] = []

    def add(where: np.ndarray, lo: np.ndarray | float, hi: np.ndarray | float) -> None:
        start_parts.append(np.broadcast_to(lo, where.shape)[where])
        end_parts.append(np.broadcast_to(hi, where.shape)[where])

    tiny = 1e-12 * max(1.0, float(np.max(np.abs(qa), initial=0.0)))
    linear, up, down = np.abs(qa) <= tiny, qa > tiny, qa < -tiny
    with np.errstate(invalid="ignore", divide="ignore"):
        root = -qc / qb
        add(linear & (np.abs(qb) <= tiny) & (qc >= 0), -np.inf, np.inf)
        add(linear & (qb > tiny), root, np.inf)
        add(linear & (qb < -tiny), -np.inf, root)
        disc = qb**2 - 4 * qa * qc
        # a permutation whose statistic ties the observed one (qc = 0) has a root at exactly 0
        sq = np.where(qc == 0, np.abs(qb), np.sqrt(np.maximum(disc, 0)))
        r1, r2 = (-qb - sq) / (2 * qa), (-qb + sq) / (2 * qa)
        low, high = np.minimum(r1, r2), np.maximum(r1, r2)
        add(up & (disc <= 0), -np.inf, np.inf)
        add(up & (disc > 0), -np.inf, low)
        add(up & (disc > 0), high, np.inf)
        add(down & (disc >= 0), low, high)
    starts, ends = np.sort(np.concatenate(start_parts)), np.sort(np.concatenate(end_parts))
    points = np.unique(np.concatenate([starts, ends]))
    points = points[np.isfinite(points)]
    # the count on each point (closed ends count) and on each open segment between points
    at_point = np.searchsorted(starts, points, side="right") - np.searchsorted(ends, points, side="left")
    left_edges = np.concatenate([[-np.inf], points])
    in_segment = np.searchsorted(starts, left_edges, side="right") - np.searchsorted(ends, left_edges, side="right")

    def accepted(count: np.ndarray) -> np.ndarray:
        return (1 + count) / (1 + total) >= alpha

    ok_point, ok_segment = accepted(at_point), accepted(in_segment)
    # along the line: segment 0, point 0, segment 1, point 1, ..., segment n
    pieces = np.empty(len(points) + len(left_edges), dtype=bool)
    pieces[0::2], pieces[1::2] = ok_segment, ok_point
    where = np.flatnonzero(pieces)
    if not len(where):
        return AcceptedShifts(float("nan"), float("nan"), False)
    connected = bool(pieces[where[0] : where[-1] + 1].all())
    right_edges = np.concatenate([points, [np.inf]])
    lows = np.concatenate([points[ok_point], left_edges[ok_segment]])
    highs = np.concatenate([points[ok_point], right_edges[ok_segment]])
    return AcceptedShifts(float(lows.min()), float(highs.max()), connected)


def _extreme_sets(qa: np.ndarray, qb: np.ndarray, qc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where qa t^2 + qb t + qc >= 0, elementwise: at most two closed intervals per element, as starts and
    ends (shape (..., 2); NaN where there is no second interval, or none at all)."""
    nan, inf = np.nan, np.inf
    tiny = 1e-12 * np.maximum(1.0, np.abs(qa))
    linear, up, down = np.abs(qa) <= tiny, qa > tiny, qa < -tiny
    with np.errstate(invalid="ignore", divide="ignore"):
        root = -qc / qb
        disc = qb**2 - 4 * qa * qc
        sq = np.where(qc == 0, np.abs(qb), np.sqrt(np.maximum(disc, 0)))
        r1, r2 = (-qb - sq) / (2 * qa), (-qb + sq) / (2 * qa)
    low, high = np.minimum(r1, r2), np.maximum(r1, r2)
    flat = linear & (np.abs(qb) <= tiny)
    conditions = [
        flat & (qc >= 0),
        linear & (qb > tiny),
        linear & (qb < -tiny),
        up & (disc <= 0),
        up & (disc > 0),
        down & (disc >= 0),
    ]
    first_start = np.select(conditions, [-inf, root, -inf, -inf, -inf, low], nan)
    first_end = np.select(conditions, [inf, inf, root, inf, low, high], nan)
    second_start = np.where(up & (disc > 0), high, nan)
    second_end = np.where(up & (disc > 0), inf, nan)
    return np.stack([first_start, second_start], axis=-1), np.stack([first_end, second_end], axis=-1)


def accepted_extent(qa: np.ndarray, qb: np.ndarray, qc: np.ndarray, *, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """For each row of coefficients (lines x permutations; a permutation as extreme as the data at t where
    qa t^2 + qb t + qc >= 0, as in :func:`accepted_shifts`), the distance from 0 of the nearest and of the
    farthest t on the open segments between the extreme sets' ends that the test does not reject, (1 +
    count) / (1 + B) >= alpha (inf where unbounded, NaN where none is accepted). Isolated points are not
    looked at: along a line through the data's own effects, what a segment's end adds is the end itself."""
    starts, ends = _extreme_sets(qa, qb, qc)
    rows, total = qa.shape
    # an absent second interval starts and ends at +inf: it is never entered
    starts = np.sort(np.where(np.isnan(starts), np.inf, starts).reshape(rows, -1), axis=1)
    ends = np.sort(np.where(np.isnan(ends), np.inf, ends).reshape(rows, -1), axis=1)
    edges = np.sort(np.concatenate([starts, ends], axis=1), axis=1)
    near, far = np.full(rows, np.nan), np.full(rows, np.nan)
    for row in range(rows):
        points = np.unique(edges[row])
        points = points[np.isfinite(points)]
        left = np.concatenate([[-np.inf], points])
        right = np.concatenate([points, [np.inf]])
        # on the open segment after a point: the sets begun at or before it, less those ended at or before it
        counts = np.searchsorted(starts[row], left, side="right") - np.searchsorted(ends[row], left, side="right")
        accepted = (1 + counts) / (1 + total) >= alpha
        if not accepted.any():
            continue
        lo, hi = left[accepted], right[accepted]
        with np.errstate(invalid="ignore"):
            nearest = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
        near[row], far[row] = nearest.min(), np.maximum(np.abs(lo), np.abs(hi)).max()
    return near, far


def assignment_p(statistic: np.ndarray, *, two_sided: bool = True, secondary: Sequence[np.ndarray] = ()) -> np.ndarray:
    """The p :func:`permutation_p` would give each assignment were it the observed one (``statistic``: row 0
    observed, then the permutations; ``secondary`` statistics deciding ties in turn): #{assignments at least
    as extreme} / (1 + B). It depends on the data only through the permutation distribution, which is the
    same whichever assignment was observed."""
    keys = [np.asarray(v, dtype=float) for v in (statistic, *secondary)]
    if two_sided:
        keys = [np.abs(k) for k in keys]
    # equal to 1e-12 (as permutation_p compares), then ordered lexicographically: the first statistic first
    keys = [np.where(np.isfinite(k), np.round(k, 12), -np.inf) for k in keys]
    _, rank = np.unique(np.column_stack(keys), axis=0, return_inverse=True)
    rank = rank.ravel()
    at_least = len(rank) - np.searchsorted(np.sort(rank), rank, side="left")
    return at_least / len(rank)


@dataclass(frozen=True)
class Attainable:
    """What a permutation test can give on its design, whatever the data (:func:`attainable`)."""

    p_min: float
    size: float


def attainable(
    statistic: np.ndarray, *, alpha: float, two_sided: bool = True, secondary: Sequence[np.ndarray] = ()
) -> Attainable:
    """From every assignment's p (:func:`assignment_p`): the smallest p :func:`permutation_p` can give on this
    design, #{assignments tied with the most extreme} / (1 + B), which counts what the design forces (the
    mirror image of every assignment when the two groups compared are as many in each batch: their swap gives
    the same |gap|, so with two annotators a group 2 / 6, not 1 / 6); and the test's size at ``alpha``, the
    share of assignments whose p is below it: the rate at which it rejects when its null holds, below alpha
    where ties crowd the distribution (every annotator of a group without a hit at 1, say)."""
    p = assignment_p(statistic, two_sided=two_sided, secondary=secondary)
    return Attainable(float(p.min()), float(np.mean(p < alpha)))


def inverted_permutation_interval(statistic: np.ndarray, slope: np.ndarray, *, alpha: float) -> AcceptedShifts:
    """The shifts delta a two-sided permutation test does not reject, when the statistic of the data
    shifted by delta is linear in it: ``statistic - delta * slope`` per assignment (row 0 observed,
    the others permutations; for a gap, delta subtracted from one group's scores). A permutation is as
    extreme as the data at delta when |c_i - delta d_i| >= |c_0 - delta d_0| (:func:`accepted_shifts`),
    so the hull excludes 0 exactly when the test of no shift rejects at alpha, unless the accepted shifts
    are not one interval (``connected`` false). NaN when the statistic is."""
    c0, d0 = float(statistic[0]), float(slope[0])
    if not np.isfinite(c0):
        return AcceptedShifts(float("nan"), float("nan"), False)
    c, d = np.asarray(statistic[1:], dtype=float), np.asarray(slope[1:], dtype=float)
    keep = np.isfinite(c) & np.isfinite(d)
    c, d = np.where(keep, c, np.nan), np.where(keep, d, np.nan)  # a NaN draw counts in B, never as extreme
    shifts = accepted_shifts(d**2 - d0**2, -2 * (c * d - c0 * d0), c**2 - c0**2, alpha=alpha)
    if np.isnan(shifts.low):  # every shift rejected (cannot happen at the estimate, where c_0 - delta d_0 = 0)
        return AcceptedShifts(c0 / d0, c0 / d0, True)
    return shifts


def permutation_threshold(null: np.ndarray, *, alpha: float) -> float:
    """The value an upper-tailed statistic must exceed (by more than 1e-12) for p < alpha,
    p = (1 + #{null >= observed - 1e-12}) / (1 + B) (:func:`permutation_p`): the (m + 1)-th largest null
    value, m the most null values at least as large that still give p < alpha (inf when no observed value
    can be significant with B permutations)."""
    values = np.asarray(null, dtype=float)
    b = len(values)  # a NaN draw counts in B but is never as extreme, as in permutation_p
    ranked = np.sort(values[~np.isnan(values)])[::-1]
    counts = np.arange(b + 1)
    allowed = int(((1 + counts) / (1 + b) < alpha).sum()) - 1
    if allowed < 0:
        return float("inf")
    return float(ranked[allowed]) if allowed < len(ranked) else float("-inf")
