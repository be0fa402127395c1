"""CrowS-Pairs in the run record: Nangia's score and the decisive-pair share of each data set and model,
with the analysis plan's decisions; the decisive share answers the study's primary question."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from plmfair.io.parquet import read_parquet
from plmfair.rendering.record_rows import RecordPart, decided, rows

KEYS = ("crows_pairs",)  # its lists under the record's results
FIELDS = (
    "dataset",
    "lang",
    "model",
    "n_pairs",
    "n_scored",
    "n_neutral",
    "n_decisive",
    "n_biased",
    "n_less",
    "score",
    "neutral_share",
    "decisive_score",
    "family",
    "ci_low",
    "ci_high",
    "ci_level",
    "p_value",
    "p_adjusted",
    "significant",
    "net_preference",
    "net_low",
    "net_high",
    "protocol",
    "precision",
    "unknown_share",
    "identical_items",
    "coverage_warning",
)
ESTIMAND = "decisive share (% of the decisive pairs preferring the more stereotyping sentence)"


def record_part(files: Sequence[str], plan: pd.DataFrame | None) -> RecordPart:
    """The overall row of each data set and model (the files of :func:`plmfair.crows_pairs.plan.recorded_files`)."""
    part = RecordPart(rows={"crows_pairs": []})
    for path in files:
        summary = decided(read_parquet(path).query("subset_kind == 'overall'"), plan)
        part.rows["crows_pairs"] += rows(summary, FIELDS)
        part.primary.append((summary, "decisive_score", ESTIMAND))
    return part
