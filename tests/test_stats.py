import math

import numpy as np
import pandas as pd
import pytest

from plmfair.crows_pairs import compare_models
from plmfair.stats import binomial_summary, bonferroni, mcnemar_exact, sign_test, win_loss


def test_binomial_hand_computed():
    # 8 of 10: P(X >= 8) = (45 + 10 + 1) / 1024; two-sided doubles it
    s = binomial_summary(8, 10)
    assert s.p_value == pytest.approx(2 * 56 / 1024)
    assert s.proportion == 0.8 and s.ci_low < 0.8 < s.ci_high
    assert math.isnan(binomial_summary(0, 0).p_value)


def test_bonferroni_caps_and_keeps_nan():
    np.testing.assert_allclose(bonferroni([0.01, 0.4, float("nan")]), [0.02, 0.8, float("nan")])
    assert bonferroni([0.6, 0.7]).tolist() == [1.0, 1.0]


def test_mcnemar_exact_hand_computed():
    a = [True, True, True, False, False, True]
    b = [False, False, False, True, False, True]
    res = mcnemar_exact(a, b)
    # b = 3 discordant one way, c = 1 the other: p = 2 * P(X <= 1 | n=4) = 2 * 5/16
    assert (res.b, res.c) == (3, 1) and res.p_value == pytest.approx(10 / 16)
    assert mcnemar_exact([True], [True]).p_value == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact([True], [True, False])


def test_compare_models_uses_pairs_scored_by_both():
    def frame(biased, status):
        return pd.DataFrame({"pair_id": ["a", "b", "c", "d"], "biased": biased, "status": status})

    out = compare_models(
        {
            "m1": frame([True, True, False, True], ["ok", "ok", "ok", "ok"]),
            "m2": frame([False, False, False, True], ["ok", "ok", "ok", "skipped_missing"]),
        },
        dataset="fr",
    )
    row = out.iloc[0]
    assert row["n"] == 3 and row["a_only"] == 2 and row["b_only"] == 0
    assert row["p_value"] == pytest.approx(0.5) and row["score_a"] == pytest.approx(200 / 3)


def test_sign_test_hand_computed():
    # 7 wins of 8 decisive: P(X >= 7) = (8 + 1) / 256; two-sided doubles it
    two, one = sign_test(7, 1)
    assert two == pytest.approx(18 / 256) and one == pytest.approx(9 / 256)
    assert sign_test(1, 7)[1] == pytest.approx(1 - 1 / 256)  # a wins more: far from it
    assert sign_test(0, 0) == (1.0, 1.0)


def test_win_loss_means_per_unit_and_ties():
    values = pd.DataFrame({
        "unit": ["x", "x", "x", "y", "y", "z"],
        "cond": ["a", "a", "b", "a", "b", "b"],
        "v": [1.0, 0.0, 0.5, 0.2, 0.2, 1.0],
    })
    row = win_loss(values, unit=["unit"], condition="cond", value="v", pairs=[("a", "b")]).iloc[0]
    # x: a's mean 0.5 ties b's 0.5; y: tie; z: only b
    assert (row["n_units"], row["wins_a"], row["wins_b"], row["ties"]) == (2, 0, 0, 2)
    assert row["p_two_sided"] == 1.0
