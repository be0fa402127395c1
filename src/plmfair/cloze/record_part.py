"""Cloze sets in the run record: P@1, P@5 and MRR per set, model, language and group; sigma_gd with its
interval and test; the omnibus test; each with the analysis plan's decisions. sigma_gd of MRR, languages
pooled, answers the primary question of a set with answers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from plmfair.cloze.schemas import read_metrics
from plmfair.io.parquet import read_parquet
from plmfair.rendering.record_rows import RecordPart, decided, rows

KEYS = ("cloze", "disparity", "omnibus")  # its lists under the record's results
CLOZE_FIELDS = (
    "model",
    "lang",
    "group",
    "n",
    "p_at_1",
    "p_at_5",
    "mrr",
    "unknown_share",
    "identical_items",
    "coverage_warning",
)
DISPARITY_FIELDS = (
    "model",
    "lang",
    "metric",
    "sigma_gd",
    "ci_low",
    "ci_high",
    "ci_level",
    "null_mean",
    "debiased",
    "critical_value",
    "p_permutation",
    "family",
    "p_adjusted",
    "significant",
)
OMNIBUS_FIELDS = ("model", "lang", "metric", "statistic", "p_permutation", "family", "p_adjusted", "significant")
ESTIMAND = "disparity sigma_gd of MRR across the four groups, languages pooled (percentage points; debiased)"


def record_part(files: Sequence[str], plan: pd.DataFrame | None) -> RecordPart:
    """The rows of the files of :func:`plmfair.cloze.plan.recorded_files` (a set named by its folder)."""
    part = RecordPart(rows={key: [] for key in KEYS})
    for path in files:
        cloze_set, kind = Path(path).parent.name, Path(path).stem
        if kind == "metrics":
            part.rows["cloze"] += rows(read_metrics(path), CLOZE_FIELDS, set=cloze_set)
        elif kind == "group_disparity":
            disparity = decided(read_parquet(path), plan)
            part.rows["disparity"] += rows(disparity, DISPARITY_FIELDS, set=cloze_set)
            part.primary.append((disparity, "debiased", ESTIMAND))
        else:
            tests = read_parquet(path)
            omnibus = tests[tests["test"] == "omnibus"].assign(ci_low=float("nan"), ci_high=float("nan"))
            part.rows["omnibus"] += rows(decided(omnibus, plan), OMNIBUS_FIELDS, set=cloze_set)
    return part
