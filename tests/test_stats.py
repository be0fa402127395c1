import math

import numpy as np
import pandas as pd
import pytest

from plmfair.stats.mixed_models import crossed_mixed_model, design_blocks
from plmfair.stats.permutation import (
    accepted_extent,
    accepted_shifts,
    attainable,
    inverted_permutation_interval,
    permutation_p,
    permutation_threshold,
)
from plmfair.stats.proportions import (
    binomial_summary,
    cluster_score_test,
    mover_mean_interval,
    sign_test,
    smallest_sign_test_p,
    win_loss,
)


def test_binomial_hand_computed():
    # 8 of 10: P(X >= 8) = (45 + 10 + 1) / 1024; two-sided doubles it
    s = binomial_summary(8, 10)
    assert s.p_value == pytest.approx(2 * 56 / 1024)
    assert s.proportion == 0.8 and s.ci_low < 0.8 < s.ci_high
    assert math.isnan(binomial_summary(0, 0).p_value)


def test_smallest_sign_test_p():
    # 3 and 12 decisive pairs: 2 x 0.5^3 and 2 x 0.5^12; none: a test that cannot reject
    assert smallest_sign_test_p(3) == 0.25 and smallest_sign_test_p(12) == pytest.approx(2 / 4096)
    assert smallest_sign_test_p(0) == 1.0


def test_mover_interval_of_a_mean():
    low, high = mover_mean_interval([0.5, 0.7], [0.3, 0.6], [0.6, 0.9])
    assert low == pytest.approx((1.2 - np.hypot(0.2, 0.1)) / 2) and high == pytest.approx(
        (1.2 + np.hypot(0.1, 0.2)) / 2
    )


def test_the_cluster_score_test_by_hand():
    """Eight clusters of 2 to 5 units, 16 ones in 24: the statistic (r - 1/2) n over the root of the clusters'
    squared deviations from the null, v_g - n_g / 2, against t with G - 1 = 7 degrees of freedom; the interval
    is every p0 whose statistic stays within t's quantile (checked at its ends), and the smallest p is the
    statistic's bound sqrt(G). Three clusters are too few for the interval to close: every share."""
    from scipy import stats

    w = np.array([2.0, 3.0, 5.0, 2.0, 3.0, 4.0, 2.0, 3.0])
    v = np.array([1.0, 2.0, 4.0, 1.0, 2.0, 3.0, 2.0, 1.0])
    clusters = np.repeat(np.arange(8), w.astype(int))
    values = np.concatenate([[1.0] * int(k) + [0.0] * int(n - k) for k, n in zip(v, w, strict=True)])
    r = 16 / 24

    def statistic(p0):
        return (r - p0) * 24 / np.sqrt(np.sum((v - p0 * w) ** 2))

    test = cluster_score_test(values, clusters)
    assert test.proportion == pytest.approx(r) and test.clusters == 8
    assert test.p_value == pytest.approx(2 * stats.t.sf(statistic(0.5), 7))
    assert test.p_min == pytest.approx(2 * stats.t.sf(np.sqrt(8), 7))
    assert 0 < test.ci_low < r < test.ci_high < 1
    for end in (test.ci_low, test.ci_high):
        assert abs(statistic(end)) == pytest.approx(stats.t.ppf(0.975, 7))
    few = cluster_score_test(values[:10], clusters[:10])
    assert few.clusters == 3 and (few.ci_low, few.ci_high) == (0.0, 1.0)
    # at r = 1 the test is defined (the null's deviations are not 0); one cluster is no test
    assert cluster_score_test(np.ones(24), clusters).p_value >= test.p_min
    assert np.isnan(cluster_score_test(values, np.zeros(24)).p_value)


def test_the_cluster_score_test_rejects_exactly_when_its_interval_leaves_out_the_null():
    rng = np.random.default_rng(3)
    for _ in range(200):
        sizes = rng.integers(1, 12, size=rng.integers(2, 15))
        clusters = np.repeat(np.arange(len(sizes)), sizes)
        values = (rng.random(len(clusters)) < rng.uniform(0.2, 0.9)).astype(float)
        test = cluster_score_test(values, clusters, confidence=0.9)
        assert (test.p_value < 0.1) == (not test.ci_low <= 0.5 <= test.ci_high), test


@pytest.mark.parametrize("n", [1, 7, 20, 61])
def test_clopper_pearson_excludes_one_half_exactly_when_the_exact_test_rejects(n):
    """At p0 = 0.5 the exact interval inverts the exact two-sided test, at any level: every k of n,
    at 95% and at a Bonferroni level. The Wilson interval does not: 22 of 60 gives Wilson
    [0.256, 0.493], excluding 50%, beside an exact p of 0.052 (a star-less row whose interval says
    otherwise, the contradiction the summary had)."""
    for level in (0.95, 1 - 0.05 / 9):
        for k in range(n + 1):
            s = binomial_summary(k, n, confidence=level, method="exact")
            assert (s.p_value < 1 - level) == (not s.ci_low <= 0.5 <= s.ci_high), (k, n, level)
    wilson = binomial_summary(22, 60)
    assert wilson.ci_high < 0.5 and wilson.p_value > 0.05


def test_permutation_threshold_is_where_the_test_turns():
    rng = np.random.default_rng(0)
    null = rng.normal(size=999)
    for alpha in (0.05, 0.05 / 4):
        threshold = permutation_threshold(null, alpha=alpha)
        for observed in np.linspace(-1, 4, 301):
            p = permutation_p(np.array([observed]), null[:, None], two_sided=False)[0]
            assert (p < alpha) == (observed > threshold + 1e-12)
    # 19 permutations cannot give p < 0.05 / 4: no value can be significant
    assert permutation_threshold(null[:19], alpha=0.05 / 4) == np.inf


def test_inverted_interval_is_the_set_of_shifts_the_test_does_not_reject():
    """The hull the sweep returns against a brute-force grid of shifts, each tested as permutation_p tests it;
    and a tie that accepts an isolated shift is said (connected false)."""
    rng = np.random.default_rng(3)
    c, d = rng.normal(size=60), rng.uniform(0.5, 1.5, size=60)
    d[0] = 1.6  # the data's statistic moves fastest with the shift: far shifts are rejected (a bounded interval)
    shifts = inverted_permutation_interval(c, d, alpha=0.1)
    grid = np.linspace(-30, 30, 20001)
    accepted = [permutation_p(np.array([c[0] - t * d[0]]), (c[1:] - t * d[1:])[:, None])[0] >= 0.1 for t in grid]
    inside = grid[np.array(accepted)]
    assert shifts.low == pytest.approx(inside.min(), abs=0.004) and shifts.high == pytest.approx(
        inside.max(), abs=0.004
    )
    # a permutation as extreme as the data only at t = 0 (-3 t^2 >= 0): with B = 1 and alpha 0.6, t = 0 alone
    lone = accepted_shifts(np.array([-3.0]), np.array([0.0]), np.array([0.0]), alpha=0.6)
    assert (lone.low, lone.high, lone.connected) == (0.0, 0.0, True)
    # and another extreme on [1, 2] (-(t - 1)(t - 2) >= 0): accepted {0} and [1, 2], whose hull is [0, 2]
    split = accepted_shifts(np.array([-3.0, -1.0]), np.array([0.0, 3.0]), np.array([0.0, -2.0]), alpha=0.6)
    assert (split.low, split.high, split.connected) == (0.0, 2.0, False)


def test_the_extent_of_accepted_shifts_along_many_lines_is_each_lines_exact_sweep():
    """accepted_extent (every line at once, segments only) against accepted_shifts (one line, exact): the
    farthest accepted shift is the exact hull's far end; the nearest, where the accepted set is one interval,
    its end nearest 0 (0 when it holds 0)."""
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(30):
        qa = -np.abs(rng.normal(size=(5, 200))) - 0.2  # far shifts rejected: bounded intervals
        qa[:, :3] = rng.normal(size=(5, 3))
        qb, qc = rng.normal(size=(5, 200)), rng.normal(size=(5, 200)) + 0.5
        for alpha in (0.05, 0.3):
            near, far = accepted_extent(qa, qb, qc, alpha=alpha)
            for row in range(5):
                exact = accepted_shifts(qa[row], qb[row], qc[row], alpha=alpha)
                assert far[row] == pytest.approx(max(abs(exact.low), abs(exact.high)))
                if exact.connected:
                    nearest = 0.0 if exact.low <= 0 <= exact.high else min(abs(exact.low), abs(exact.high))
                    assert near[row] == pytest.approx(nearest)
                    checked += 1
    assert checked > 200


def test_sign_test_hand_computed():
    # 7 wins of 8 decisive: P(X >= 7) = (8 + 1) / 256; two-sided doubles it
    two, one = sign_test(7, 1)
    assert two == pytest.approx(18 / 256) and one == pytest.approx(9 / 256)
    assert sign_test(1, 7)[1] == pytest.approx(1 - 1 / 256)  # a wins more: far from it
    assert sign_test(0, 0) == (1.0, 1.0)


def test_win_loss_means_per_unit_and_ties():
    values = pd.DataFrame(
        {
            "unit": ["x", "x", "x", "y", "y", "z"],
            "cond": ["a", "a", "b", "a", "b", "b"],
            "v": [1.0, 0.0, 0.5, 0.2, 0.2, 1.0],
        }
    )
    row = win_loss(values, unit=["unit"], condition="cond", value="v", pairs=[("a", "b")]).iloc[0]
    # x: a's mean 0.5 ties b's 0.5; y: tie; z: only b
    assert (row["n_units"], row["wins_a"], row["wins_b"], row["ties"]) == (2, 0, 0, 2)
    assert row["p_two_sided"] == 1.0


def test_design_blocks_are_the_batches():
    sentences = ["s1", "s2", "s1", "s2", "s3", "s3", "s4"]
    annotators = ["a", "a", "b", "b", "c", "d", "d"]  # a and b answer s1, s2; c and d answer s3; d also s4
    blocks = design_blocks(sentences, annotators)
    assert blocks[0] == blocks[1] == blocks[2] == blocks[3] and blocks[4] == blocks[5] == blocks[6]
    assert blocks[0] != blocks[4]


def test_permutation_p_counts_ties_and_the_observed_draw():
    null = np.array([[1.0, -3.0], [2.0, 0.5], [-2.0, 1.0], [0.5, -0.5]])
    observed = np.array([2.0, 1.0])
    # two-sided: |null| >= |observed|: column 1: 2, -2 -> 2; column 2: -3, 1 -> 2
    assert permutation_p(observed, null).tolist() == [3 / 5, 3 / 5]
    # upper tail: column 1: 2 -> 1; column 2: 1 -> 1
    assert permutation_p(observed, null, two_sided=False).tolist() == [2 / 5, 2 / 5]
    assert math.isnan(permutation_p(np.array([np.nan]), null[:, :1])[0])


def test_a_secondary_statistic_breaks_only_the_ties_of_the_primary_one():
    # net wins 2 observed; permutations: 3 (above), 2 twice (tied), -2 (tied two-sided), 1 (below)
    net, null = np.array([2.0]), np.array([[3.0], [2.0], [2.0], [-2.0], [1.0]])
    gap, gap_null = np.array([0.5]), np.array([[0.0], [0.7], [0.1], [-0.6], [9.0]])
    # two-sided: 3; the ties with |gap| >= 0.5: 0.7 and -0.6 (the 9.0 is not tied, 0.1 below)
    assert permutation_p(net, null, secondary=[(gap, gap_null)]).tolist() == [4 / 6]
    # upper tail: 3; the tie at 2 with gap 0.7 (-2 is not tied one-sided)
    assert permutation_p(net, null, two_sided=False, secondary=[(gap, gap_null)]).tolist() == [3 / 6]
    # without a secondary statistic every tie counts
    assert permutation_p(net, null).tolist() == [5 / 6]


def simulated_design(
    seed: int, *, batches: int = 8, sentences: int = 10, annotators: int = 6, groups=("MN", "FN", "MNN", "FNN")
) -> pd.DataFrame:
    """MozArt's design: batches of sentences each answered by their own annotators, one group each;
    scores with sentence and annotator heterogeneity and a small group effect."""
    rng = np.random.default_rng(seed)
    effect = dict(zip(groups, (0.0, -0.05, 0.04, -0.02), strict=True))
    rows = []
    for b in range(batches):
        members = [(f"b{b}u{k}", groups[(b + k) % len(groups)], rng.normal(0, 0.12)) for k in range(annotators)]
        for s in range(sentences):
            level = rng.normal(0, 0.15)
            rows += [(f"b{b}s{s}", u, g, 0.3 + level + a + effect[g] + rng.normal(0, 0.25)) for u, g, a in members]
    return pd.DataFrame(rows, columns=["sentence", "annotator", "group", "value"])


LME4 = """
suppressMessages(library(lme4))
d <- read.csv(commandArgs(TRUE)[1], colClasses = c("character", "character", "character", "numeric"))
d$group <- relevel(factor(d$group), ref = "MN")
f <- lmer(value ~ group + (1 | sentence) + (1 | annotator), data = d, REML = TRUE)
v <- as.data.frame(VarCorr(f))
out <- data.frame(term = names(fixef(f)), estimate = fixef(f), std_err = sqrt(diag(vcov(f))))
write.csv(out, commandArgs(TRUE)[2], row.names = FALSE)
write.csv(data.frame(name = v$grp, var = v$vcov), commandArgs(TRUE)[3], row.names = FALSE)
"""


def _lme4_available() -> bool:
    import shutil
    import subprocess

    if shutil.which("Rscript") is None:
        return False
    return subprocess.run(["Rscript", "-e", "library(lme4)"], capture_output=True).returncode == 0


@pytest.mark.skipif(
    not _lme4_available(),
    reason="Rscript with lme4 is not installed (apt-get install r-base-core "
    "r-cran-lme4; .ci/run installs them as root)",
)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_crossed_model_equals_lme4(seed, tmp_path):
    """lmer(value ~ group + (1|sentence) + (1|annotator)) in R and ours on the same simulated data:
    estimates, standard errors and variances to 1e-3 relative."""
    import subprocess

    data = simulated_design(seed)
    data.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "fit.R").write_text(LME4)
    proc = subprocess.run(
        [
            "Rscript",
            str(tmp_path / "fit.R"),
            str(tmp_path / "d.csv"),
            str(tmp_path / "fixef.csv"),
            str(tmp_path / "var.csv"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    r_fixed = pd.read_csv(tmp_path / "fixef.csv").set_index("term")
    r_var = pd.read_csv(tmp_path / "var.csv").set_index("name")["var"]
    fit = crossed_mixed_model(data, "value ~ C(group, Treatment(reference='MN'))", effects=("sentence", "annotator"))
    assert fit.converged, fit.message
    ours = fit.terms.assign(
        term=[
            t.replace("C(group, Treatment(reference='MN'))[T.", "group").rstrip("]").replace("Intercept", "(Intercept)")
            for t in fit.terms["term"]
        ]
    ).set_index("term")
    for term in r_fixed.index:
        assert ours.loc[term, "estimate"] == pytest.approx(r_fixed.loc[term, "estimate"], rel=1e-3, abs=1e-6), term
        assert ours.loc[term, "std_err"] == pytest.approx(r_fixed.loc[term, "std_err"], rel=1e-3), term
    for ours_name, r_name in (("sentence", "sentence"), ("annotator", "annotator"), ("residual", "Residual")):
        assert fit.variances[ours_name] == pytest.approx(r_var[r_name], rel=1e-3), ours_name


def test_a_solution_off_the_optimum_is_not_called_converged():
    import statsmodels.formula.api as smf
    from statsmodels.regression.mixed_linear_model import MixedLMParams

    from plmfair.stats.mixed_models import _at_optimum

    data = simulated_design(4)
    blocks = design_blocks(data["sentence"], data["annotator"])
    model = smf.mixedlm(
        "value ~ group",
        data,
        groups=blocks,
        re_formula="0",
        vc_formula={"sentence": "0 + C(sentence)", "annotator": "0 + C(annotator)"},
    )
    fit = model.fit(reml=True, method=["powell", "lbfgs"])
    assert _at_optimum(model, fit.params_object)
    off = MixedLMParams.from_components(
        fe_params=fit.params_object.fe_params, cov_re=fit.params_object.cov_re, vcomp=fit.params_object.vcomp * 3
    )
    assert not _at_optimum(model, off)


def test_permutation_threshold_counts_a_nan_draw_as_permutation_p_does():
    null = np.array([np.nan] * 10 + list(np.linspace(0, 1, 89)))
    threshold = permutation_threshold(null, alpha=0.05)
    for observed in np.linspace(0, 1.2, 121):
        p = permutation_p(np.array([observed]), null[:, None], two_sided=False)[0]
        assert (p < 0.05) == (observed > threshold + 1e-12)


def test_attainable_counts_ties_in_the_smallest_p_and_the_size():
    """Row 0 observed, then 99 permutations. Distinct values: the largest alone gives 1 / 100 and four
    assignments give p < 0.05. A statistic at 1 on 20 assignments and 0 elsewhere: the best any data can
    give is 20 / 100, and the test never rejects. Each assignment's p is permutation_p's were it observed."""
    rng = np.random.default_rng(0)
    distinct = rng.permutation(np.arange(100.0))
    reach = attainable(distinct, alpha=0.05, two_sided=False)
    assert reach.p_min == pytest.approx(1 / 100) and reach.size == pytest.approx(4 / 100)
    crowded = np.r_[np.ones(20), np.zeros(80)]
    reach = attainable(crowded, alpha=0.05, two_sided=False)
    assert reach.p_min == pytest.approx(20 / 100) and reach.size == 0
    for values in (distinct, crowded):
        for i in (0, 7, 50):
            others = np.delete(values, i)
            p = permutation_p(values[i : i + 1], others[:, None], two_sided=False)[0]
            assert p == pytest.approx(np.mean(values >= values[i]))


@pytest.mark.parametrize(
    "table",
    [
        np.array([[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 4, 3.0]]).T,
        np.array([[1, 1, 3, 4], [1, 2, 2, 4], [1, 2, 4, 4.0]]).T,  # ties, corrected for
        np.random.default_rng(3).random((6, 4)),
    ],
)
def test_kendalls_w_is_friedmans_chi2_over_m_n_minus_1(table):
    """W = chi2 / (m (n - 1)) with scipy's tie-corrected Friedman statistic (items x raters)."""
    from scipy import stats as scipy_stats

    from plmfair.stats.agreement import kendalls_w

    n, m = table.shape
    assert kendalls_w(table) == pytest.approx(scipy_stats.friedmanchisquare(*table).statistic / (m * (n - 1)))
    assert np.isnan(kendalls_w(table[:2]))  # two items: not defined here


def test_the_interval_of_a_ranking_agreement_holds_w_and_is_exact_where_every_order_is_certain():
    """Shares far apart on many pairs fix every rank: W = 1 with no room below when every protocol agrees, and
    the exact W of a reversal when one protocol reverses the order; on few pairs the interval widens."""
    from plmfair.stats.agreement import ranking_agreement

    shares = np.array([0.3, 0.5, 0.7])[:, None] * np.ones((1, 3))
    many = np.full((3, 3), 10_000)
    assert ranking_agreement(many, np.round(many * shares), confidence=0.95) == (1.0, 1.0, 1.0)
    reversed_ = shares.copy()
    reversed_[:, 2] = reversed_[::-1, 2]
    w, low, high = ranking_agreement(many, np.round(many * reversed_), confidence=0.95)
    assert w == pytest.approx(1 / 9) and low == pytest.approx(1 / 9) and high == pytest.approx(1 / 9)
    few = np.full((3, 3), 20)
    w, low, high = ranking_agreement(few, np.round(few * shares), confidence=0.95)
    assert w == 1.0 and low < 0.5 and high == 1.0
