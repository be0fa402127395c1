"""Significance tests and intervals used across the studies.

- :func:`binomial_summary`: exact two-sided binomial test of k successes in n against p0,
  with the Wilson score interval or the Clopper-Pearson interval, which inverts that exact test
  (scipy ``binomtest`` and ``proportion_ci``).
- :func:`smallest_sign_test_p`: the smallest p an exact sign test can give (whether it can reject at all);
  :func:`mover_mean_interval`: the interval of a mean of independent estimates (MOVER);
  :func:`fisher_exact`; :func:`cluster_score_test`: a share's test and interval when clusters, not units,
  are the independent draws;
- paired binary outcomes (up, down or unchanged items; a CrowS-Pairs pair's preference, two scorings of
  the same pairs), whose difference (up - down) / n is a difference of paired proportions (Tango 1998;
  Agresti 2013, 10.1): :func:`tango_interval`, Tango's score interval, unconditional on the unchanged
  items and never of zero width; :func:`mid_p_mcnemar`, the mid-p McNemar test, whose level stays near
  alpha where the exact test's falls far below it (Fagerland, Lydersen & Laake 2013), and
  :func:`mid_p_smallest`, its smallest attainable p;
- :func:`win_loss` and :func:`sign_test`: two conditions compared on the same units (win,
  loss, tie of their mean scores per unit) with an exact sign test, as dialect-robust
  evaluation compares dialects on the same examples (where the units are independent);
- :func:`kendalls_w`: the agreement of raters ranking the same items; :func:`ranking_agreement`: it for
  items ranked by shares, with a conservative interval from the shares' simultaneous intervals;
- :func:`crossed_mixed_model`: REML with one random intercept, or two crossed ones (sentence and annotator), fitted
  per block of the design (:func:`design_blocks`), checked to be at the optimum, its fixed effects
  and standard errors those of lme4's ``lmer``;
- :func:`permutation_p`: permutation p-values; :func:`inverted_permutation_interval` and
  :func:`accepted_shifts`: the shifts a permutation test does not reject (:func:`accepted_extent`: how
  near and how far from 0 they reach along many lines at once); :func:`permutation_threshold`: the value
  an observed statistic must exceed to be significant.

Families and adjusted p-values are :mod:`plmfair.multiplicity`'s.
"""

from __future__ import annotations

import graphlib
import logging
import math
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BinomialSummary:
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


def mover_mean_interval(estimates: Sequence[float], lows: Sequence[float], highs: Sequence[float]):
    """The interval of the mean of independent estimates from their own intervals by the method of
    variance estimates recovery (MOVER; Zou & Donner 2008, Newcombe 2011): for the sum,
    sum - sqrt(sum (e_i - l_i)^2) to sum + sqrt(sum (h_i - e_i)^2); divided by their number."""
    e, lo, hi = (np.asarray(v, dtype=float) for v in (estimates, lows, highs))
    total = e.sum()
    return (
        float((total - np.sqrt(np.sum((e - lo) ** 2))) / len(e)),
        float((total + np.sqrt(np.sum((hi - e) ** 2))) / len(e)),
    )


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


def fisher_exact(table) -> float:
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


def _constrained_down(up, down, n, delta):
    """The maximum-likelihood probability of a -1 item when P(+1) - P(-1) = delta (Tango 1998, eq. 3);
    elementwise over arrays."""
    a = 2.0 * np.asarray(n, dtype=float)
    b = -up - down + (a - up + down) * delta
    c = -down * delta * (1.0 - delta)
    return (np.sqrt(np.maximum(b * b - 4.0 * a * c, 0.0)) - b) / (2.0 * a)


def tango_score(up, down, n, delta):
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
    m = 16, 0.016 at m = 7): the analysis plan leaves a row whose size is outside LEVEL_BAND untestable."""
    if moved <= 0:
        return 0.0
    up = np.arange(moved + 1)
    rejects = np.array([paired_change_p(int(k), moved - int(k)) < alpha for k in up])
    return float(stats.binom.pmf(up, moved, 0.5)[rejects].sum())


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


EFFECTS_COLUMNS = {
    "term": "fixed-effect term: Intercept, group[T.<group>] or lang[T.<lang>] (dataset[T.<name>] for CrowS-Pairs)",
    "reference": "the level the term is measured against",
    "estimate": "fixed-effect estimate (REML)",
    "std_err": "its standard error",
    "ci_low": "Wald 95% interval, lower bound (not printed: the Wald test's level is not shown on these designs)",
    "ci_high": "Wald 95% interval, upper bound",
    "p_value": "two-sided Wald p-value of the mixed model (not printed, and no mark: the same reason)",
    "n_obs": "rows the model was fitted on",
    "converged": "the optimiser converged at the REML optimum and every standard error is finite (kept either way)",
}


@dataclass(frozen=True)
class MixedEffects:
    """Fixed effects of a linear mixed model: one row per term (term, estimate, std_err,
    ci_low, ci_high, p_value), whether the fit converged, and the random-effect variances
    (with the residual's)."""

    terms: pd.DataFrame
    converged: bool
    variances: dict[str, float]
    message: str


def design_blocks(left: Sequence, right: Sequence) -> np.ndarray:
    """The connected components of the bipartite graph whose edges are ``(left[i], right[i])``
    (sentences and the annotators who answered them): one block index per edge. In MozArt each
    annotator answers one batch of sentences, so the blocks are the batches; random effects of
    different blocks are independent, which makes a crossed model cheap to fit."""
    # scipy is heavy: imported where a test is computed
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    left_codes, left_levels = pd.factorize(pd.Series(left, dtype="object"))
    right_codes, right_levels = pd.factorize(pd.Series(right, dtype="object"))
    n_left = len(left_levels)
    size = n_left + len(right_levels)
    graph = coo_matrix((np.ones(len(left_codes)), (left_codes, n_left + right_codes)), shape=(size, size))
    _, labels = connected_components(graph, directed=False)
    return labels[left_codes]


def _gls(model, variances: Mapping[str, float], scale: float, blocks: np.ndarray, levels: Mapping[str, np.ndarray]):
    """Fixed effects and their covariance by generalised least squares with the fitted variances,
    V = sum_k tau_k Z_k Z_k' + sigma^2 I, block by block: lme4's ``fixef`` and ``vcov``."""
    x, y = model.exog, model.endog
    xtvx = np.zeros((x.shape[1], x.shape[1]))
    xtvy = np.zeros(x.shape[1])
    for block in np.unique(blocks):
        rows = np.flatnonzero(blocks == block)
        v = scale * np.eye(len(rows))
        for name, codes in levels.items():
            same = codes[rows][:, None] == codes[rows][None, :]
            v += variances[name] * same
        solved = np.linalg.solve(v, np.column_stack([x[rows], y[rows]]))
        xtvx += x[rows].T @ solved[:, :-1]
        xtvy += x[rows].T @ solved[:, -1]
    cov = np.linalg.inv(xtvx)
    return cov @ xtvy, cov


def _at_optimum(model, params, *, step: float = 0.01, tol: float = 1e-6) -> bool:
    """No variance component moved by ``step`` (relative) raises the profile REML log-likelihood by
    more than ``tol``; a component at zero is only moved up."""
    # statsmodels is heavy: only the mixed models need it
    from statsmodels.regression.mixed_linear_model import MixedLMParams

    base = model.loglike(params, profile_fe=True)
    for k in range(len(params.vcomp)):
        for factor in (1 - step, 1 + step) if params.vcomp[k] > 1e-8 else (1.0,):
            vcomp = params.vcomp.copy()
            vcomp[k] = vcomp[k] * factor if vcomp[k] > 1e-8 else step
            moved = MixedLMParams.from_components(fe_params=params.fe_params, cov_re=params.cov_re, vcomp=vcomp)
            if model.loglike(moved, profile_fe=True) > base + tol:
                return False
    return True


def crossed_mixed_model(
    data: pd.DataFrame, formula: str, *, effects: Sequence[str], confidence: float = 0.95
) -> MixedEffects:
    """Fit ``formula`` with a random intercept for each column of ``effects`` (one, or two crossed,
    as ``(1|sentence) + (1|annotator)`` in lme4) by REML.

    The rows are split into the blocks of the design (:func:`design_blocks` of two effects; the
    levels of a single one), statsmodels ``MixedLM`` fits the effects as variance components within blocks with
    Powell's method then L-BFGS and, unless that reached the optimum, with its default optimisers
    too, keeping the better optimum. ``converged`` means the optimiser converged, the solution passes
    :func:`_at_optimum` and every standard error is finite. Fixed effects, standard errors, Wald
    intervals and p-values are those of generalised least squares at the fitted variances
    (lme4's ``fixef`` and ``vcov``); ``variances`` holds each effect's variance and the residual's."""

    # statsmodels is heavy: only the mixed models need it
    import statsmodels.formula.api as smf

    if len(effects) not in (1, 2):
        raise ValueError(f"one or two random intercepts, not {len(effects)}")
    blocks = (
        design_blocks(data[effects[0]], data[effects[1]]) if len(effects) == 2 else pd.factorize(data[effects[0]])[0]
    )
    model = smf.mixedlm(
        formula, data, groups=blocks, re_formula="0", vc_formula={name: f"0 + C({name})" for name in effects}
    )
    names = list(model.exog_names)
    if np.ptp(model.endog) == 0:  # every score the same (a model that never hits): nothing to fit
        nan = np.full(len(names), np.nan)
        terms = pd.DataFrame(
            {"term": names, "estimate": nan, "std_err": nan, "ci_low": nan, "ci_high": nan, "p_value": nan}
        )
        return MixedEffects(terms, False, {}, "no variation in the outcome")
    fits, notes = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in (["powell", "lbfgs"], None):  # statsmodels' default optimisers only if needed
            try:
                fits.append(model.fit(reml=True, method=method))
            except (ValueError, np.linalg.LinAlgError) as exc:
                notes.append(f"{method or 'default'} failed: {exc}")
                continue
            if fits[-1].converged and _at_optimum(model, fits[-1].params_object):
                break
        best = max(fits, key=lambda f: f.llf if np.isfinite(f.llf) else -np.inf) if fits else None
    if not fits:
        nan = np.full(len(names), np.nan)
        terms = pd.DataFrame(
            {"term": names, "estimate": nan, "std_err": nan, "ci_low": nan, "ci_high": nan, "p_value": nan}
        )
        return MixedEffects(terms, False, {}, "; ".join(notes) or "no fit")
    fit = best
    assert fit is not None  # some fit, the best of them
    variances = dict(zip(model.exog_vc.names, np.asarray(fit.vcomp, dtype=float).tolist(), strict=True))
    levels = {name: pd.factorize(data[name])[0] for name in effects}
    try:
        beta, cov = _gls(model, variances, float(fit.scale), blocks, levels)
        se = np.sqrt(np.diag(cov))
    except np.linalg.LinAlgError as exc:
        beta, se = np.asarray(fit.fe_params, dtype=float), np.full(len(names), np.nan)
        notes.append(f"fixed-effect covariance singular: {exc}")
    z = stats.norm.ppf(0.5 + confidence / 2)
    terms = pd.DataFrame(
        {
            "term": names,
            "estimate": beta,
            "std_err": se,
            "ci_low": beta - z * se,
            "ci_high": beta + z * se,
            "p_value": 2 * stats.norm.sf(np.abs(beta / se)),
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        optimum = _at_optimum(model, fit.params_object)
    if not optimum:
        notes.append("not at the REML optimum")
    converged = bool(fit.converged) and optimum and bool(np.isfinite(se).all())
    return MixedEffects(terms, converged, {**variances, "residual": float(fit.scale)}, "; ".join(notes))


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

    def add(where, lo, hi):
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

    def accepted(count):
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


def term_name(raw: str) -> str:
    """``C(group, Treatment(reference='MN'))[T.FN]`` -> ``group[T.FN]``."""
    return re.sub(r"^C\((\w+).*?\)\[", r"\1[", raw)


def effects_rows(fit, *, reference: Mapping[str, str], context: str) -> pd.DataFrame:
    """The fixed effects of a fit as rows (term names shortened, reference level of each term,
    converged), a warning logged when the fit did not converge."""
    if not fit.converged:
        log.warning(
            "%s: the mixed model did not converge (%s); its rows are kept with converged = false",
            context,
            fit.message or "no standard errors",
        )
    terms = fit.terms.assign(term=[term_name(t) for t in fit.terms["term"]])
    terms["reference"] = [reference.get(t.split("[")[0], reference.get("Intercept", "")) for t in terms["term"]]
    return terms.assign(converged=fit.converged)


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


def category_buckets(values: pd.Series, order=None) -> pd.DataFrame:
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
