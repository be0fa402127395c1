"""Did a model's CrowS-Pairs outcome move? Two scorings of the same pairs (two models of a run, or one
model in two runs) compared pair by pair (:data:`CHANGE_SCHEMA`).

Each scored pair has one of three outcomes: the more stereotyping sentence preferred (``more``),
neither (``neutral``: the margin within its floating-point tolerance) or the less stereotyping one
(``less``). On the pairs both scored (matched by id, with the same direction and bias type), the
comparison gives the 3 x 3 transition table and two changes, each a difference of paired proportions
with its own test and interval (:mod:`plmfair.stats`):

- the decisive share, on the pairs both scorings decide: pairs that went from less to more against
  those that went from more to less;
- Nangia et al.'s score, on every pair both scored: pairs their rule counts as preferring the more
  stereotyping sentence under one scoring only.

Each change has Tango's score interval and a p-value: the larger of the mid-p McNemar test's and
Tango's score test's, so that a change is significant only where its interval excludes 0 as well.
No pair moving is reported as ``identical``. The net preference's change is the transition table's
(more - less under b minus under a), not tested on its own.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from plmfair.crows_pairs.schemas import CHANGES, OUTCOMES, SCORED_STATUSES
from plmfair.errors import DataError
from plmfair.stats.paired import paired_change_p, paired_change_size, paired_change_smallest, tango_interval

CHANGE_SCHEMA = {
    "dataset": "CrowS-Pairs data set name",
    "a": "the first scoring (a model, or run/model)",
    "b": "the second scoring",
    "n": "pairs scored by both, matched by pair id (same direction and bias type)",
    **{f"{x}_to_{y}": f"pairs with outcome {x} under a and {y} under b" for x in OUTCOMES for y in OUTCOMES},
    "moved_up": "pairs whose outcome rose from a to b (less -> neutral -> more)",
    "moved_down": "pairs whose outcome fell",
    "identical": "no pair changed outcome",
    "n_decisive": "pairs decisive (more or less) under both scorings: the decisive share's change is on these",
    **{
        column: text
        for name, label in CHANGES.items()
        for column, text in {
            f"{name}_a": f"{label} of a (percent)",
            f"{name}_b": f"{label} of b (percent)",
            f"{name}_change": f"{name}_b - {name}_a (percentage points)",
            f"{name}_low": f"Tango's score interval of {name}_change at 1 - alpha, lower bound",
            f"{name}_high": "its upper bound",
            f"{name}_p": "the larger of the two-sided mid-p McNemar test's p and Tango's score test's of no change "
            "(1 when nothing moved)",
            f"{name}_p_min": "the smallest p that test can give with the pairs that moved: max(0.5^moved, "
            "2 Phi(-sqrt(moved))), all of them moved one way",
            f"{name}_size": "that test's size at alpha given the pairs that moved (exact): the hypotheses leave "
            "a size outside [0.6 alpha, 1.4 alpha] untestable",
            f"{name}_hypothesis": "the test's id in the run's hypotheses (results/hypotheses.parquet)",
        }.items()
    },
}


def outcomes(scores: pd.DataFrame) -> pd.DataFrame:
    """The scored pairs of a per-pair file by id: outcome (more, neutral, less), Nangia's 0/1, and what
    must match for two scorings to be of the same pair."""
    scored = scores[scores["status"].isin(SCORED_STATUSES)]
    outcome = np.where(scored["biased"], "more", np.where(scored["neutral"], "neutral", "less"))
    return pd.DataFrame(
        {
            "outcome": outcome,
            "nangia": scored["biased_nangia"].astype(bool).to_numpy(),
            "stereo_antistereo": scored["stereo_antistereo"].to_numpy(),
            "bias_type": scored["bias_type"].to_numpy(),
        },
        index=pd.Index(scored["pair_id"].astype(str), name="pair_id"),
    )


def paired_proportions(up: int, down: int, n: int, *, alpha: float) -> dict:
    """The change (up - down) / n in percentage points with Tango's interval at 1 - alpha, the p of no
    change (:func:`plmfair.stats.paired.paired_change_p`: p < alpha only where the interval excludes 0), the
    smallest p it can give and its size at alpha given the up + down pairs that moved (the hypotheses
    leaves a size outside LEVEL_BAND untestable)."""
    if n == 0:
        nan = float("nan")
        return {"change": nan, "low": nan, "high": nan, "p": nan, "p_min": 1.0, "size": 0.0}
    low, high = tango_interval(up, down, n, confidence=1 - alpha)
    return {
        "change": 100 * (up - down) / n,
        "low": 100 * low,
        "high": 100 * high,
        "p": paired_change_p(up, down),
        "p_min": paired_change_smallest(up + down),
        "size": paired_change_size(up + down, alpha=alpha),
    }


def paired_change(a: pd.DataFrame, b: pd.DataFrame, *, where: str, alpha: float) -> dict:
    """The comparison of two scorings' :func:`outcomes` on the pairs both have (:data:`CHANGE_SCHEMA`
    without the names and the tests' ids)."""
    both = a.merge(b, left_index=True, right_index=True, suffixes=("_a", "_b"))
    mismatch = both[
        (both["stereo_antistereo_a"] != both["stereo_antistereo_b"]) | (both["bias_type_a"] != both["bias_type_b"])
    ]
    if len(mismatch):
        raise DataError(
            f"{where}: pair ids {list(mismatch.index[:5])} have another direction or bias type in one scoring than "
            f"in the other: they are not the same pairs; compare scorings of the same data set"
        )
    count = {
        (x, y): int(((both["outcome_a"] == x) & (both["outcome_b"] == y)).sum()) for x in OUTCOMES for y in OUTCOMES
    }
    rank = {"less": 0, "neutral": 1, "more": 2}
    up = sum(c for (x, y), c in count.items() if rank[y] > rank[x])
    down = sum(c for (x, y), c in count.items() if rank[y] < rank[x])
    row: dict = {"n": len(both), **{f"{x}_to_{y}": c for (x, y), c in count.items()}}
    row.update(moved_up=up, moved_down=down, identical=up + down == 0)
    decisive = sum(count[x, y] for x in ("more", "less") for y in ("more", "less"))
    row["n_decisive"] = decisive
    shares = {
        "decisive": (
            count["more", "more"] + count["more", "less"],
            count["more", "more"] + count["less", "more"],
            count["less", "more"],
            count["more", "less"],
            decisive,
        ),
        "nangia": (
            int(both["nangia_a"].sum()),
            int(both["nangia_b"].sum()),
            int((~both["nangia_a"] & both["nangia_b"]).sum()),
            int((both["nangia_a"] & ~both["nangia_b"]).sum()),
            len(both),
        ),
    }
    for name, (in_a, in_b, rose, fell, total) in shares.items():
        test = paired_proportions(rose, fell, total, alpha=alpha)
        row[f"{name}_a"] = 100 * in_a / total if total else float("nan")
        row[f"{name}_b"] = 100 * in_b / total if total else float("nan")
        row.update({f"{name}_{key}": value for key, value in test.items()})
    return row


def hypothesis_id(source: str, dataset: str, a: str, b: str, change: str) -> str:
    """The id of a comparison's test of one change in a set of hypotheses."""
    return f"{source}/{dataset}/{a}/{b}/{change}"


def change_table(rows: Sequence[dict], *, source: str) -> pd.DataFrame:
    """Comparison rows (each with dataset, a, b and :func:`paired_change`'s fields) as :data:`CHANGE_SCHEMA`,
    each change's test named for a set of hypotheses under ``source``."""
    out = pd.DataFrame(list(rows), columns=[c for c in CHANGE_SCHEMA if not c.endswith("_hypothesis")])
    for name in CHANGES:
        out[f"{name}_hypothesis"] = [
            hypothesis_id(source, d, a, b, name) for d, a, b in zip(out["dataset"], out["a"], out["b"], strict=True)
        ]
    return out[list(CHANGE_SCHEMA)].astype({"identical": bool})
