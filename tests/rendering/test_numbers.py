"""The display rule (plmfair.rendering.numbers): a printed number keeps its side of the null, of its
threshold and of alpha; never -0; levels exact."""

from __future__ import annotations

import math

import numpy as np
import pytest

from plmfair.rendering.numbers import compared, in_file, interval, level, number, p_value


def test_the_issues_examples_print_on_their_side():
    # an upper bound of 49.9887 against a null of 50, printed with one decimal, was "50.0"
    assert interval(45.1234, 49.9887, 1, keep=(50,)) == "[45.1, 49.99]"
    # an adjusted p of 0.0496 was "0.050*"
    assert (
        p_value(0.0496, alpha=0.05) == "0.0496"
        and p_value(0.04999, alpha=0.05) == "0.04999"
        and p_value(0.05, alpha=0.05) == "0.050"
    )
    # sigma_gd just under its threshold is printed under it, not equal to it; equal stays equal
    assert compared(8.3299, 8.3301, 2) == ("8.3299", "8.3301") and compared(8.33, 8.33, 2) == ("8.33", "8.33")
    assert compared(8.331, 8.339, 2) == ("8.33", "8.34") and compared(3.1, 8.2, 2) == ("3.10", "8.20")
    # a level that has no short decimal is printed exactly
    assert level(1 - 0.05 / 9, alpha=0.05) == "1 − 0.05/9" and level(0.95) == "95%" and level(0.995) == "99.5%"


def test_never_minus_zero():
    assert number(-0.0, 3) == "0.000" and number(0.0, 3) == "0.000"
    assert number(-0.0001, 3) == "-0.0001" and number(0.0001, 3) == "0.0001"  # nothing else prints as zero
    assert interval(-0.0, 0.167, 3, keep=(0,)) == "[0.000, 0.167]"


@pytest.mark.parametrize("seed", range(3))
def test_printed_numbers_agree_with_the_exact_ones_on_every_side(seed):
    rng = np.random.default_rng(seed)
    refs = (0.0, 50.0, 0.05)
    values = np.concatenate([rng.normal(50, 0.01, 300), rng.normal(0, 1e-4, 300), rng.uniform(0.04, 0.06, 300)])
    for v in values:
        for digits in (1, 2, 3):
            shown = float(number(v, digits, keep=refs))
            for r in refs:
                assert (shown > r) == (v > r) and (shown < r) == (v < r)
        p = p_value(v, alpha=0.05) if 0 < v < 1 else None
        if p and not p.startswith("<"):
            assert (float(p) < 0.05) == (v < 0.05)


def test_missing_integers_text_and_infinities():
    assert number(float("nan")) == "" and number(None) == "" and number(7) == "7" and number("x") == "x"
    assert interval(-math.inf, 0.2, 2, keep=(0,)) == "[-inf, 0.20]" and p_value(float("nan"), alpha=0.05) == ""


def test_an_untestable_note_prints_its_smallest_p_and_threshold_on_their_own_sides():
    """'0.009, not < 0.009' said nothing: the smallest attainable p and the family's threshold are each printed
    with the decimals that keep them apart, so the printed pair says what the numbers do."""
    import pandas as pd

    from plmfair.rendering.marks import note

    for p_min, threshold in ((0.00934, 0.00926), (0.0097, 0.0096), (0.0500001, 0.05)):
        row = pd.Series({"family": "untestable", "limit": "", "p_min": p_min, "threshold": threshold, "alpha": 0.05})
        text = note(row)
        smallest, limit = text.removeprefix("untestable (smallest attainable p ").removesuffix(")").split(", not < ")
        assert float(smallest) >= float(limit) and smallest != limit, text


@pytest.mark.parametrize(
    ("value", "as_p", "held"),
    [
        (0.28800000000000003, False, 0.288),  # 0.1 * 2.88: a rounding error off a short decimal
        (2.9999999999999996, False, 3.0),
        (-0.30000000000000004, False, -0.3),
        (50.00000000000001, False, 50.0),  # a share the display rule already calls 50 (EQUAL)
        (6.9e-17, False, 0.0),  # a difference of equal sums taken in another order (NOISE)
        (6.9e-17, True, 6.9e-17),  # a p-value can be that small, and is never rounded:
        (11.11111111111111, False, 11.11111111111111),  # 100 / 9: no shorter decimal, kept to the last digit
        (13.793103448275861, False, 13.793103448275861),
        (0.04999999999999999, True, 0.04999999999999999),  # its mark compares this float with alpha
    ],
)
def test_a_csv_holds_each_number_with_its_floating_point_noise_taken_off(value, as_p, held):
    assert in_file(value, p_value=as_p) == held
    assert in_file(7) == 7 and in_file("text") == "text" and math.isnan(in_file(float("nan")))
