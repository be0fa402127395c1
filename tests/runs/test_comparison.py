"""Did it move? Two scorings of the same CrowS-Pairs pairs compared pair by pair, checked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from plmfair.crows_pairs.changes import change_table, outcomes, paired_change
from plmfair.crows_pairs.plan import MCNEMAR
from plmfair.crows_pairs.questions import questions
from plmfair.crows_pairs.schemas import with_outcomes
from plmfair.crows_pairs.summary import compare_models
from plmfair.crows_pairs.tables import changes_table
from plmfair.errors import DataError
from plmfair.multiplicity import decide_hypotheses
from plmfair.rendering.table_format import printed
from plmfair.stats.paired import tango_interval

MARGIN = {"more": 1.0, "neutral": 0.0, "less": -1.0}


def scoring(results, status=None):
    """A per-pair file whose pairs a..e have the given outcomes (margins +1, 0, -1)."""
    n = len(results)
    frame = pd.DataFrame(
        {
            "pair_id": list("abcde")[:n],
            "bias_type": "gender",
            "stereo_antistereo": "stereo",
            "origin": "native",
            "cluster": None,
            "sent_more_score": [-10.0 + MARGIN[r] for r in results],
            "sent_less_score": -10.0,
            "n_masked_more": 3,
            "n_masked_less": 3,
            "status": status or ["ok"] * n,
        }
    )
    return with_outcomes(frame, precision="float32", rounded=True)


def test_the_transitions_changes_and_test_by_hand():
    first = scoring(["more", "more", "less", "more", "neutral"])
    second = scoring(["less", "more", "neutral", "more", "more"], status=["ok", "ok", "ok", "skipped_missing", "ok"])
    row = paired_change(outcomes(first), outcomes(second), where="d", alpha=0.05)
    # d is not scored by the second: 4 pairs matched; a more->less, b more->more, c less->neutral, e neutral->more
    assert row["n"] == 4 and (row["more_to_less"], row["more_to_more"]) == (1, 1)
    assert (row["less_to_neutral"], row["neutral_to_more"]) == (1, 1) and row["less_to_less"] == 0
    assert (row["moved_up"], row["moved_down"]) == (2, 1) and not row["identical"]
    # decisive under both: a (more, less) and b (more, more): 100% -> 50%, none rose, one fell
    assert row["n_decisive"] == 2 and (row["decisive_a"], row["decisive_b"]) == (100.0, 50.0)
    assert row["decisive_change"] == pytest.approx(-50.0)
    low, high = tango_interval(0, 1, 2)
    assert (row["decisive_low"], row["decisive_high"]) == (pytest.approx(100 * low), pytest.approx(100 * high))
    # p: the larger of the mid-p McNemar's, 2 x (P(X < 0) + P(X = 0) / 2) = 0.5 for X ~ Bin(1, 1/2), and the
    # score test's, 2 x (1 - Phi(1)) = 0.317
    assert row["decisive_p"] == pytest.approx(0.5) and row["decisive_p_min"] == pytest.approx(0.5)
    # Nangia's rule (rounded scores: a neutral pair is not biased): a 1 -> 0, b 1 -> 1, c 0 -> 0, e 0 -> 1
    assert (row["nangia_a"], row["nangia_b"], row["nangia_change"]) == (50.0, 50.0, 0.0)
    assert row["nangia_low"] < 0 < row["nangia_high"] and row["nangia_p"] == pytest.approx(1.0)


def test_nothing_moved_is_identical_and_untested_and_a_model_is_never_compared_with_itself():
    same = scoring(["more", "less", "neutral"])
    table = change_table(
        [
            {
                "dataset": "d",
                "a": "r1/m",
                "b": "r2/m",
                **paired_change(outcomes(same), outcomes(same), where="d", alpha=0.05),
            }
        ],
        source="compare",
    )
    decided = decide_hypotheses(
        questions({MCNEMAR: table}).assign(source="compare"),
        alpha=0.05,
    )
    cells = printed(changes_table(table, decided, alpha=0.05))
    assert table.loc[0, "identical"] and (table.loc[0, ["decisive_p", "nangia_p"]] == 1.0).all()
    assert (cells["note"] == "identical (no pair moved)").all() and (cells["p adjusted"] == "").all()
    assert (cells["change"] == "0.00").all()
    rows = compare_models({"m1": same, "m2": scoring(["less", "less", "more"])}, dataset="d", alpha=0.05)
    assert [(r["a"], r["b"]) for r in rows] == [("m1", "m2")]


def test_pairs_of_another_data_set_are_refused():
    first = outcomes(scoring(["more", "less"]))
    second = outcomes(scoring(["more", "less"]).assign(bias_type="age"))
    with pytest.raises(DataError, match="not the same pairs"):
        paired_change(first, second, where="d", alpha=0.05)


def test_cloze_changes_are_paired_by_annotation_and_tested_by_flipping_sentences_by_hand():
    from plmfair.cloze.changes import annotation_changes

    rows = [
        {
            "model": "m",
            "lang": "fr",
            "s_id": s,
            "u_id": f"{g}{k}",
            "group": g,
            "answer": "x",
            "hit1": 0,
            "hit5": 1,
            "rr": 0.5,
        }
        for g in ("MN", "FN", "MNN", "FNN")
        for k in range(2)
        for s in ("1", "2")
    ]
    first = pd.DataFrame(rows)
    second = first.copy()
    second.loc[(second["u_id"] == "MN0") & (second["s_id"] == "1"), ["hit1", "rr"]] = [1, 1.0]
    # an annotation the first scoring does not have is not compared
    second = pd.concat([second, second.iloc[:1].assign(u_id="new")], ignore_index=True)
    out = annotation_changes(first, second, alpha=0.05, permutations=4999, seed=0).set_index(
        ["lang", "group", "metric"]
    )
    mn = out.loc[("fr", "MN", "p_at_1")]
    assert mn["n"] == 4 and mn["value_a"] == 0 and mn["value_b"] == pytest.approx(25.0)
    assert mn["change"] == pytest.approx(25.0)
    # by hand: two sentences, four ways to give each its first or second scoring; swapping sentence 1 turns
    # the change to -25, swapping 2 changes nothing: |change| is 25 under all four, p = 4 / 4, and no data
    # on these sentences could give less (every assignment ties): size 0
    assert mn["p_value"] == pytest.approx(1.0) and mn["p_min"] == pytest.approx(1.0) and mn["sentences"] == 2
    assert mn["size"] == 0
    assert out.loc[("fr", "FN", "p_at_1"), "change"] == 0 and out.loc[("fr", "all", "mrr"), "n"] == 16
    # sigma_gd of P@1: 0 before; after, the four group means are 25, 0, 0, 0: sd 10.825...
    sigma = out.loc[("fr", "σ_gd", "p_at_1")]
    assert sigma["value_a"] == 0 and sigma["value_b"] == pytest.approx(np.std([25, 0, 0, 0]))
    assert out.loc[("all", "all", "p_at_1"), "change"] == pytest.approx(100 / 16)


def test_the_flip_test_rejects_a_change_on_many_sentences():
    from plmfair.cloze.changes import annotation_changes

    rows = [
        {
            "model": "m",
            "lang": "fr",
            "s_id": str(s),
            "u_id": f"{g}",
            "group": g,
            "answer": "x",
            "hit1": 0,
            "hit5": 0,
            "rr": 0.0,
        }
        for g in ("MN", "FN", "MNN", "FNN")
        for s in range(20)
    ]
    first = pd.DataFrame(rows)
    second = first.assign(hit1=1, rr=1.0)  # every annotation a hit in the second scoring: 20 sentences moved up
    out = annotation_changes(first, second, alpha=0.05, permutations=999, seed=0).set_index(["lang", "group", "metric"])
    row = out.loc[("fr", "all", "p_at_1")]
    # 2^20 assignments: 999 drawn; only the observed one and its mirror image are as extreme
    assert row["change"] == 100.0 and row["p_value"] < 0.01 and row["p_min"] == pytest.approx(1 / 1000)


def test_compare_reads_each_runs_annotation_scores_and_never_a_model_against_itself(tmp_path):
    from plmfair.cloze.run_changes import changes
    from plmfair.io.parquet import write_parquet

    rows = [
        {
            "model": m,
            "lang": "fr",
            "s_id": "1",
            "u_id": f"{g}0",
            "group": g,
            "answer": "x",
            "hit1": 0,
            "hit5": 0,
            "rr": 0.0,
        }
        for m in ("m", "other")
        for g in ("MN", "FN", "MNN", "FNN")
    ]
    records, folders = {}, {}
    for run, hit in (("r1", 0), ("r2", 1)):
        frame = pd.DataFrame(rows).assign(hit1=hit)
        folders[run] = tmp_path / run
        write_parquet(frame, folders[run] / "results" / "cloze" / "mozart" / "annotation_scores.parquet")
        records[run] = {
            "config": {"analysis": {"permutations": 999, "seed": 0}},
            "results": {"cloze": [{"set": "mozart", "model": m} for m in ("m", "other")]},
        }
    table = changes(folders, records, alpha=0.05, source="compare")
    assert sorted(set(zip(table["a"], table["b"], strict=True))) == [("r1/m", "r2/m"), ("r1/other", "r2/other")]
    p_at_1 = table[(table["group"] == "all") & (table["metric"] == "p_at_1") & (table["lang"] == "fr")]
    assert p_at_1["change"].tolist() == [100.0, 100.0]  # every annotation a miss in r1, a hit in r2
    # one sentence: its two assignments give +100 and -100, as extreme as each other
    assert p_at_1["p_value"].tolist() == [1.0, 1.0] and table["hypothesis"].is_unique
    # a file the record lists, gone: named, with the command that rebuilds its run
    lost = folders["r2"] / "results" / "cloze" / "mozart" / "annotation_scores.parquet"
    lost.unlink()
    with pytest.raises(DataError, match=rf"{lost}: missing, though the record of run r2 lists it; rebuild"):
        changes(folders, records, alpha=0.05, source="compare")
