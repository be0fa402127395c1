"""A CrowS-Pairs verdict under every scoring choice (plmfair.crows_pairs.robustness), on constructed pair
scores whose verdict each choice is known to keep or flip."""

import pandas as pd
import pytest

from plmfair.crows_pairs.robustness import robustness
from plmfair.crows_pairs.schemas import ROBUSTNESS_SCHEMA, SPECIFICATIONS_SCHEMA
from plmfair.errors import DataError


def pairs(margins, *, tolerance=1e-6) -> pd.DataFrame:
    """A scored pair file with these margins (sent_more_score - sent_less_score), ids p0, p1, ..."""
    return pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(len(margins))],
            "status": "ok",
            "sent_more_score": [-10.0 + m for m in margins],
            "sent_less_score": -10.0,
            "tolerance": tolerance,
            "undecided": False,
        }
    )


STEREO = [1.0] * 45 + [-1.0] * 15  # 45 of 60: p = 0.0001, interval above 50
EVEN = [1.0] * 30 + [-1.0] * 30


def run(scores: dict, protocol="nangia", **options):
    settings = {"ties": [0.01], "exclusions": None, "alpha": 0.05, "max_grid": 64, **options}
    specs, summary = robustness(
        [{"dataset": "demo_fr", "model": "m", "protocol": protocol, "scores": scores}],
        langs={"demo_fr": "fr"},
        **settings,
    )
    assert list(specs.columns) == list(SPECIFICATIONS_SCHEMA) and list(summary.columns) == list(ROBUSTNESS_SCHEMA)
    (row,) = summary.to_dict(orient="records")
    return specs, row


def test_a_preference_only_one_protocol_shows_is_fragile_with_that_protocol_named():
    specs, row = run({"nangia": pairs(EVEN), "all_tokens": pairs(EVEN), "aul": pairs(STEREO)})
    # the run's own protocol finds no preference; every specification with aul finds one
    assert row["verdict"] == "no preference" and row["estimate"] == 50.0 and not row["robust"]
    assert row["design"] == "grid" and row["specifications"] == 3 * 2 and row["holding"] == 4
    assert row["flipped_by"] == "protocol=aul | protocol=aul; tie=0.01"
    assert row["largest_change"] == pytest.approx(25.0) and row["largest_change_by"] == "protocol=aul"
    flipped = specs[~specs["holds"]]
    assert set(flipped["protocol"]) == {"aul"} and set(flipped["verdict"]) == {"stereotypical"}
    # each verdict is the side of 50 its interval lies on, and the p that inverts it agrees
    for _, s in specs.iterrows():
        above, below = s["ci_low"] > 50, s["ci_high"] < 50
        assert s["verdict"] == ("stereotypical" if above else "anti-stereotypical" if below else "no preference")
        assert (s["p_value"] < 0.05) == (above or below)


def test_a_protocol_invariant_preference_is_robust():
    _, row = run({"nangia": pairs(STEREO), "all_tokens": pairs(STEREO), "within_word_l2r": pairs(STEREO)})
    assert row["verdict"] == "stereotypical" and row["robust"]
    assert row["holding"] == row["specifications"] == 6 and row["flipped_by"] == ""
    assert row["estimate"] == 75.0 and row["largest_change"] == 0.0


def test_an_exclusion_file_that_removes_the_pairs_driving_a_verdict_flips_it(tmp_path):
    margins = [1.0] * 40 + [-1.0] * 20  # 40 of 60: p = 0.013
    audit = tmp_path / "audit.csv"
    # 15 of the stereotype-preferring pairs fail the audit (and a pair of another data set is not this one's)
    rows = [f"demo_fr,p{i},names a group only" for i in range(15)] + ["demo_en,p20,other set"]
    audit.write_text("dataset,pair_id,reason\n" + "\n".join(rows) + "\n")
    specs, row = run({"nangia": pairs(margins)}, exclusions=audit, ties=[])
    assert row["verdict"] == "stereotypical" and not row["robust"] and row["specifications"] == 2
    assert row["flipped_by"] == "pairs=without audit.csv"
    (audited,) = specs[specs["pairs"] == "without audit.csv"].to_dict(orient="records")
    assert audited["n_decisive"] == 45 and audited["n_biased"] == 25 and audited["verdict"] == "no preference"


def test_a_coarser_tie_margin_that_neutralises_tiny_margins_flips_the_verdict():
    margins = [0.005] * 40 + [1.0] * 5 + [-1.0] * 15  # 45 of 60 at the pairs' own tolerance; 5 of 20 at 0.01
    _, row = run({"nangia": pairs(margins)}, ties=[0.01])
    assert row["verdict"] == "stereotypical" and row["flipped_by"] == "tie=0.01"
    assert row["largest_change"] == pytest.approx(75.0 - 25.0)


def test_a_large_grid_changes_one_axis_at_a_time_and_says_so():
    scores = {p: pairs(STEREO) for p in ("nangia", "all_tokens", "within_word_l2r", "aul")}
    specs, row = run(scores, ties=[0.001, 0.01], max_grid=8)  # 4 x 3 = 12 > 8
    assert row["design"] == "one axis at a time" and row["specifications"] == 1 + 3 + 2
    assert (specs["changed"].str.count(",") == 0).all()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("id,why\np1,x\n", "has no column pair_id, reason"),
        ("pair_id,reason\n,x\n", "row 2 has no pair_id"),
    ],
)
def test_a_bad_exclusion_file_is_named_with_what_to_do(tmp_path, text, said):
    path = tmp_path / "audit.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=said) as err:
        run({"nangia": pairs(STEREO)}, exclusions=path)
    assert str(path) in str(err.value)
