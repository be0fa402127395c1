"""plmfair.stats, paired proportions: Tango's score interval and the mid-p McNemar test of paired proportions."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.optimize import minimize_scalar

from plmfair.stats.paired import _constrained_down, mid_p_mcnemar, mid_p_smallest, tango_interval, tango_score


def _maximum_likelihood_down(up: int, down: int, n: int, delta: float) -> float:
    """P(-1) maximising the trinomial likelihood under P(+1) - P(-1) = delta, numerically."""
    rest = n - up - down

    def minus_log_likelihood(q):
        p = q + delta
        r = 1 - p - q
        if q <= 0 or p <= 0 or r <= 0:
            return math.inf
        return -sum(k * math.log(x) for k, x in ((up, p), (down, q), (rest, r)) if k)

    low = max(0.0, -delta)
    return minimize_scalar(
        minus_log_likelihood, bounds=(low + 1e-12, (1 - delta) / 2 - 1e-12), method="bounded", options={"xatol": 1e-13}
    ).x


@pytest.mark.parametrize("up,down,n", [(5, 2, 40), (7, 0, 20), (3, 9, 1677), (12, 6, 36), (1, 7, 21)])
def test_tangos_constrained_estimate_maximises_the_likelihood(up, down, n):
    for delta in (-0.3, -0.05, 0.0, 0.02, 0.2):
        assert _constrained_down(up, down, n, delta) == pytest.approx(
            _maximum_likelihood_down(up, down, n, delta), abs=1e-5
        )


def test_tangos_interval_is_where_its_score_test_does_not_reject():
    z = stats.norm.ppf(0.975)
    low, high = tango_interval(1, 7, 21)  # Bentur et al. (2009), Fagerland et al.'s paired example
    assert low < (1 - 7) / 21 < high
    assert tango_score(1, 7, 21, low) == pytest.approx(z, abs=1e-6) and tango_score(1, 7, 21, high) == pytest.approx(
        -z, abs=1e-6
    )
    # at no change the score test is McNemar's: (up - down) / sqrt(up + down)
    assert tango_score(12, 6, 36, 0.0) == pytest.approx(6 / math.sqrt(18))
    # nothing moved: Wilson-like, never of zero width, z^2 / (n + z^2) on both sides
    low, high = tango_interval(0, 0, 40)
    assert high == pytest.approx(z**2 / (40 + z**2)) and low == pytest.approx(-high)
    # every item one way: the interval reaches 1
    assert tango_interval(5, 0, 5)[1] == 1.0 and tango_interval(0, 5, 5)[0] == -1.0
    assert all(np.isnan(tango_interval(0, 0, 0)))


def test_mid_p_mcnemar_hand_computed():
    # 7 up, 1 down: X ~ Bin(8, 1/2), k = 1: 2 (P(X = 0) + P(X = 1) / 2) = 2 (1 + 4) / 256
    assert mid_p_mcnemar(7, 1) == pytest.approx(10 / 256)
    assert mid_p_mcnemar(1, 7) == pytest.approx(10 / 256)
    assert mid_p_mcnemar(3, 3) == pytest.approx(1.0) and mid_p_mcnemar(0, 0) == 1.0
    # every item one way: half the exact test's 2 x 0.5^n
    assert mid_p_mcnemar(5, 0) == pytest.approx(0.5**5) == mid_p_smallest(5)
    assert mid_p_smallest(0) == 1.0


def test_a_paired_changes_smallest_p_is_the_smallest_its_test_gives_for_those_moves():
    """The paired-change p is the larger of the mid-p McNemar's and Tango's score test's; the smallest it can
    give with m pairs moved is at every pair moved one way, where the score test's 2 Phi(-sqrt(m)) is the
    larger for m above a few (the mid-p's 0.5^m alone said 7.6e-6 at m = 17 where 3.7e-5 is the true one)."""
    from plmfair.crows_pairs.changes import paired_proportions

    for moved in range(1, 41):
        for n in (moved, moved + 7, 300):
            ps = [paired_proportions(up, moved - up, n, alpha=0.05)["p"] for up in range(moved + 1)]
            assert paired_proportions(0, moved, n, alpha=0.05)["p_min"] == pytest.approx(min(ps), rel=1e-9)
    assert paired_proportions(17, 0, 100, alpha=0.05)["p_min"] == pytest.approx(3.7e-5, rel=0.05)


def test_a_paired_changes_size_given_its_moves_is_its_rejection_rate_and_the_plan_keeps_it_in_the_band():
    """The paired-change test's size at alpha given m moves: each moved pair up or down with probability 1/2,
    counted by hand (0.0703 at m = 8, 0.0768 at m = 16, as a referee found; 0.0156 at m = 7); the hypotheses
    leaves a comparison with a size outside [0.03, 0.07] untestable, saying why, and tests one inside."""
    from plmfair.crows_pairs.changes import paired_proportions
    from plmfair.multiplicity import decide_hypotheses, hypotheses_of
    from plmfair.rendering.marks import note

    for moved, expected in ((7, 0.0156), (8, 0.0703), (16, 0.0768), (40, 0.0385)):
        by_hand = sum(
            stats.binom.pmf(up, moved, 0.5)
            for up in range(moved + 1)
            if paired_proportions(up, moved - up, 300, alpha=0.05)["p"] < 0.05
        )
        size = paired_proportions(0, moved, 300, alpha=0.05)["size"]
        assert size == pytest.approx(by_hand) and size == pytest.approx(expected, abs=5e-4)
    rows = [{**paired_proportions(up, moved - up, 300, alpha=0.05), "m": moved} for up, moved in ((0, 8), (2, 40))]
    frame = pd.DataFrame(rows).assign(hypothesis=["eight", "forty"])
    decided = decide_hypotheses(
        hypotheses_of(frame, study="s", source="f", question="q", primary=False, p_value="p", informative=True),
        alpha=0.05,
    ).set_index("hypothesis")
    assert decided.loc["eight", "family"] == "untestable" and "above 0.07" in note(decided.loc["eight"])
    assert decided.loc["forty", "family"] == "secondary"
