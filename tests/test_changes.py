"""Did it move? Two scorings of the same CrowS-Pairs pairs compared pair by pair, checked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from plmfair.crows_pairs.changes import change_table, outcomes, paired_change
from plmfair.crows_pairs.schemas import with_outcomes
from plmfair.crows_pairs.summary import compare_models
from plmfair.crows_pairs.tables import changes_table
from plmfair.errors import DataError
from plmfair.rendering.table_format import printed

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
    row = paired_change(outcomes(first), outcomes(second), where="d")
    # d is not scored by the second: 4 pairs matched; a more->less, b more->more, c less->neutral, e neutral->more
    assert row["n"] == 4 and (row["more_to_less"], row["more_to_more"]) == (1, 1)
    assert (row["less_to_neutral"], row["neutral_to_more"]) == (1, 1) and row["less_to_less"] == 0
    assert (row["moved_up"], row["moved_down"]) == (2, 1) and row["p_value"] == pytest.approx(1.0)
    # decisive share 2 of 3 in both; net preference (1 + 1 - 1 + 0) / 4 = 25% in both; Nangia's 2/4 in both
    assert row["decisive_a"] == pytest.approx(200 / 3) and row["decisive_change"] == pytest.approx(0.0)
    assert row["net_change"] == pytest.approx(0.0) and row["nangia_change"] == pytest.approx(0.0)
    assert row["nangia_low"] <= row["nangia_change"] <= row["nangia_high"] and not row["identical"]


def test_nothing_moved_is_identical_not_p_one_and_a_model_is_never_compared_with_itself():
    same = scoring(["more", "less", "neutral"])
    table = change_table(
        [{"dataset": "d", "a": "r1/m", "b": "r2/m", **paired_change(outcomes(same), outcomes(same), where="d")}],
        alpha=0.05,
    )
    cells = printed(changes_table(table)).iloc[0]
    assert table.loc[0, "identical"] and pd.isna(table.loc[0, "p_value"]) and cells["test"] == "identical"
    assert cells["p"] == "" and cells["net preference change"] == "0.00"
    rows = compare_models({"m1": same, "m2": scoring(["less", "less", "more"])}, dataset="d")
    assert [(r["a"], r["b"]) for r in rows] == [("m1", "m2")]


def test_pairs_of_another_data_set_are_refused():
    first = outcomes(scoring(["more", "less"]))
    second = outcomes(scoring(["more", "less"]).assign(bias_type="age"))
    with pytest.raises(DataError, match="not the same pairs"):
        paired_change(first, second, where="d")


def test_cloze_changes_are_paired_by_annotation_by_hand():
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
    out = annotation_changes(first, second).set_index(["lang", "group", "metric"])
    mn = out.loc[("fr", "MN", "p_at_1")]
    assert mn["n"] == 4 and mn["value_a"] == 0 and mn["value_b"] == pytest.approx(25.0)
    assert mn["change"] == pytest.approx(25.0) and mn["low"] <= 25.0 <= mn["high"]
    assert out.loc[("fr", "FN", "p_at_1"), "change"] == 0 and out.loc[("fr", "all", "mrr"), "n"] == 16
    # sigma_gd of P@1: 0 before; after, the four group means are 25, 0, 0, 0: sd 10.825...
    sigma = out.loc[("fr", "σ_gd", "p_at_1")]
    assert sigma["value_a"] == 0 and sigma["value_b"] == pytest.approx(np.std([25, 0, 0, 0]))
    assert out.loc[("all", "all", "p_at_1"), "change"] == pytest.approx(100 / 16)


def test_compare_reads_each_runs_annotation_scores_and_never_a_model_against_itself(tmp_path):
    from plmfair.io.parquet import write_parquet
    from plmfair.rendering.table_format import to_markdown
    from plmfair.runs.comparison import cloze_changes

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
        records[run] = {"results": {"cloze": [{"set": "mozart", "model": m} for m in ("m", "other")]}}
    table = cloze_changes(folders, records)
    assert sorted(set(zip(table["a"], table["b"], strict=True))) == [("r1/m", "r2/m"), ("r1/other", "r2/other")]
    p_at_1 = table[(table["group"] == "all") & (table["metric"] == "p_at_1") & (table["lang"] == "fr")]
    assert p_at_1["change"].tolist() == [100.0, 100.0]  # every annotation a miss in r1, a hit in r2
    printed = to_markdown(table)
    assert "interval (95%)" in printed and "[100.00, 100.00]" in printed
