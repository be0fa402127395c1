"""CrowS-Pairs scores broken down by attributes of the pairs (XTREME-R's fine-grained results):
sentence length, differing tokens, origin, bias type; one line per attribute in :data:`CROWS_ATTRIBUTES`."""

from __future__ import annotations

import difflib
from collections.abc import Callable

import pandas as pd

from plmfair.crows_pairs.reader import BIAS_TYPES
from plmfair.crows_pairs.summary import SCORED_STATUSES
from plmfair.registry import Registry
from plmfair.stats.buckets import capped_buckets, category_buckets, equal_size_buckets

CROWS_BREAKDOWN_SCHEMA = {
    "dataset": "CrowS-Pairs data set name",
    "lang": "language of the data set",
    "model": "model short name",
    "attribute": "an attribute of plmfair.crows_pairs.breakdowns.CROWS_ATTRIBUTES",
    "bucket": "the attribute's value or range",
    "bucket_order": "position of the bucket within its attribute, for sorting",
    "n_pairs": "pairs of the data set in the bucket (scored or not)",
    "n": "scored pairs in the bucket",
    "n_decisive": "scored pairs that are not neutral (|margin| above its floating-point tolerance)",
    "n_biased": "decisive pairs preferring the more stereotyping sentence",
    "score": "decisive share, 100 x n_biased / n_decisive (NaN without a decisive pair)",
    "ci_low": "Wilson 95% interval, lower bound (percent; descriptive)",
    "ci_high": "Wilson 95% interval, upper bound (percent)",
}


def differing_tokens(more: str, less: str) -> int:
    """White-space tokens of ``more`` outside the blocks it shares with ``less``."""
    a, b = str(more).split(), str(less).split()
    shared = sum(block.size for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return len(a) - shared


def _pair_buckets(
    scores: pd.DataFrame,
    pairs: pd.DataFrame,
    value: Callable[[str, str], float],
    bucketer: Callable[[pd.Series], pd.DataFrame],
) -> pd.DataFrame:
    """``bucketer`` over a value of every pair with both sentences (``value(sent_more, sent_less)``),
    on the rows of ``scores`` (null for a pair without both)."""
    both = pairs.dropna(subset=["sent_more", "sent_less"])
    values = pd.Series(
        [value(m, s) for m, s in zip(both["sent_more"], both["sent_less"], strict=True)],
        index=both["pair_id"].astype(str),
        dtype="int64",
    )
    buckets = bucketer(values)
    return buckets[~buckets.index.duplicated()].reindex(scores["pair_id"].astype(str).to_numpy()).set_axis(scores.index)


def crows_length_buckets(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """White-space tokens of the more stereotyping sentence, 4 equal-size buckets over the data set's pairs."""
    return _pair_buckets(scores, pairs, lambda more, less: len(str(more).split()), equal_size_buckets)


def differing_tokens_buckets(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Tokens of the more stereotyping sentence outside the blocks it shares with the other: 1, 2, 3, 4+."""
    return _pair_buckets(scores, pairs, differing_tokens, lambda values: capped_buckets(values, 4))


def origin_buckets(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Each pair's origin (native or translated) as its bucket."""
    return category_buckets(scores["origin"], order=["native", "translated"])


def bias_type_buckets(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Each pair's bias type as its bucket, in CrowS-Pairs' order."""
    return category_buckets(scores["bias_type"], order=BIAS_TYPES)


# name -> bucket function(per-pair scores of a run, the data set's ingested pairs), in the figures' order
CROWS_ATTRIBUTES: Registry[Callable] = Registry(
    "breakdown attribute",
    {
        "length": crows_length_buckets,
        "differing_tokens": differing_tokens_buckets,
        "origin": origin_buckets,
        "bias_type": bias_type_buckets,
    },
)


def crows_breakdowns(scores: pd.DataFrame, pairs: pd.DataFrame, *, dataset: str, lang: str, model: str) -> pd.DataFrame:
    """Decisive share and Wilson interval per attribute bucket of one (data set, model) run
    (:data:`CROWS_BREAKDOWN_SCHEMA`)."""
    # scipy (through stats): the figure jobs import this module for its attribute names only
    from plmfair.stats.proportions import binomial_summary

    scored = scores["status"].isin(SCORED_STATUSES).to_numpy()
    biased = scored & scores["biased"].to_numpy(dtype=bool)
    decisive = scored & ~scores["neutral"].to_numpy(dtype=bool)
    rows = []
    for attribute, buckets in CROWS_ATTRIBUTES.items():
        # positional: row i of every bucket frame is pair i of the scores
        frame = buckets(scores, pairs).reset_index(drop=True).assign(scored=scored, biased=biased, decisive=decisive)
        agg = (
            frame.dropna(subset=["bucket"])
            .groupby(["bucket_order", "bucket"])
            .agg(
                n_pairs=("scored", "size"),
                n=("scored", "sum"),
                n_decisive=("decisive", "sum"),
                n_biased=("biased", "sum"),
            )
        )
        for (order, bucket), row in agg.iterrows():
            s = binomial_summary(int(row["n_biased"]), int(row["n_decisive"]))
            rows.append(
                {
                    "attribute": attribute,
                    "bucket": bucket,
                    "bucket_order": int(order),
                    "n_pairs": int(row["n_pairs"]),
                    "n": int(row["n"]),
                    "n_decisive": int(row["n_decisive"]),
                    "n_biased": int(row["n_biased"]),
                    "score": 100 * s.proportion,
                    "ci_low": 100 * s.ci_low,
                    "ci_high": 100 * s.ci_high,
                }
            )
    out = pd.DataFrame(rows).assign(dataset=dataset, lang=lang, model=model)
    out = out.sort_values(["attribute", "bucket_order"], kind="stable")
    return out[list(CROWS_BREAKDOWN_SCHEMA)].reset_index(drop=True)
