"""Each primary answer says its direction in words: the side of the null its estimate lies on when the test is
significant after the run's adjustment, no evidence otherwise, and why there is no verdict where there is none."""

from __future__ import annotations

import pandas as pd

from plmfair.cloze.record_part import furthest_group
from plmfair.cloze.record_part import primary_answer as cloze_answer
from plmfair.crows_pairs.record_part import primary_answer as crows_pairs_answer


def _pairs_row(share, low, high, *, significant=True, family="confirmatory", p_adjusted=0.006):
    return {
        "decisive_score": share,
        "ci_low": low,
        "ci_high": high,
        "n_decisive": 1200,
        "model": "my_bert",
        "dataset": "fr",
        "family": family,
        "significant": significant,
        "p_adjusted": p_adjusted,
    }


def test_a_share_below_half_that_is_significant_prefers_the_less_stereotyping_sentence():
    said = crows_pairs_answer(_pairs_row(46.46, 43.95, 48.97), alpha=0.05)
    assert said == (
        "my_bert on fr: prefers the less stereotyping sentence: 46.5% of 1200 decisive pairs prefer the more "
        "stereotyping sentence [44.0, 49.0], 50% is no preference, exact sign test (its p is about these pairs: "
        "their writers are not known), p adjusted 0.006"
    )


def test_a_data_set_with_writers_is_answered_by_its_cluster_test_over_them():
    row = {**_pairs_row(56.8, 52.1, 61.4), "test": "cluster score test", "n_clusters": 77}
    said = crows_pairs_answer(row, alpha=0.05)
    assert "cluster score test over the source's 77 clusters of pairs (writers) as the units, p adjusted" in said
    one = crows_pairs_answer({**_pairs_row(56.8, 52.1, 61.4), "test": "exact sign test", "n_clusters": 1}, alpha=0.05)
    assert "exact sign test (one writer wrote every pair: its p is about these pairs)" in one


def test_a_share_above_half_prefers_the_more_and_an_unmarked_one_is_no_evidence():
    assert crows_pairs_answer(_pairs_row(56.8, 53.1, 60.4), alpha=0.05).startswith(
        "my_bert on fr: prefers the more stereotyping sentence: 56.8%"
    )
    said = crows_pairs_answer(_pairs_row(51.0, 47.9, 54.1, significant=False, p_adjusted=0.52), alpha=0.05)
    assert said.startswith("my_bert on fr: no evidence of a preference: 51.0%") and "p adjusted 0.52" in said


def test_an_interval_that_ends_near_the_null_keeps_its_side_in_words():
    # 49.96 rounds to 50.0: printed with the decimals that keep it below 50
    said = crows_pairs_answer(_pairs_row(47.0, 44.0, 49.96), alpha=0.05)
    assert "[44.0, 49.96]" in said


def test_an_untestable_or_uninformative_row_says_why_it_has_no_verdict():
    untestable = crows_pairs_answer(_pairs_row(75.0, None, None, significant=False, family="untestable"), alpha=0.05)
    assert untestable.startswith("my_bert on fr: untestable: 75.0%") and "cannot reach the run's level" in untestable
    uninformative = crows_pairs_answer(
        _pairs_row(0.0, None, None, significant=False, family="uninformative"), alpha=0.05
    )
    assert uninformative.startswith("my_bert on fr: no answer:")


def _metrics():
    rows = []
    for lang, n in (("en", 10), ("fr", 30)):
        for group, mrr in (("MN", 20.0), ("FN", 21.0), ("MNN", 19.0), ("FNN", 8.0 if lang == "fr" else 18.0)):
            rows.append({"model": "m", "lang": lang, "group": group, "n": n, "mrr": mrr})
    rows.append({"model": "m", "lang": "fr", "group": "all", "n": 120, "mrr": 17.0})
    return pd.DataFrame(rows)


def test_the_furthest_group_weighs_each_language_by_its_annotations():
    # FNN: (18 x 10 + 8 x 30) / 40 = 10.5 against the mean of 20, 21 and 19
    assert furthest_group(_metrics(), "m") == (
        "; furthest from the others: FNN (female non-native), MRR 10.5 against 20.0 (descriptive)"
    )


def test_a_cloze_answer_says_whether_the_groups_are_served_differently():
    row = {"debiased": 4.2, "ci_low": 1.5, "ci_high": 7.9, "family": "confirmatory", "significant": True,
           "p_adjusted": 0.004, "model": "m"}  # fmt: skip
    said = cloze_answer(row, _metrics(), "mozart", alpha=0.05)
    assert said.startswith(
        "m on mozart: serves the annotator groups differently: sigma_gd of MRR 4.20 percentage points"
    )
    assert "0 is no disparity, permutation test, p adjusted 0.004; furthest from the others: FNN" in said
    said = cloze_answer(
        {**row, "significant": False, "ci_low": 0.0, "p_adjusted": 0.3}, _metrics(), "mozart", alpha=0.05
    )
    assert said.startswith("m on mozart: no evidence that it serves the annotator groups differently")
