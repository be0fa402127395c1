"""A cloze set's verdict on its annotator groups under every other metric and with each annotator left out
(plmfair.cloze.robustness), on constructed annotation scores whose driving annotators are known."""

import numpy as np
import pandas as pd

from plmfair.cloze.robustness import cloze_robustness
from plmfair.cloze.schemas import CLOZE_ROBUSTNESS_SCHEMA, CLOZE_SPECIFICATIONS_SCHEMA

GROUPS = ("MN", "FN", "MNN", "FNN")


def scores(high: dict[str, float], *, sentences: int = 20, per_group: int = 3, seed: int = 0) -> pd.DataFrame:
    """Every annotator (``<group><k>``, ``per_group`` a group) answers every sentence; an annotator's
    reciprocal rank is 0.9 where ``high`` names it, else about 0.2 (noise), and hit1/hit5 follow it."""
    rng = np.random.default_rng(seed)
    rows = []
    for group in GROUPS:
        for k in range(per_group):
            u_id = f"{group}{k}"
            for s in range(sentences):
                rr = high.get(u_id, 0.2 + 0.05 * rng.standard_normal())
                rows.append(
                    {
                        "model": "m",
                        "lang": "en",
                        "s_id": f"s{s}",
                        "u_id": u_id,
                        "group": group,
                        "rr": rr,
                        "hit1": float(rr > 0.5),
                        "hit5": float(rr > 0.15),
                    }
                )
    return pd.DataFrame(rows)


def robustness(frame: pd.DataFrame):
    specs, summary = cloze_robustness(frame, alpha=0.05, permutations=999, seed=2022)
    assert list(specs.columns) == list(CLOZE_SPECIFICATIONS_SCHEMA)
    assert list(summary.columns) == list(CLOZE_ROBUSTNESS_SCHEMA)
    (row,) = summary.to_dict(orient="records")
    return specs, row


def test_one_planted_annotator_driving_the_disparity_is_named():
    specs, row = robustness(scores({"FNN1": 0.9}))
    assert row["most_influential"] == "en:FNN1" and row["largest_change"] < -5
    # an annotator-level test does not call one annotator a group difference: the verdict stays, and holds
    assert row["verdict"] == "no difference shown" and not row["annotator_flips"]
    # every other metric, then every annotator left out, beside the run's own
    assert row["specifications"] == 1 + 2 + 12 == len(specs)


def shifted(seed: int) -> pd.DataFrame:
    """Four annotators a group, each at a level of its own (sd 0.05 about 0.2), the FN group's 0.06 higher
    and FN0 at 0.35: a group difference of which one annotator carries much."""
    rng = np.random.default_rng(seed)
    rows = []
    for group in GROUPS:
        for k in range(4):
            u_id = f"{group}{k}"
            level = 0.2 + 0.05 * rng.standard_normal() + (0.06 if group == "FN" else 0)
            level = 0.35 if u_id == "FN0" else level
            for s in range(20):
                rr = level + 0.02 * rng.standard_normal()
                rows.append(
                    {
                        "model": "m",
                        "lang": "en",
                        "s_id": f"s{s}",
                        "u_id": u_id,
                        "group": group,
                        "rr": rr,
                        "hit1": float(rr > 0.3),
                        "hit5": float(rr > 0.15),
                    }
                )
    return pd.DataFrame(rows)


def test_a_clear_difference_holds_without_any_one_annotator_and_the_metric_that_cannot_see_it_is_named():
    _, row = robustness(shifted(10))
    assert row["verdict"] == "groups differ" and row["p_value"] < 0.01
    assert not row["annotator_flips"] and row["flipped_by"] == "metric=P@5"  # nearly every answer is in the top 5


def test_a_borderline_difference_one_annotator_carries_flips_without_it():
    specs, row = robustness(shifted(8))
    assert row["verdict"] == "groups differ" and 0.04 < row["p_value"] < 0.05
    assert row["annotator_flips"] and not row["robust"]
    assert "without en:FN0" in row["flipped_by"].split(" | ")
    (without,) = specs[specs["left_out"] == "en:FN0"].to_dict(orient="records")
    assert without["verdict"] == "no difference shown" and without["sigma_gd"] < row["sigma_gd"]
