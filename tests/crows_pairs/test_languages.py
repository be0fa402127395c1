"""CrowS-Pairs data sets (languages) compared on shared pairs, on tables computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from plmfair.crows_pairs.languages import language_effects, language_winloss


def crows_frame(ids, biased, margins, status=None):
    return pd.DataFrame(
        {
            "pair_id": ids,
            "biased": biased,
            "status": status or ["ok"] * len(ids),
            "sent_more_score": margins,
            "sent_less_score": 0.0,
            "neutral": [m == 0 for m in margins],
        }
    )


def test_language_winloss_is_a_paired_test_on_shared_pairs():
    per_pair = {
        ("en", "m"): crows_frame(["1", "2", "3", "4", "5"], [True, True, True, False, True], [1, 2, 3, -1, 1]),
        ("fr", "m"): crows_frame(["1", "2", "3", "4", "6"], [False, False, True, True, True], [-1, -2, 1, 2, 1]),
        ("en", "solo"): crows_frame(["1"], [True], [1.0]),  # one data set only: no comparison
    }
    wl = language_winloss(per_pair, langs={"en": "en", "fr": "fr"}, alpha=0.05)
    assert len(wl) == 1
    row = wl.iloc[0]
    # shared pairs 1-4: en only on 1 and 2, fr only on 4, both on 3
    assert (row["n_pairs"], row["wins_a"], row["wins_b"], row["ties"]) == (4, 2, 1, 1)
    assert row["p_one_sided"] == pytest.approx(0.5)  # exact: P(X >= 2), X ~ Bin(3, 1/2)
    assert row["score_a"] == pytest.approx(75.0) and row["score_b"] == pytest.approx(50.0)
    # the change b - a = (1 - 2) / 4; p: the larger of the mid-p McNemar's, 2 (P(X < 1) + P(X = 1) / 2) =
    # 2 (1 + 3 / 2) / 8, and the score test's, 2 (1 - Phi(1 / sqrt 3)); Tango's interval around the change
    assert row["change"] == pytest.approx(-25.0) and row["ci_low"] < -25.0 < row["ci_high"]
    assert row["p_value"] == pytest.approx(max(5 / 8, 2 * stats.norm.sf(1 / math.sqrt(3))))
    assert row["p_min"] == pytest.approx(0.5**3) and row["hypothesis"] == "crows_pairs/language_winloss/m/en/fr"


def test_language_winloss_leaves_neutral_pairs_out_as_the_summary_does():
    """A pair neutral in one data set is neither a win nor a loss: the summary's binomial test leaves
    neutral pairs out, so the paired test does too, and counts them."""
    per_pair = {
        ("en", "m"): crows_frame(["1", "2", "3", "4"], [True, True, False, True], [1, 2, 0, 1]),
        ("fr", "m"): crows_frame(["1", "2", "3", "4"], [False, False, True, False], [0, -2, 1, -1]),
    }
    row = language_winloss(per_pair, langs={"en": "en", "fr": "fr"}, alpha=0.05).iloc[0]
    # pair 1 neutral in fr, pair 3 neutral in en: left out; 2 and 4 preferred in en only
    assert (row["n_pairs"], row["n_neutral"], row["wins_a"], row["wins_b"]) == (2, 2, 2, 0)
    assert row["score_a"] == pytest.approx(100.0) and row["score_b"] == pytest.approx(0.0)


def test_language_effects_margin_model():
    ids = [str(i) for i in range(8)]
    base = np.array([0.0, 3.0, -2.0, 5.0, 1.0, -4.0, 2.0, 0.5])
    shift = np.array([1.0, 2.0, 0.0, 1.5, 1.0, 0.5, 2.5, 1.5])
    per_pair = {
        ("en", "m"): crows_frame(ids, [True] * 8, base),
        ("de", "m"): crows_frame(ids, [True] * 8, base + shift),
    }
    eff = language_effects(per_pair, langs={"en": "en", "de": "de"})
    de = eff[eff["term"] == "dataset[T.de]"].iloc[0]
    assert de["estimate"] == pytest.approx(shift.mean(), abs=1e-4)
    assert de["std_err"] == pytest.approx(shift.std(ddof=1) / math.sqrt(8), abs=1e-4)
    assert de["reference"] == "en" and de["lang"] == "de" and de["n_pairs"] == 8 and bool(de["converged"])
    # an effect size: no mark (its Wald interval kept, unprinted, for programs)
    assert "significant" not in eff.columns and de["ci_low"] < de["estimate"] < de["ci_high"]
