"""Level and coverage of CrowS-Pairs' tests and intervals, computed exactly (every outcome enumerated with its
probability; no Monte Carlo error), on data sets of 40, 80 and 1,677 pairs: the bias types of a data set, a
small data set, and Névéol et al.'s French set. The tests and interval of pairs clustered by writer alone are
simulated (on the real English set's 77 writers and their pair counts).

- the sign test of the decisive share against 50% (the summary's test, CrowS-Pairs' primary question) with
  its Clopper-Pearson interval; the Wilson interval of the breakdown buckets;
- Tango's score interval of the net preference (P(more) - P(less), neutral pairs counting 0);
- the paired test of a change (two scorings of the same pairs, or two data sets on shared pairs: the larger
  of the mid-p McNemar test's and Tango's score test's p) with Tango's interval, when few pairs move;
- the MOVER interval of the direction-balanced share;
- under writer effects (each writer's own preference, sd 0 to 1 on the logit scale, no preference on average):
  the level of the sign test, which takes the pairs as independent, and of the cluster score test, the
  overall row's test where the source names its writers, with the coverage of that test's interval.

A test's level is the rate at which it rejects a true null among the data sets where the row is testable
(its smallest attainable p below alpha; an untestable row prints no mark), printed with how often the row is
testable; an interval's coverage the rate at which it holds the true value.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from plmfair.multiplicity import testable_on_design
from plmfair.stats.paired import (
    paired_change_p,
    paired_change_size,
    paired_change_smallest,
    tango_interval,
    tango_score,
)
from plmfair.stats.proportions import binomial_summary, cluster_score_test, mover_mean_interval

SIZES = (40, 80, 1677)  # CrowS-Pairs sizes: a small set, a bias type of the original, the French set
MASS = 1e-12  # outcomes less likely than this are left out of the sums (their total mass is printed)


def _median(values, weights) -> float:
    """The weighted median of ``values`` (an interval's width over the outcomes, by their probability)."""
    values, weights = np.asarray(values, dtype=float), np.asarray(weights, dtype=float)
    order = np.argsort(values)
    cumulative = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cumulative, cumulative[-1] / 2)])


def _binomial_support(n: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """The outcomes of Binomial(n, p) with probability above :data:`MASS`, and their probabilities."""
    k = np.arange(n + 1)
    pmf = stats.binom.pmf(k, n, p)
    keep = pmf > MASS
    return k[keep], pmf[keep]


def _trinomial_support(n: int, p_up: float, p_down: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (up, down) outcomes of a trinomial with probability above :data:`MASS`, and their probabilities."""
    ups, p_ups = _binomial_support(n, p_up)
    rows = []
    for u, pu in zip(ups, p_ups, strict=True):
        rest = 1 - p_up
        downs, p_downs = _binomial_support(n - u, min(1.0, p_down / rest) if rest > 0 else 0.0)
        rows.append((np.full(len(downs), u), downs, pu * p_downs))
    up, down, prob = (np.concatenate(parts) for parts in zip(*rows, strict=True))
    keep = prob > MASS
    return up[keep], down[keep], prob[keep]


def _sign_test_rejects(d: int, alpha: float) -> float:
    """P(the exact two-sided sign test rejects at alpha | d decisive pairs, no preference)."""
    if d == 0:
        return 0.0
    j = np.arange(d // 2 + 1)
    tail = stats.binom.cdf(j, d, 0.5)
    critical = j[np.minimum(1.0, 2 * tail) < alpha]
    return float(min(1.0, 2 * stats.binom.cdf(critical.max(), d, 0.5))) if len(critical) else 0.0


def sign_test_level(n: int, ties: float, alpha: float) -> dict:
    """The sign test's level on n pairs of which a share ``ties`` is neutral, among the data sets where it is
    testable (2 x 0.5^d < alpha)."""
    ds, pd_ = _binomial_support(n, 1 - ties)
    testable = 2 * 0.5 ** ds.astype(float) < alpha
    rejected = np.array([_sign_test_rejects(int(d), alpha) for d in ds])
    p_testable = float(pd_[testable].sum())
    return {
        "testable": p_testable,
        "rate": float((pd_ * rejected)[testable].sum() / p_testable) if p_testable else np.nan,
    }


def clopper_pearson_coverage(n: int, ties: float, theta: float, alpha: float) -> dict:
    """Coverage of the decisive share's Clopper-Pearson interval (decisive share theta) on n pairs."""
    ds, pd_ = _binomial_support(n, 1 - ties)
    covered, widths, probabilities = 0.0, [], []
    for d, pdd in zip(ds, pd_, strict=True):
        if d == 0:
            continue
        ks, pk = _binomial_support(int(d), theta)
        low = np.where(ks > 0, stats.beta.ppf(alpha / 2, ks, d - ks + 1), 0.0)
        high = np.where(ks < d, stats.beta.ppf(1 - alpha / 2, ks + 1, d - ks), 1.0)
        covered += pdd * float(pk[(low <= theta) & (theta <= high)].sum())
        widths.append(high - low)
        probabilities.append(pdd * pk)
    return {"coverage": covered, "width": 100 * _median(np.concatenate(widths), np.concatenate(probabilities))}


def tango_coverage(n: int, p_up: float, p_down: float, alpha: float) -> dict:
    """Coverage of Tango's score interval of p_up - p_down (computed as where |score| <= z, which is the
    interval: the score falls as delta rises) on n items, and its mean width (percentage points)."""
    up, down, prob = _trinomial_support(n, p_up, p_down)
    z = stats.norm.ppf(1 - alpha / 2)
    covered = np.abs(tango_score(up, down, np.full(len(up), n), p_up - p_down)) <= z + 1e-9
    # the width from the interval itself, on the 200 likeliest outcomes (root finding is per outcome)
    likeliest = np.argsort(prob)[::-1][:200]
    widths = [np.subtract(*tango_interval(int(up[i]), int(down[i]), n, confidence=1 - alpha)[::-1]) for i in likeliest]
    return {"coverage": float(prob[covered].sum() / prob.sum()), "width": 100 * _median(widths, prob[likeliest])}


def change_test_level(n: int, moves: float, alpha: float) -> dict:
    """The paired test of a change (:func:`plmfair.stats.paired.paired_change_p`) on n items of which a share ``moves``
    moves each way under the null, among the data sets where the hypotheses test it: its smallest p below
    alpha and its size given the moves inside LEVEL_BAND (:func:`plmfair.multiplicity.testable_on_design`)."""
    up, down, prob = _trinomial_support(n, moves, moves)
    moved = up + down
    by_moves = {int(m): paired_change_size(int(m), alpha=alpha) for m in np.unique(moved)}
    testable = testable_on_design(
        [paired_change_smallest(int(m)) for m in moved], [by_moves[int(m)] for m in moved], "", alpha=alpha
    )
    rejected = np.array([paired_change_p(int(u), int(w)) < alpha for u, w in zip(up, down, strict=True)])
    p_testable = float(prob[testable].sum())
    rate = float(prob[testable & rejected].sum() / p_testable) if p_testable else np.nan
    return {"testable": p_testable / float(prob.sum()), "rate": rate}


def mover_coverage(n: int, stereo_share: float, theta_stereo: float, theta_anti: float, alpha: float) -> dict:
    """Coverage of the MOVER interval of the direction-balanced share (the mean of the stereo and anti-stereo
    decisive shares, from their Clopper-Pearson intervals) on n pairs split between the directions."""
    n_s = int(round(n * stereo_share))
    n_a = n - n_s
    ks, ps = _binomial_support(n_s, theta_stereo)
    ka, pa = _binomial_support(n_a, theta_anti)
    truth = (theta_stereo + theta_anti) / 2
    s_rows = [binomial_summary(int(k), n_s, confidence=1 - alpha, method="exact") for k in ks]
    a_rows = [binomial_summary(int(k), n_a, confidence=1 - alpha, method="exact") for k in ka]
    covered, widths, probabilities = 0.0, [], []
    for s, p_s in zip(s_rows, ps, strict=True):
        for a, p_a in zip(a_rows, pa, strict=True):
            low, high = mover_mean_interval([s.proportion, a.proportion], [s.ci_low, a.ci_low], [s.ci_high, a.ci_high])
            covered += p_s * p_a * (low <= truth <= high)
            widths.append(high - low)
            probabilities.append(p_s * p_a)
    return {"coverage": covered / float(ps.sum() * pa.sum()), "width": 100 * _median(widths, probabilities)}


def wilson_coverage(n: int, theta: float, alpha: float) -> dict:
    """Coverage of the Wilson interval of a share on n pairs (the breakdown buckets' interval)."""
    ks, pk = _binomial_support(n, theta)
    rows = [binomial_summary(int(k), n, confidence=1 - alpha) for k in ks]
    covered = sum(p for p, r in zip(pk, rows, strict=True) if r.ci_low <= theta <= r.ci_high)
    width = _median([r.ci_high - r.ci_low for r in rows], pk)
    return {"coverage": float(covered / pk.sum()), "width": 100 * width}


def _writer_data(sizes: np.ndarray, theta: float, spread: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """Decisive pairs clustered as the writers' (``sizes``), each writer preferring the more stereotyping
    sentence with probability expit(logit(theta) + b), b ~ N(0, spread): (outcomes, writer of each pair)."""
    clusters = np.repeat(np.arange(len(sizes)), sizes)
    p = stats.logistic.cdf(np.log(theta / (1 - theta)) + spread * rng.normal(size=len(sizes)))[clusters]
    return (rng.random(len(clusters)) < p).astype(float), clusters


def writer_levels(sizes: np.ndarray, *, spread: float, replicates: int, seed: int, alpha: float) -> list[dict]:
    """The rejection rates of the sign test and of the cluster score test when no writer population prefers
    either sentence (theta 50%, so the pair-weighted truth is 50% whatever the spread), simulated on the
    writers' pairs: the sign test takes the pairs as independent, the cluster test the writers."""
    rng = np.random.default_rng([seed, int(1000 * spread)])
    sign = cluster = 0
    for _ in range(replicates):
        y, clusters = _writer_data(sizes, 0.5, spread, rng)
        sign += binomial_summary(int(y.sum()), len(y), method="exact").p_value < alpha
        cluster += cluster_score_test(y, clusters).p_value < alpha
    scenario = f"{len(sizes)} writers, writer sd {spread:g}"
    # the sign test is shown for comparison: where writers are known it is not the row's test
    return [
        {
            "test": test,
            "n": int(sizes.sum()),
            "scenario": scenario,
            "testable": 1.0,
            "rate": rejected / replicates,
            "compared": compared,
        }
        for test, rejected, compared in (
            ("sign test, pairs as independent", sign, True),
            ("cluster score test, writers", cluster, False),
        )
    ]


def cluster_coverage(sizes: np.ndarray, *, theta: float, spread: float, replicates: int, seed: int, alpha: float):
    """Coverage of the cluster score test's interval of the decisive share, simulated on the writers' pairs
    (:func:`_writer_data`); the truth is the pair-weighted mean of the writers' probability over the population
    of writers (Gauss-Hermite quadrature)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    truth = float(np.sum(weights * stats.logistic.cdf(np.log(theta / (1 - theta)) + spread * nodes)) / np.sum(weights))
    rng = np.random.default_rng(seed)
    covered, widths = [], []
    for _ in range(replicates):
        y, clusters = _writer_data(sizes, theta, spread, rng)
        test = cluster_score_test(y, clusters, confidence=1 - alpha)
        covered.append(test.ci_low <= truth <= test.ci_high)
        widths.append(test.ci_high - test.ci_low)
    return {"coverage": float(np.mean(covered)), "width": 100 * float(np.median(widths)), "truth": truth}


# the writer effects (sd on the logit scale) under which the tests' levels are shown
WRITER_SPREADS = (0.0, 0.25, 0.5, 1.0)


def pairs_tables(
    alpha: float, *, cluster_sizes: np.ndarray | None, replicates: int, seed: int, sizes: tuple[int, ...] = SIZES
) -> tuple:
    """The level table and the coverage table of the CrowS-Pairs tests and intervals (data frames), on data sets
    of ``sizes`` pairs."""
    levels, coverage = [], []
    for n in sizes:
        for ties in (0.0, 0.3):
            levels.append(
                {
                    "test": "sign test, decisive share vs 50%",
                    "n": n,
                    "scenario": f"ties {ties:.0%}",
                    **sign_test_level(n, ties, alpha),
                }
            )
        for moves in (0.003, 0.02, 0.05, 0.15):
            levels.append(
                {
                    "test": "paired change (max of mid-p McNemar, Tango)",
                    "n": n,
                    "scenario": f"{moves:.1%} move each way",
                    **change_test_level(n, moves, alpha),
                }
            )
        for ties in (0.0, 0.3):
            for theta in (0.5, 0.6, 0.75):
                coverage.append(
                    {
                        "interval": "Clopper-Pearson, decisive share",
                        "n": n,
                        "scenario": f"ties {ties:.0%}, share {theta:.0%}",
                        **clopper_pearson_coverage(n, ties, theta, alpha),
                    }
                )
        for ties in (0.0, 0.6):
            for net in (0.0, 0.1, 0.3):
                decisive = 1 - ties
                p_up, p_down = (decisive + net) / 2, (decisive - net) / 2
                if p_down < 0:
                    continue
                coverage.append(
                    {
                        "interval": "Tango, net preference",
                        "n": n,
                        "scenario": f"ties {ties:.0%}, net {net:+.0%}",
                        **tango_coverage(n, p_up, p_down, alpha),
                    }
                )
        for p_up, p_down in ((0.003, 0.003), (0.003, 0.0), (0.02, 0.0), (0.05, 0.02), (0.15, 0.05)):
            coverage.append(
                {
                    "interval": "Tango, paired change",
                    "n": n,
                    "scenario": f"{p_up:.1%} up, {p_down:.1%} down",
                    **tango_coverage(n, p_up, p_down, alpha),
                }
            )
        for theta_s, theta_a in ((0.6, 0.4), (0.7, 0.3), (0.5, 0.5)):
            coverage.append(
                {
                    "interval": "MOVER, direction-balanced share",
                    "n": n,
                    "scenario": f"85% stereo; shares {theta_s:.0%}, {theta_a:.0%}",
                    **mover_coverage(n, 0.85, theta_s, theta_a, alpha),
                }
            )
    for n in (10, 20, 40, 419):
        for theta in (0.5, 0.6, 0.75):
            coverage.append(
                {
                    "interval": "Wilson, breakdown bucket",
                    "n": n,
                    "scenario": f"share {theta:.0%}",
                    **wilson_coverage(n, theta, alpha),
                }
            )
    if cluster_sizes is not None:
        for spread in WRITER_SPREADS:
            levels += writer_levels(cluster_sizes, spread=spread, replicates=replicates, seed=seed, alpha=alpha)
        for theta in (0.5, 0.6, 0.8):
            for spread in (0.0, 0.5, 1.0):
                coverage.append(
                    {
                        "interval": "cluster score test's, decisive share",
                        "n": int(cluster_sizes.sum()),
                        "scenario": f"{len(cluster_sizes)} writers, share {theta:.0%}, writer sd {spread:g}",
                        **cluster_coverage(
                            cluster_sizes, theta=theta, spread=spread, replicates=replicates, seed=seed, alpha=alpha
                        ),
                    }
                )
    return pd.DataFrame(levels), pd.DataFrame(coverage)
