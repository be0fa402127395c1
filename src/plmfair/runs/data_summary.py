"""What is in the data: each study's counts of the data sets it ingested (its ``counts``,
:attr:`plmfair.studies.StudyData.counts`: per language of each ready-made cloze test, per CrowS-Pairs data set), as
``results/data/summary.parquet``, rendered as the ``data_summary`` table."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from plmfair.studies import STUDIES

DATA_SUMMARY_SCHEMA = {
    "dataset": "a ready-made cloze test's name (mozart), or crows_pairs/<data set>",
    "subset": "language (of a cloze test's subset or of the data set)",
    "statistic": "what is counted (each study's data_counts.counts says what)",
    "value": "the count",
}


def data_summary(frames: Mapping[str, Mapping[str, pd.DataFrame]]) -> pd.DataFrame:
    """One long table (dataset, subset, statistic, value) of what is in the data: per study (``frames``:
    study -> its ingested data sets by name, :func:`plmfair.plan.targets.data_summary_inputs`), its ``counts``."""
    out = []
    for study, named in frames.items():
        counts = STUDIES[study].data.counts
        out += counts(named) if counts else []
    return pd.DataFrame(out, columns=["dataset", "subset", "statistic", "value"])
