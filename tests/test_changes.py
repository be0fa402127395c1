"""Did it move? Two scorings of the same CrowS-Pairs pairs compared pair by pair, checked by hand."""

from __future__ import annotations

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
