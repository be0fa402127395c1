"""What is in the data: counts per language of each ready-made cloze test (MozArt's) and per
CrowS-Pairs data set (``results/data/summary.parquet``, rendered as the ``data_summary`` table)."""

from __future__ import annotations

import pandas as pd

from plmfair.cloze.annotations import GROUPS
from plmfair.crows_pairs.reader import BIAS_TYPES

DATA_SUMMARY_SCHEMA = {
    "dataset": "a ready-made cloze test's name (mozart), or crows_pairs/<data set>",
    "subset": "language (of a cloze test's subset or of the data set)",
    "statistic": "what is counted (see plmfair.runs.data_summary.data_summary)",
    "value": "the count",
}


def data_summary(cloze_tests: dict[str, pd.DataFrame], crows: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One long table: per language of each ready-made cloze test (annotations by name) and per
    CrowS-Pairs dataset, what is in the data.

    Columns: dataset, subset, statistic, value. Cloze test statistics: sentences, annotations,
    annotators, annotations_<group>, distinct_answers (after trimming and lower-casing,
    empty answers not counted). CrowS-Pairs statistics: pairs, pairs_<bias_type>,
    pairs_stereo, pairs_antistereo, pairs_native, pairs_translated, pairs_missing_sentence,
    pairs_unlabelled, pairs_duplicate (the last three are skipped by the scoring stage).
    """
    out = []
    for test, answers_of_test in cloze_tests.items():
        for lang, g in answers_of_test.groupby("lang", sort=False):
            answers = g["answer"].str.lower()
            stats = {
                "sentences": g["s_id"].nunique(),
                "annotations": len(g),
                "annotators": g["u_id"].nunique(),
                **{f"annotations_{grp}": int((g["group"] == grp).sum()) for grp in GROUPS},
                "distinct_answers": answers[answers != ""].nunique(),
            }
            out += [(test, lang, k, int(v)) for k, v in stats.items()]
    for name, df in crows.items():
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
    return pd.DataFrame(out, columns=["dataset", "subset", "statistic", "value"])
