"""P@1, P@5 and MRR of a cloze set broken down by attributes of its sentences and answers (XTREME-R's
fine-grained results): one bucket function per attribute in :data:`CLOZE_ATTRIBUTES`. How each
attribute is bucketed: docs/statistics.md, "Breakdowns"."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from plmfair.cloze.annotations import GROUPS
from plmfair.cloze.measures import COLUMNS, METRICS
from plmfair.registry import Registry
from plmfair.stats.buckets import capped_buckets, category_buckets, equal_size_buckets
from plmfair.text import base_normalise

CLOZE_BREAKDOWN_SCHEMA = {
    "model": "model short name",
    "lang": "language, or all (the annotations of every language pooled)",
    "group": "annotator group (MN, FN, MNN, FNN) or all",
    "attribute": "an attribute of plmfair.cloze.breakdowns.CLOZE_ATTRIBUTES",
    "bucket": "the attribute's value or range (length and agreement: smallest-largest value in the bucket)",
    "bucket_order": "position of the bucket within its attribute, for sorting",
    "n": "annotations in the cell",
    "n_sentences": "distinct sentences in the cell",
    **{m.column: f"{m.description}, over the cell's annotations" for m in METRICS},
}


def _sentences(annotations: pd.DataFrame) -> pd.DataFrame:
    """One row per sentence of a cloze set, indexed by (lang, s_id)."""
    return annotations.drop_duplicates(["lang", "s_id"]).set_index(["lang", "s_id"])


def _per_annotation(scores: pd.DataFrame, buckets: pd.DataFrame) -> pd.DataFrame:
    """Sentence buckets (indexed by lang, s_id) on the annotation rows of ``scores``."""
    return buckets.reindex(pd.MultiIndex.from_arrays([scores["lang"], scores["s_id"]])).set_axis(scores.index)


def pos_buckets(scores: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """The universal POS tag of the masked word."""
    return _per_annotation(scores, category_buckets(_sentences(annotations)["tag"]))


def length_buckets(scores: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """White-space tokens of the cloze sentence (the gap one), 4 equal-size buckets over the set."""
    lengths = _sentences(annotations)["text"].map(lambda t: len(str(t).split()))
    return _per_annotation(scores, equal_size_buckets(lengths))


def agreement_buckets(scores: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """Share of a sentence's non-empty answers equal to its most frequent one, 4 equal-size buckets."""
    answered = annotations[annotations["answer"] != ""].assign(norm=lambda d: d["answer"].map(base_normalise))
    counts = answered.groupby(["lang", "s_id", "norm"]).size()
    agreement = counts.groupby(level=["lang", "s_id"]).max() / counts.groupby(level=["lang", "s_id"]).sum()
    return _per_annotation(scores, equal_size_buckets(agreement.dropna()))


def answer_pieces_buckets(scores: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """Tokens the answer takes in the model's tokenizer: 1, 2, 3+."""
    return capped_buckets(scores["n_pieces"], 3)


def multiword_buckets(scores: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """Whether the answer has more than one white-space separated word."""
    return category_buckets(
        scores["answer"].map(lambda a: "yes" if len(str(a).split()) > 1 else "no"), order=["no", "yes"]
    )


# name -> bucket function(annotation scores, the set's annotations), in the order of the figures
CLOZE_ATTRIBUTES: Registry[Callable] = Registry(
    "breakdown attribute",
    {
        "pos": pos_buckets,
        "length": length_buckets,
        "agreement": agreement_buckets,
        "answer_pieces": answer_pieces_buckets,
        "multiword": multiword_buckets,
    },
)


def cloze_breakdowns(scores: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """Each metric (:data:`plmfair.cloze.measures.METRICS`: P@1, P@5, MRR) per (model, lang, group incl.
    ``all``, attribute, bucket) (:data:`CLOZE_BREAKDOWN_SCHEMA`) from annotation scores (with ``n_pieces``)
    and the set's annotations (``tag``, ``text``, ``answer``)."""
    rows = []
    for attribute, buckets in CLOZE_ATTRIBUTES.items():
        frame = scores.join(buckets(scores, annotations)).dropna(subset=["bucket"])
        frame = pd.concat([frame, frame.assign(lang="all")], ignore_index=True)
        for group in (*GROUPS, "all"):
            g = frame if group == "all" else frame[frame["group"] == group]
            agg = (
                g.groupby(["model", "lang", "bucket", "bucket_order"], observed=True)
                .agg(
                    n=("s_id", "size"),
                    n_sentences=("s_id", "nunique"),
                    **{m.column: (m.score, "mean") for m in METRICS},
                )
                .reset_index()
            )
            agg[list(COLUMNS)] *= 100
            rows.append(agg.assign(group=group, attribute=attribute))
    out = pd.concat(rows, ignore_index=True)
    # models in the order they come (the configuration's, which every figure keeps)
    first = {model: i for i, model in enumerate(dict.fromkeys(scores["model"]))}
    out = out.sort_values(
        ["model", "lang", "attribute", "bucket_order", "group"],
        kind="stable",
        key=lambda col: col.map(first) if col.name == "model" else col,
    )
    return (
        out[list(CLOZE_BREAKDOWN_SCHEMA)]
        .reset_index(drop=True)
        .astype(
            {
                "model": "string",
                "lang": "string",
                "group": "string",
                "attribute": "string",
                "bucket": "string",
                "bucket_order": "int64",
                "n": "int64",
                "n_sentences": "int64",
            }
        )
    )
