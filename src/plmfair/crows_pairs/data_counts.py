"""What is in an ingested CrowS-Pairs data set, for the run's data summary
(:attr:`plmfair.studies.StudyData.counts`)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from plmfair.crows_pairs.reader import BIAS_TYPES


def counts(frames: Mapping[str, pd.DataFrame]) -> list[tuple[str, str, str, int]]:
    """Per data set (``crows_pairs/<name>``, its language): pairs, pairs_<bias_type>, pairs_stereo,
    pairs_antistereo, pairs_native, pairs_translated, pairs_missing_sentence, pairs_unlabelled,
    pairs_duplicate (the last three are skipped by the scoring stage)."""
    out = []
    for name, df in frames.items():
        stats = {"pairs": len(df)}
        for bt in BIAS_TYPES:
            n = int((df["bias_type"] == bt).sum())
            if n:
                stats[f"pairs_{bt}"] = n
        for d in ("stereo", "antistereo"):
            stats[f"pairs_{d}"] = int((df["stereo_antistereo"] == d).sum())
        for o in ("native", "translated"):
            stats[f"pairs_{o}"] = int((df["origin"] == o).sum())
        stats["pairs_missing_sentence"] = int((df["sent_more"].isna() | df["sent_less"].isna()).sum())
        stats["pairs_unlabelled"] = int((df["stereo_antistereo"].isna() | df["bias_type"].isna()).sum())
        if "duplicate_of" in df.columns:
            stats["pairs_duplicate"] = int(df["duplicate_of"].notna().sum())
        out += [(f"crows_pairs/{name}", str(df["lang"].iloc[0]), k, int(v)) for k, v in stats.items()]
    return out
