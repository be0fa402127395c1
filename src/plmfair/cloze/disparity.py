"""The disparity of the four annotator groups, sigma_gd (the population standard deviation of their means), per
language and with the languages pooled: its permutation test, its critical value and the interval that inverts
the test over the group effects (docs/statistics.md, "σ_gd's interval").
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations
from typing import NamedTuple

import numpy as np
import pandas as pd

from plmfair.cloze.annotations import GROUPS
from plmfair.cloze.annotator_design import (
    AnnotatorDesign,
    cell_sums,
    group_means,
    group_sums,
)
from plmfair.cloze.group_tests import (
    ATTAINABLE_SCHEMA,
    DISPARITY_METRICS,
    MAX_SIGMA,
    attainable_columns,
    comparison_blocks,
    hypothesis_id,
    is_degenerate,
    permutation_rng,
)
from plmfair.cloze.measures import COLUMNS, listed
from plmfair.stats.permutation import (
    accepted_extent,
    permutation_p,
    permutation_threshold,
)

GROUP_DISPARITY_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' for the languages pooled",
    "metric": f"{listed(COLUMNS)} (percent)",
    "sigma_gd": "population standard deviation of the metric across the four groups (equation 1 of MozArt; "
    "percentage points)",
    "null_mean": "mean of sigma_gd when no group differs (its permutation distribution): sigma_gd is positive even "
    "then, from the sampling of annotators and sentences",
    "debiased": "sqrt(max(0, sigma_gd^2 - the mean of sigma_gd^2 when no group differs)): the disparity beyond "
    "what sampling alone gives",
    "ci_low": "interval of the groups' true disparity (the sigma_gd of their true means) at ci_level: the smallest "
    "sigma_gd of the group effects that the permutation test of those effects does not reject (0 exactly when the "
    "test of no disparity does not reject); at most 50, the largest sigma_gd of percentages (reached where the "
    "permutations cannot bound it)",
    "ci_high": "the largest such sigma_gd",
    "ci_level": "1 - alpha",
    "critical_value": "the value sigma_gd must exceed for its permutation test to reject at alpha (unadjusted): the "
    "quantile of its permutation distribution",
    "p_permutation": "permutation p of sigma_gd, labels permuted among all the annotators of each batch (the omnibus "
    "null: all four groups exchangeable)",
    **ATTAINABLE_SCHEMA,
    "informative": "false when every assignment gives the same sigma_gd (every score equal, say): p = 1 whatever the "
    "data",
    "hypothesis": "the test's id in the run's hypotheses (results/hypotheses.parquet)",
    "n_annotators": "annotators",
    "n_sentences": "sentences",
    "permutations": "assignments compared with the observed one: every distinct one when there are at most "
    "10,000 (the p-value is then exact), else random shuffles",
}


def _sigma_gd(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per row, the population standard deviation (x 100) of the groups' means (groups without an annotation left "
    "out)."""
    means = 100 * group_means(sums, counts)
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.nanmean((means - np.nanmean(means, axis=1, keepdims=True)) ** 2, axis=1))


def _sphere(dimensions: int, count: int) -> np.ndarray:
    """About ``count`` directions spread evenly over a half of the unit sphere in ``dimensions`` (1 to 3):
    a line's one direction, a half circle's angles, a Fibonacci lattice on a hemisphere (the other half
    is the same lines walked the other way)."""
    if dimensions == 1:
        return np.ones((1, 1))
    if dimensions == 2:
        angle = np.pi * (np.arange(count) + 0.5) / count
        return np.column_stack([np.cos(angle), np.sin(angle)])
    i = np.arange(count) + 0.5
    z = i / count  # the upper hemisphere, evenly in height (Archimedes: evenly in area)
    turn = np.pi * (1 + 5**0.5) * i
    radius = np.sqrt(1 - z**2)
    return np.column_stack([radius * np.cos(turn), radius * np.sin(turn), z])


# directions along which the disparity interval looks for the group effects the test accepts (the demo's
# pooled upper ends move by 0.5% or less between 60, 120, 400 and 1,600 of them: docs/statistics.md), and how
# many of them are swept at once (memory: directions x assignments x 8 events)
DISPARITY_DIRECTIONS = 120


DIRECTION_CHUNK = 25


def _disparity_interval(
    values: np.ndarray, design: AnnotatorDesign, labels: np.ndarray, *, alpha: float
) -> tuple[float, float]:
    """The interval of the groups' true disparity (sigma_gd of their true means, percentage points) that
    inverts sigma_gd's permutation test: every vector of group effects delta whose test is not rejected,
    the test of delta permuting the labels of the data with delta taken off each annotator's scores (its
    own group's), which makes them exchangeable when the effects are delta. The accepted effects are
    found along :data:`DISPARITY_DIRECTIONS` lines through no effect, each solved exactly
    (:func:`plmfair.stats.permutation.accepted_extent`), and their sigma_gd's range is the interval: it holds 0
    exactly when the test of no disparity does not reject, and covers at least as often as the test
    holds its level (a projection: conservative)."""
    g = len(GROUPS)
    n = np.bincount(design.annotator, minlength=len(design.group)).astype(float)
    y = np.bincount(design.annotator, weights=values, minlength=len(design.group))
    origin = np.eye(g)[design.group] * n[:, None]  # per annotator, its annotations in its own group's column
    sums, counts, *moved = cell_sums([y, n, *origin.T], labels, g)
    present = counts[0] > 0
    k = int(present.sum())
    if k < 2:
        return float("nan"), float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (sums / counts)[:, present]  # (assignments, k)
        share = (np.stack(moved, axis=2) / counts[:, :, None])[:, present][:, :, present]  # (assignments, k, k)
    # sum-zero directions, scaled so that sigma_gd(direction) = 1: spread evenly, and the contrasts an effect
    # is most often planted along (one group against the others, one group against another)
    basis = np.linalg.svd(np.eye(k) - 1 / k)[0][:, : k - 1]
    contrasts = [np.eye(k)[i] - 1 / k for i in range(k)]
    contrasts += [np.eye(k)[i] - np.eye(k)[j] for i, j in combinations(range(k), 2)]
    directions = np.column_stack([basis @ _sphere(k - 1, DISPARITY_DIRECTIONS).T, *contrasts])
    directions = directions / np.sqrt((directions**2).mean(axis=0))  # (k, D), each of sigma_gd 1

    def spread(v: np.ndarray) -> np.ndarray:  # population variance across the groups (axis 1)
        return ((v - v.mean(axis=1, keepdims=True)) ** 2).mean(axis=1)

    def covariance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return ((a - a.mean(axis=1, keepdims=True)) * (b - b.mean(axis=1, keepdims=True))).mean(axis=1)

    slopes = np.einsum("rgh,hd->rgd", share, directions)  # each assignment's adjusted means move by -r x this
    qa = spread(slopes) - 1.0  # observed: its own labels, so its means move by -r x direction, spread 1
    qb = -2 * (covariance(means[:, :, None], slopes) - covariance(means[:1, :, None], directions[None]))
    qc = spread(means) - spread(means[:1])
    qc = np.where(np.abs(qc) <= 1e-9 * max(float(spread(means[:1])[0]), 1e-300), 0.0, qc)
    qc = np.broadcast_to(qc[:, None], qa.shape)
    near_parts, far_parts = [], []
    for chunk in range(0, directions.shape[1], DIRECTION_CHUNK):  # lines x permutations x 8 events at a time
        part = slice(chunk, chunk + DIRECTION_CHUNK)
        near, far = accepted_extent(qa[1:, part].T, qb[1:, part].T, qc[1:, part].T, alpha=alpha)
        near_parts.append(near)
        far_parts.append(far)
    nearest, farthest = np.concatenate(near_parts), np.concatenate(far_parts)
    # no effect is accepted exactly when the test of no disparity does not reject (the data's own statistic)
    no_effect = (1 + np.sum(qc[1:, 0] >= 0)) / len(qc) >= alpha
    low = 0.0 if no_effect else float(np.nanmin(nearest))
    high = float(np.nanmax(farthest)) if np.isfinite(farthest).any() or np.isinf(farthest).any() else np.nan
    # scores lie in [0, 1], so the groups' true means do, and their sigma_gd is at most 0.5: the interval
    # holds no value it could not be (which leaves its coverage as it is)
    return 100 * min(low, MAX_SIGMA), 100 * min(high, MAX_SIGMA)


def group_disparity(
    scores: pd.DataFrame,
    *,
    cloze_set: str,
    alpha: float,
    permutations: int,
    seed: int,
) -> pd.DataFrame:
    """sigma_gd of P@1, P@5 and MRR across the four groups per model and language (and all pooled),
    with its debiased value, its null mean, its critical value, its permutation test and the interval
    of the true disparity that inverts it (:data:`GROUP_DISPARITY_SCHEMA`)."""
    rows = []
    for model, lang, metric, values, design, labels, sigma in _disparities(
        scores, permutations=permutations, seed=seed
    ):
        null_square = float(np.nanmean(sigma[1:] ** 2))
        degenerate = is_degenerate(sigma, two_sided=False)
        low, high = (np.nan, np.nan) if degenerate else _disparity_interval(values, design, labels, alpha=alpha)
        rows.append(
            {
                "model": model,
                "lang": lang,
                "metric": metric,
                "sigma_gd": sigma[0],
                "null_mean": float(np.nanmean(sigma[1:])),
                "debiased": float(np.sqrt(max(0.0, sigma[0] ** 2 - null_square))),
                "ci_low": low,
                "ci_high": high,
                "ci_level": 1 - alpha,
                "critical_value": permutation_threshold(sigma[1:], alpha=alpha),
                "p_permutation": permutation_p(sigma[:1], sigma[1:, None], two_sided=False)[0],
                **attainable_columns(sigma, alpha=alpha, two_sided=False),
                "informative": not degenerate,
                "hypothesis": hypothesis_id(cloze_set, "group_disparity", model, lang, metric),
                "n_annotators": len(design.group),
                "n_sentences": design.n_units,
                "permutations": len(labels) - 1,
            }
        )
    return pd.DataFrame(rows, columns=list(GROUP_DISPARITY_SCHEMA)).astype({"informative": bool})


class _Disparity(NamedTuple):
    """sigma_gd of one metric of a model in one language (or all pooled) under the groups observed (first) and
    under each permutation of them, with what it was computed from."""

    model: str
    lang: str
    metric: str
    values: np.ndarray
    design: AnnotatorDesign
    labels: np.ndarray
    sigma: np.ndarray


def _disparities(
    scores: pd.DataFrame,
    *,
    permutations: int,
    seed: int,
    pooled_only: bool = False,
    metrics: Sequence[str] | None = None,
) -> Iterator[_Disparity]:
    """Each block's sigma_gd and its permutation null (:class:`_Disparity`), the languages pooled only with
    ``pooled_only``, of the ``metrics`` named (None: every one of :data:`DISPARITY_METRICS`): the same
    permutations whether the table (:func:`group_disparity`) or the robustness analysis asks."""
    for model, lang, data in comparison_blocks(scores):
        if pooled_only and lang != "all":
            continue
        design = AnnotatorDesign.of(data)
        labels = design.assignments(permutations, permutation_rng(seed, lang, "all"))
        for column, metric in DISPARITY_METRICS.items():
            if metrics is None or metric in metrics:
                values = data[column].to_numpy(float)
                sigma = _sigma_gd(*group_sums(values, design, labels))
                yield _Disparity(model, lang, metric, values, design, labels, sigma)


def pooled_disparity(
    scores: pd.DataFrame, *, alpha: float, permutations: int, seed: int, metrics: Sequence[str] | None = None
) -> pd.DataFrame:
    """sigma_gd of each metric (``metrics``: those named, by the name :data:`DISPARITY_METRICS` gives; None:
    every one) with the languages pooled, per model, and its permutation test's p (the same permutations as
    :func:`group_disparity`'s pooled rows), without the interval: the statistic the robustness analysis
    recomputes many times (:mod:`plmfair.cloze.robustness`). ``differ``: p < alpha."""
    rows = []
    for block in _disparities(scores, permutations=permutations, seed=seed, pooled_only=True, metrics=metrics):
        p = float(permutation_p(block.sigma[:1], block.sigma[1:, None], two_sided=False)[0])
        informative = not is_degenerate(block.sigma, two_sided=False)
        rows.append(
            {
                "model": block.model,
                "metric": block.metric,
                "sigma_gd": block.sigma[0],
                "p_value": p,
                "differ": informative and p < alpha,
            }
        )
    return pd.DataFrame(rows, columns=["model", "metric", "sigma_gd", "p_value", "differ"])
