"""plmfair.multiplicity: Tarone's families, Holm and Benjamini-Yekutieli over them, and the run's decided."""

import numpy as np
import pandas as pd
import pytest

from plmfair.multiplicity import (
    benjamini_yekutieli,
    by_constant,
    decide_hypotheses,
    differences_from_first,
    false_discovery,
    family_level,
    family_wise,
    holm,
    intersection_union_p,
    primary_family_sizes,
    tarone_family,
)


def test_holm_hand_computed_and_as_statsmodels():
    from statsmodels.stats.multitest import multipletests

    # sorted 0.01, 0.02, 0.04 x 3, 2, 1 -> 0.03, 0.04, 0.04 (monotone)
    np.testing.assert_allclose(holm([0.04, 0.01, float("nan"), 0.02]), [0.04, 0.03, float("nan"), 0.04])
    p = np.random.default_rng(0).uniform(0, 0.2, 30)
    np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1])


def test_benjamini_yekutieli_hand_computed_and_as_statsmodels():
    from statsmodels.stats.multitest import multipletests

    # m = 3, c(3) = 11/6: sorted 0.001, 0.01, 0.04 -> min over j >= i of 3 c p_(j) / j
    c = 1 + 1 / 2 + 1 / 3
    expected = [3 * c * 0.001, 3 * c * 0.01 / 2, min(1.0, 3 * c * 0.04 / 3)]
    np.testing.assert_allclose(
        benjamini_yekutieli([0.01, float("nan"), 0.001, 0.04]), [expected[1], np.nan, expected[0], expected[2]]
    )
    assert by_constant(3) == pytest.approx(c) and by_constant(1) == 1.0
    p = np.random.default_rng(1).uniform(0, 0.1, 40)
    np.testing.assert_allclose(benjamini_yekutieli(p), multipletests(p, method="fdr_by")[1])


def test_tarone_leaves_out_what_cannot_reach_the_familys_threshold():
    # 3, 4 and 12 decisive pairs: smallest p 0.25, 0.125, 0.00049; only the third can reach 0.05 / K
    smallest = [0.25, 0.125, 2 * 0.5**12]
    family = family_wise([0.25, 0.125, 0.001], smallest, alpha=0.05)
    assert family.size == 1 and family.testable.tolist() == [False, False, True]
    assert np.isnan(family.adjusted[:2]).all() and family.adjusted[2] == pytest.approx(0.001)
    # two testable hypotheses: Holm over them
    family = family_wise([0.01, 0.02], [1e-4, 1e-4], alpha=0.05)
    assert family.size == 2 and family.adjusted.tolist() == pytest.approx([0.02, 0.02])
    # Benjamini-Yekutieli: K is the smallest with at most K smallest p below alpha / c(K); 1/6 never is
    kept, threshold = tarone_family([1 / 6, 1e-4, 1e-4, 1 / 36], lambda k: 0.05 / by_constant(k))
    # K = 1, 2: three below 0.05 and 0.05 / 1.5; K = 3: 1/36 = 0.0278 is not below 0.05 / c(3) = 0.0273
    assert kept.tolist() == [False, True, True, False] and threshold == pytest.approx(0.05 / by_constant(3))
    fdr = false_discovery([0.2, 0.001, 0.04, 0.03], [1 / 6, 1e-4, 1e-4, 1 / 36], alpha=0.05)
    assert (
        fdr.size == 2
        and fdr.adjusted[1] == pytest.approx(2 * 1.5 * 0.001)
        and fdr.adjusted[2] == pytest.approx(min(1, 2 * 1.5 * 0.04 / 2))
    )


def _hypotheses(p, p_min, primary, informative=None) -> pd.DataFrame:
    n = len(p)
    return pd.DataFrame(
        {
            "hypothesis": [f"h{i}" for i in range(n)],
            "study": "s",
            "source": "f",
            "question": "q",
            "primary": primary,
            "p_value": p,
            "p_min": p_min,
            "size": float("nan"),
            "informative": informative if informative is not None else [True] * n,
            "limit": "",
        }
    )


def test_the_plan_puts_primary_questions_in_holm_and_the_rest_in_one_fdr_family():
    decided = decide_hypotheses(
        _hypotheses(
            [0.004, 0.03, 0.0001, 0.2, 0.03, 1.0, 0.001],
            [1e-4, 1e-4, 1e-4, 1 / 6, 1e-4, 1e-4, 1e-4],
            [True, True, False, False, False, False, False],
            [True, True, True, True, True, False, True],
        ),
        alpha=0.05,
    ).set_index("hypothesis")
    assert decided["family"].tolist() == [
        "confirmatory",
        "confirmatory",
        "secondary",
        "untestable",
        "secondary",
        "uninformative",
        "secondary",
    ]
    # Holm over the two primary questions: 0.004 x 2, then max(0.008, 0.03)
    assert decided.loc[["h0", "h1"], "p_adjusted"].tolist() == pytest.approx([0.008, 0.03])
    # Benjamini-Yekutieli over the three testable secondary ones (c(3) = 11/6)
    c = 11 / 6
    expected = {"h2": 3 * c * 0.0001, "h6": 3 * c * 0.001 / 2, "h4": 3 * c * 0.03 / 3}
    for key, value in expected.items():
        assert (
            decided.loc[key, "p_adjusted"] == pytest.approx(value)
            and decided.loc[key, "procedure"] == "Benjamini-Yekutieli"
        )
    assert decided.loc["h4", "nominal"] and not decided.loc["h4", "significant"]  # 0.03 < 0.05, q = 0.055
    assert decided["significant"].tolist() == [True, True, True, False, False, False, True]
    assert decided.loc["h3", ["p_adjusted"]].isna().all() and not decided.loc["h3", "significant"]


def test_a_plan_refuses_two_tests_under_one_id():
    hypotheses = _hypotheses([0.1, 0.2], [1e-4, 1e-4], [False, False]).assign(hypothesis="same")
    with pytest.raises(ValueError, match="unique"):
        decide_hypotheses(hypotheses, alpha=0.05)


def test_a_test_that_ties_keep_below_its_level_is_untestable_and_says_so():
    """A permutation test whose size at alpha is below LEVEL_BAND's lower end (most relabellings tie) marks
    nothing, however small its p, and leaves its family smaller; one at its level is tested as before."""
    from plmfair.rendering.marks import note

    hypotheses = _hypotheses([0.001, 0.001, 0.2], [1e-4, 1e-4, 1e-4], [False, False, False]).assign(
        size=[0.012, 0.05, float("nan")]
    )
    decided = decide_hypotheses(hypotheses, alpha=0.05).set_index("hypothesis")
    assert decided["family"].tolist() == ["untestable", "secondary", "secondary"]
    assert decided.loc["h1", "family_size"] == 2 and not decided.loc["h0", "significant"]
    assert "ties" in note(decided.loc["h0"]) and "0.012" in note(decided.loc["h0"]) and note(decided.loc["h1"]) == ""


def test_the_intersection_union_p_is_the_largest_and_one_on_the_other_side():
    assert intersection_union_p([0.01, 0.003, 0.04], [True, True, True]) == 0.04
    assert intersection_union_p([0.01, 0.003], [True, False]) == 1.0
    assert intersection_union_p([0.01, float("nan")], [True, True]) == 1.0
    assert family_level(0.05, 4) == 0.0125 and family_level(0.05, 1) == 0.05 and family_level(0.05, 0) == 0.0
    decided = pd.DataFrame({"hypothesis": ["a", "b"], "family": ["confirmatory", "untestable"], "family_size": [3, 0]})
    assert primary_family_sizes(decided, ["a", "b", "c"]) == {"a": 3, "b": 0, "c": 0}
    assert primary_family_sizes(None, ["a"]) == {"a": 1}


def test_a_difference_one_writer_carries_is_noise_when_writers_are_the_units():
    """Ten writers of ten pairs; the second specification moves writer 0's ten pairs from the less to the more
    stereotyping sentence. With the pairs as units, ten moves one way differ beyond noise; with the writers
    as units, it is one writer's move, which their resampling does not tell from noise. A specification equal
    to the first on every unit cannot differ (p 1)."""
    rng = np.random.default_rng(3)
    first = (rng.random(100) < 0.5).astype(float)
    first[:10] = 0.0
    moved = first.copy()
    moved[:10] = 1.0
    biased = np.column_stack([first, moved, first])
    decisive = np.ones_like(biased)
    difference, p = differences_from_first(biased, decisive, replicates=1999, seed=0)
    assert np.isnan(difference[0]) and np.isnan(p[0]) and difference[1] == pytest.approx(10.0) and p[2] == 1.0
    assert p[1] < 0.01
    writer = np.repeat(np.arange(10), 10)
    per_writer = [np.column_stack([np.bincount(writer, weights=c) for c in m.T]) for m in (biased, decisive)]
    difference, p = differences_from_first(*per_writer, replicates=1999, seed=0)
    assert difference[1] == pytest.approx(10.0) and p[1] > 0.2
