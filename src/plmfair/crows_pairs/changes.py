"""Did a model's CrowS-Pairs outcome move? Two scorings of the same pairs (two models of a run, or one
model in two runs) compared pair by pair (:data:`CHANGE_SCHEMA`).

Each scored pair has one of three outcomes: the more stereotyping sentence preferred (``more``),
neither (``neutral``: the margin within its floating-point tolerance) or the less stereotyping one
(``less``). On the pairs both scored (matched by id, with the same direction and bias type), the
comparison gives the 3 x 3 transition table, the changes of the decisive share, the net preference
and Nangia et al.'s score with paired bootstrap intervals, and the exact sign test of the pairs
whose outcome moved up (less -> neutral -> more) against those that moved down: McNemar's test
extended to the ordered outcome. No pair moving is reported as ``identical``, not as p = 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from plmfair.crows_pairs.schemas import SCORED_STATUSES
from plmfair.errors import DataError
from plmfair.stats import bootstrap_counts, holm, percentile_interval, sign_test

OUTCOMES = ("more", "neutral", "less")
_VALUE = {"more": 1, "neutral": 0, "less": -1}
BOOTSTRAP_REPLICATES = 2000

CHANGE_SCHEMA = {
    "dataset": "CrowS-Pairs data set name",
    "a": "the first scoring (a model, or run/model)",
    "b": "the second scoring",
    "n": "pairs scored by both, matched by pair id (same direction and bias type)",
    **{f"{x}_to_{y}": f"pairs with outcome {x} under a and {y} under b" for x in OUTCOMES for y in OUTCOMES},
    "moved_up": "pairs whose outcome rose from a to b (less -> neutral -> more)",
    "moved_down": "pairs whose outcome fell",
    "decisive_a": "decisive share of a on these pairs (percent of its decisive pairs preferring the more "
    "stereotyping sentence)",
    "decisive_b": "the same for b",
    "decisive_change": "decisive_b - decisive_a (percentage points)",
    "decisive_low": "paired bootstrap 95% percentile interval of decisive_change (pairs resampled), lower bound",
    "decisive_high": "its upper bound",
    "net_change": "net preference of b minus a's (percentage points; net preference: preferred more minus "
    "preferred less over the pairs, neutral counting 0)",
    "net_low": "paired bootstrap 95% interval of net_change, lower bound",
    "net_high": "its upper bound",
    "nangia_change": "Nangia et al.'s score of b minus a's on these pairs (their rule; percentage points)",
    "nangia_low": "paired bootstrap 95% interval of nangia_change, lower bound",
    "nangia_high": "its upper bound",
    "identical": "no pair changed outcome (nothing to test)",
    "p_value": "exact two-sided sign test of moved_up against moved_down (NaN when identical)",
    "p_holm": "Holm-adjusted over the comparisons of the table",
    "significant": "p_holm < alpha",
}


def outcomes(scores: pd.DataFrame) -> pd.DataFrame:
    """The scored pairs of a per-pair file by id: outcome (more, neutral, less), Nangia's 0/1, and what
    must match for two scorings to be of the same pair."""
    scored = scores[scores["status"].isin(SCORED_STATUSES)]
    outcome = np.where(scored["biased"], "more", np.where(scored["neutral"], "neutral", "less"))
    return pd.DataFrame(
        {
            "outcome": outcome,
            "nangia": scored["biased_nangia"].astype(float).to_numpy(),
            "stereo_antistereo": scored["stereo_antistereo"].to_numpy(),
            "bias_type": scored["bias_type"].to_numpy(),
        },
        index=pd.Index(scored["pair_id"].astype(str), name="pair_id"),
    )


def _decisive_share(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per bootstrap row: 100 x pairs at +1 / pairs not at 0 (NaN without a decisive pair)."""
    decisive = (weights * (values != 0)).sum(axis=-1)
    more = (weights * (values == 1)).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 100 * more / decisive


def paired_change(a: pd.DataFrame, b: pd.DataFrame, *, where: str, seed: int = 0) -> dict:
    """The comparison of two scorings' :func:`outcomes` on the pairs both have (:data:`CHANGE_SCHEMA`
    without the names and the adjusted p)."""
    both = a.merge(b, left_index=True, right_index=True, suffixes=("_a", "_b"))
    mismatch = both[
        (both["stereo_antistereo_a"] != both["stereo_antistereo_b"]) | (both["bias_type_a"] != both["bias_type_b"])
    ]
    if len(mismatch):
        raise DataError(
            f"{where}: pair ids {list(mismatch.index[:5])} have another direction or bias type in one scoring than "
            f"in the other: they are not the same pairs; compare scorings of the same data set"
        )
    va = both["outcome_a"].map(_VALUE).to_numpy(dtype=float)
    vb = both["outcome_b"].map(_VALUE).to_numpy(dtype=float)
    n = len(both)
    row: dict = {"n": n}
    for x in OUTCOMES:
        for y in OUTCOMES:
            row[f"{x}_to_{y}"] = int(((both["outcome_a"] == x) & (both["outcome_b"] == y)).sum())
    up, down = int((vb > va).sum()), int((vb < va).sum())
    row.update(moved_up=up, moved_down=down)
    ones = np.ones(n)
    row["decisive_a"], row["decisive_b"] = float(_decisive_share(va, ones)), float(_decisive_share(vb, ones))
    # the pairs resampled together under both scorings: one multinomial weight vector per replicate
    weights = bootstrap_counts(np.random.default_rng(seed), n, BOOTSTRAP_REPLICATES) if n else None
    na, nb = both["nangia_a"].to_numpy(float), both["nangia_b"].to_numpy(float)
    estimates = {
        "decisive": (lambda w: _decisive_share(vb, w) - _decisive_share(va, w)),
        "net": (lambda w: 100 * (w * (vb - va)).sum(axis=-1) / w.sum(axis=-1)),
        "nangia": (lambda w: 100 * (w * (nb - na)).sum(axis=-1) / w.sum(axis=-1)),
    }
    for name, estimate in estimates.items():
        row[f"{name}_change"] = float(estimate(ones)) if n else float("nan")
        row[f"{name}_low"], row[f"{name}_high"] = percentile_interval(estimate(weights) if n else [])
    row["identical"] = up + down == 0
    row["p_value"] = float("nan") if row["identical"] else sign_test(up, down)[0]
    return row


def change_table(rows: Sequence[dict], *, alpha: float) -> pd.DataFrame:
    """Comparison rows (each with dataset, a, b and :func:`paired_change`'s fields) with Holm over them."""
    out = pd.DataFrame(list(rows), columns=[c for c in CHANGE_SCHEMA if c not in ("p_holm", "significant")])
    out["p_holm"] = holm(out["p_value"].to_numpy(float)) if len(out) else []
    out["significant"] = out["p_holm"] < alpha
    return out[list(CHANGE_SCHEMA)]
