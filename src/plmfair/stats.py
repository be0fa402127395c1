"""Significance tests and intervals used across the studies.

- :func:`binomial_summary`: exact two-sided binomial test of k successes in n against p0,
  with the Wilson score interval or the Clopper-Pearson interval, which inverts that exact test
  (scipy ``binomtest`` and ``proportion_ci``).
- :func:`bonferroni`: Bonferroni adjustment, min(1, p x m).
- :func:`smallest_sign_test_p` and :func:`tarone_bonferroni`: which exact tests can reject at all, and
  Bonferroni over only those (Tarone 1990); :func:`mover_mean_interval`: the interval of a mean of
  independent estimates (MOVER); :func:`fisher_exact`; :func:`cluster_bootstrap_interval`: a ratio's
  interval when clusters, not units, are the independent draws;
- :func:`win_loss` and :func:`sign_test`: two conditions compared on the same units (win,
  loss, tie of their mean scores per unit) with an exact sign test, as dialect-robust
  evaluation compares dialects on the same examples (where the units are independent);
- :func:`crossed_mixed_model`: REML with one random intercept, or two crossed ones (sentence and annotator), fitted
  per block of the design (:func:`design_blocks`), checked to be at the optimum, its fixed effects
  and standard errors those of lme4's ``lmer``;
- :func:`permutation_p` and :func:`holm`: permutation p-values and Holm's step-down adjustment;
  :func:`inverted_permutation_interval`: the interval of shifts a permutation test does not
  reject; :func:`permutation_threshold`: the value an observed statistic must exceed to be
  significant; :func:`mark_wald_family`: Wald marks with Bonferroni-level intervals.

Wherever an interval is drawn beside a mark, both come from one test at one level, so a mark is
set exactly when the interval excludes the null value.
"""

from __future__ import annotations

import logging
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


def bonferroni(p_values: Sequence[float], m: int | None = None) -> np.ndarray:
    """Bonferroni-adjusted p-values min(1, p x m), m the number of non-missing entries unless
    given (NaN stays NaN)."""
    p = np.asarray(p_values, dtype=float)
    m = int(np.sum(~np.isnan(p))) if m is None else m
    return np.minimum(1.0, p * m)


def smallest_sign_test_p(n: int) -> float:
    """The smallest p the exact two-sided sign test (binomial, p0 = 0.5) can give with ``n`` decisive
    units: 2 x 0.5^n (1 without a unit). A test whose level is below it cannot reject, whatever the data."""
    return 1.0 if n <= 0 else min(1.0, 2 * 0.5**n)


def tarone_bonferroni(p_values: Sequence[float], smallest: Sequence[float], *, alpha: float):
    """Bonferroni over only the hypotheses that can be rejected (Tarone 1990, for discrete tests): the
    smallest K for which at most K hypotheses have a smallest attainable p below alpha / K; those are
    ``testable`` and adjusted as min(1, p K), the others are left out of the family (adjusted p NaN).
    Returns (testable, adjusted p, K). It controls the family-wise error at ``alpha`` as Bonferroni
    does, and no row is counted in a family it could never leave."""
    p, low = np.asarray(p_values, dtype=float), np.asarray(smallest, dtype=float)
    m = len(p)
    family = max(1, m)
    for k in range(1, m + 1):
        if int(np.sum(low < alpha / k)) <= k:
            family = k
            break
    testable = ~np.isnan(p) & (low < alpha / family)
    adjusted = np.where(testable, np.minimum(1.0, p * family), np.nan)
    return testable, adjusted, family


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


def fisher_exact(table) -> float:
    """Fisher's exact two-sided test of a 2 x 2 table of counts (NaN when a margin is empty)."""
    t = np.asarray(table, dtype=int)
    if (t.sum(axis=0) == 0).any() or (t.sum(axis=1) == 0).any():
        return float("nan")
    return float(stats.fisher_exact(t).pvalue)


def bootstrap_counts(rng: np.random.Generator, n: int, replicates: int) -> np.ndarray:
    """How often each of ``n`` units is drawn in each of ``replicates`` resamples with replacement
    (replicates x n): the weights of a bootstrap."""
    return rng.multinomial(n, np.full(n, 1 / n), replicates)


def percentile_interval(draws, *, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap ``draws``, those without an estimate (NaN) left out;
    (NaN, NaN) when none has one."""
    draws = np.asarray(draws, dtype=float)
    draws = draws[~np.isnan(draws)]
    if not len(draws):
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    return float(low) + 0.0, float(high) + 0.0  # + 0.0: never an end of -0


def cluster_bootstrap_interval(
    values: np.ndarray,
    weights: np.ndarray,
    clusters: np.ndarray,
    *,
    confidence: float = 0.95,
    replicates: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile interval of the ratio sum(values) / sum(weights) when whole clusters are resampled
    with replacement (the units of a cluster are not independent draws); NaN with fewer than two
    clusters."""
    codes, _ = pd.factorize(pd.Series(clusters, dtype="object"))
    n_clusters = codes.max() + 1 if len(codes) else 0
    if n_clusters < 2:
        return float("nan"), float("nan")
    v = np.bincount(codes, weights=np.asarray(values, dtype=float), minlength=n_clusters)
    w = np.bincount(codes, weights=np.asarray(weights, dtype=float), minlength=n_clusters)
    draws = bootstrap_counts(np.random.default_rng(seed), n_clusters, replicates)
    num, den = draws @ v, draws @ w
    return percentile_interval(num[den > 0] / den[den > 0], confidence=confidence)


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
    "ci_low": "Wald confidence interval at ci_level, lower bound",
    "ci_high": "Wald confidence interval at ci_level, upper bound",
    "ci_level": "1 - alpha / family size for the compared terms (Bonferroni level), 0.95 for the others",
    "p_value": "two-sided Wald p-value of the mixed model",
    "p_bonferroni": "p_value times the number of compared terms of the fit, capped at 1 (NaN for the intercept and "
    "controls)",
    "significant": "p_bonferroni < alpha: exactly when the interval excludes 0",
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
    p = (1 + extreme.sum(axis=0)) / (1 + np.asarray(null).shape[0])
    return np.where(np.isnan(np.asarray(observed, dtype=float)), np.nan, p)


def inverted_permutation_interval(
    statistic: np.ndarray, slope: np.ndarray, *, alpha: float, family: int = 1
) -> tuple[float, float]:
    """The shifts delta a two-sided permutation test does not reject, when the statistic of the data
    shifted by delta is linear in it: ``statistic - delta * slope`` per assignment (row 0 observed,
    the others permutations; for a gap, delta subtracted from one group's scores). delta is accepted
    when min(1, family x p(delta)) >= alpha, p(delta) = (1 + #{|c_i - delta d_i| >= |c_0 - delta d_0|}) / (1 + B),
    so the interval excludes 0 exactly when the test of no gap rejects at that level. Each
    permutation's "at least as extreme" set is solved exactly (a quadratic inequality in delta)
    and the count swept over the sorted roots; returned is the hull of the accepted shifts (-inf
    or inf where the permutations cannot bound it; NaN when the statistic is)."""
    c0, d0 = float(statistic[0]), float(slope[0])
    if not np.isfinite(c0):
        return float("nan"), float("nan")
    c, d = np.asarray(statistic[1:], dtype=float), np.asarray(slope[1:], dtype=float)
    keep = np.isfinite(c) & np.isfinite(d)
    c, d = c[keep], d[keep]
    total = len(statistic) - 1
    qa, qb, qc = d**2 - d0**2, -2 * (c * d - c0 * d0), c**2 - c0**2
    starts, ends = [], []  # closed intervals of delta where a permutation counts as extreme

    def add(where, lo, hi):
        starts.append(np.broadcast_to(lo, where.shape)[where])
        ends.append(np.broadcast_to(hi, where.shape)[where])

    tiny = 1e-12 * max(1.0, d0**2)
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
    starts, ends = np.sort(np.concatenate(starts)), np.sort(np.concatenate(ends))
    points = np.unique(np.concatenate([starts, ends]))
    points = points[np.isfinite(points)]
    # the count on each point (closed ends count) and on each open segment between points
    at_point = np.searchsorted(starts, points, side="right") - np.searchsorted(ends, points, side="left")
    left_edges = np.concatenate([[-np.inf], points])
    in_segment = np.searchsorted(starts, left_edges, side="right") - np.searchsorted(ends, left_edges, side="right")

    def accepted(count):
        return np.minimum(1.0, (1 + count) / (1 + total) * family) >= alpha

    ok_point, ok_segment = accepted(at_point), accepted(in_segment)
    right_edges = np.concatenate([points, [np.inf]])
    lows = np.concatenate([points[ok_point], left_edges[ok_segment]])
    highs = np.concatenate([points[ok_point], right_edges[ok_segment]])
    return (float(lows.min()), float(highs.max())) if len(lows) else (c0 / d0, c0 / d0)


def permutation_threshold(null: np.ndarray, *, alpha: float, family: int = 1) -> float:
    """The value an upper-tailed statistic must exceed (by more than 1e-12) for
    min(1, family x p) < alpha, p = (1 + #{null >= observed - 1e-12}) / (1 + B) (:func:`permutation_p`):
    the (m + 1)-th largest null value, m the most null values at least as large that still give a
    significant p (inf when no observed value can be significant with B permutations)."""
    values = np.asarray(null, dtype=float)
    b = len(values)  # a NaN draw counts in B but is never as extreme, as in permutation_p
    ranked = np.sort(values[~np.isnan(values)])[::-1]
    counts = np.arange(b + 1)
    allowed = int((np.minimum(1.0, (1 + counts) / (1 + b) * family) < alpha).sum()) - 1
    if allowed < 0:
        return float("inf")
    return float(ranked[allowed]) if allowed < len(ranked) else float("-inf")


def mark_wald_family(terms: pd.DataFrame, *, prefix: str, alpha: float) -> pd.DataFrame:
    """Mark the compared terms of one fit (those whose name starts with ``prefix``) by their Wald
    test, Bonferroni over them, with their interval redrawn at the same level, 1 - alpha / m, so a
    term is significant exactly when its interval excludes 0; other terms keep 95% and no mark."""
    family = terms["term"].str.startswith(prefix).to_numpy()
    m = max(1, int(family.sum()))
    z = stats.norm.ppf(1 - alpha / (2 * m))
    out = terms.copy()
    out["ci_level"] = np.where(family, 1 - alpha / m, 0.95)
    out.loc[family, "ci_low"] = out.loc[family, "estimate"] - z * out.loc[family, "std_err"]
    out.loc[family, "ci_high"] = out.loc[family, "estimate"] + z * out.loc[family, "std_err"]
    out["p_bonferroni"] = np.where(family, np.minimum(1.0, out["p_value"].to_numpy(float) * m), np.nan)
    out["significant"] = family & (out["p_bonferroni"].to_numpy() < alpha)
    return out


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment over the non-missing p-values of one family: the i-th smallest of
    m is multiplied by m - i + 1, made non-decreasing and capped at 1 (statsmodels' ``multipletests``
    gives the same; it is written out here because that function runs the garbage collector on
    every call, which made the group tests ten times slower). NaN stays NaN."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if len(ok):
        order = ok[np.argsort(p[ok], kind="stable")]
        scaled = p[order] * (len(order) - np.arange(len(order)))
        out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out


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
