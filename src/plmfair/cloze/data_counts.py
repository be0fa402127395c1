"""What is in a ready-made cloze test's answers, for the run's data summary
(:attr:`plmfair.studies.StudyData.counts`)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from plmfair.cloze.annotations import GROUPS


def counts(frames: Mapping[str, pd.DataFrame]) -> list[tuple[str, str, str, int]]:
    """Per language of each test (its annotations by name): sentences, annotations, annotators,
    annotations_<group>, distinct_answers (after trimming and lower-casing, empty answers not counted)."""
    out = []
    for test, answers_of_test in frames.items():
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
    return out
