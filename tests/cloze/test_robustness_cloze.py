"""A cloze set's verdict on its annotator groups under every other metric and with each annotator left out
(plmfair.cloze.robustness), on constructed annotation scores whose driving annotators are known."""

import numpy as np
import pandas as pd
import pytest

from plmfair.cloze.robustness import cloze_robustness
from plmfair.cloze.schemas import CLOZE_ROBUSTNESS_SCHEMA, CLOZE_SPECIFICATIONS_SCHEMA

GROUPS = ("MN", "FN", "MNN", "FNN")


def scores(levels, *, per_group: int = 3, sentences: int = 20, hit1: float = 0.5, seed: int = 0) -> pd.DataFrame:
    """Every annotator (``<group><k>``, ``per_group`` a group) answers every sentence at the level
    ``levels(u_id, group, rng)`` gives it, each answer 0.02 about it (noise); hit1 above ``hit1``, hit5 above
    0.15."""
    rng = np.random.default_rng(seed)
    rows = []
    for group in GROUPS:
        for k in range(per_group):
            u_id = f"{group}{k}"
            level = levels(u_id, group, rng)
            for s in range(sentences):
                rr = level + 0.02 * rng.standard_normal()
                rows.append(
                    {
                        "model": "m",
                        "lang": "en",
                        "s_id": f"s{s}",
                        "u_id": u_id,
                        "group": group,
                        "rr": rr,
                        "hit1": float(rr > hit1),
                        "hit5": float(rr > 0.15),
                    }
                )
    return pd.DataFrame(rows)


def planted(u_id, group, rng) -> float:
    """One FNN annotator at 0.9, every other at about 0.2."""
    return 0.9 if u_id == "FNN1" else 0.2 + 0.05 * rng.standard_normal()


def shifted(u_id, group, rng) -> float:
    """Each annotator at a level of its own (sd 0.05 about 0.2), the FN group's 0.06 higher and FN0 at 0.35:
    a group difference of which one annotator carries much."""
    level = 0.2 + 0.05 * rng.standard_normal() + (0.06 if group == "FN" else 0)
    return 0.35 if u_id == "FN0" else level


def robustness(frame: pd.DataFrame, decided: pd.DataFrame | None = None):
    specs, summary = cloze_robustness(frame, alpha=0.05, permutations=999, seed=2022, cloze_set="t", hypotheses=decided)
    assert list(specs.columns) == list(CLOZE_SPECIFICATIONS_SCHEMA)
    assert list(summary.columns) == list(CLOZE_ROBUSTNESS_SCHEMA)
    (row,) = summary.to_dict(orient="records")
    return specs, row


def test_one_planted_annotator_driving_the_disparity_is_named():
    specs, row = robustness(scores(planted))
    assert row["most_influential"] == "en:FNN1" and row["largest_change"] < -5
    # an annotator-level test does not call one annotator a group difference: the verdict stays, and holds
    assert row["verdict"] == "no difference shown" and row["removals_short"] == 0 and row["holding"] == len(specs)
    # no difference shown is no claim: it cannot be robust, and has no intersection-union p
    assert not row["robust"] and np.isnan(row["p_all"])
    # every other metric, then every annotator left out, beside the run's own
    assert row["specifications"] == 1 + 2 + 12 == len(specs)
    assert row["counted"] == "1 + 2 other metrics + 12 annotators left out"


def test_a_clear_difference_holds_without_any_one_annotator_and_the_metric_that_cannot_see_it_is_named():
    _, row = robustness(scores(shifted, per_group=4, hit1=0.3, seed=10))
    assert row["verdict"] == "groups differ" and row["p_value"] < 0.01
    # nearly every answer is in the top 5: P@5 falls short, so the verdict is not robust (no claim that it flips)
    assert row["removals_short"] == 0 and row["short_of"] == "metric=P@5" and not row["robust"]
    assert row["holding"] == row["specifications"] - 1 and row["p_all"] >= 0.05


def test_a_borderline_difference_one_annotator_carries_falls_short_without_it():
    specs, row = robustness(scores(shifted, per_group=4, hit1=0.3, seed=8))
    assert row["verdict"] == "groups differ" and 0.04 < row["p_value"] < 0.05
    assert row["removals_short"] >= 1 and not row["robust"]
    assert "without en:FN0" in row["short_of"].split(" | ")
    (without,) = specs[specs["left_out"] == "en:FN0"].to_dict(orient="records")
    assert without["verdict"] == "no difference shown" and without["sigma_gd"] < row["sigma_gd"]


def test_a_robust_claim_is_held_to_the_level_of_its_confirmatory_family():
    """The level comes from the run's hypotheses: alpha over the size of the family the primary question is
    in (Bonferroni); a primary question the hypotheses leave untestable makes no claim at all."""
    frame = scores(shifted, per_group=4, hit1=0.3, seed=10)
    models = frame["model"].unique()
    ids = [f"cloze/t/group_disparity/{m}/all/mrr" for m in models]
    decided = pd.DataFrame({"hypothesis": ids, "family": "confirmatory", "family_size": 3})
    specs, row = robustness(frame, decided)
    assert row["family_size"] == 3 and row["level"] == pytest.approx(0.05 / 3)
    own = specs[specs["changed"] == ""].iloc[0]
    assert own["holds"] == (own["p_value"] < 0.05 / 3)
    untestable = decided.assign(family="untestable")
    _, row = robustness(frame, untestable)
    assert row["family_size"] == 0 and row["level"] == 0 and not row["robust"] and row["holding"] == 0
