"""Results broken down by attributes of the examples (XTREME-R's fine-grained analysis).

Cloze sets (MozArt and constructed sets with answers), one row per (model, language or
``all``, group or ``all``, attribute, bucket), on the per-annotation scores of :func:`plmfair.metrics.annotation_scores`
(P@1, P@5 and MRR are 100 x the means of ``hit1``, ``hit5`` and ``rr``, as the main metrics):

- ``pos``: the universal POS tag of the masked word (the sentence's ``tag``);
- ``length``: white-space tokens of the cloze sentence, the gap counted as one;
- ``agreement``: share of the sentence's non-empty answers (all annotators; NFC, trimmed and
  lower-cased, the metrics' normalisation without any tokenizer's own, so that the buckets are
  the same for every model) equal to its most frequent answer;
- ``answer_pieces``: tokens the answer takes in the model's tokenizer (1, 2, 3+);
- ``multiword``: whether the answer has more than one white-space separated word.

The continuous attributes (length, agreement) get 4 buckets of equal size, as XTREME-R
buckets continuous attributes: cut points at the quartiles of the attribute over all
sentences of the set (every language, so a bucket means the same in every language), fewer
buckets when ties leave a cut point twice; a bucket is labelled with the smallest and the
largest value it holds.

CrowS-Pairs, one row per (data set, model, attribute, bucket) with the score (100 x the share
of scored pairs whose more stereotyping sentence scores higher, neutral pairs counted in the
denominator as in the overall metric) and its Wilson 95% interval:

- ``length``: white-space tokens of the more stereotyping sentence (4 equal-size buckets over
  the data set's pairs);
- ``differing_tokens``: tokens of the more stereotyping sentence outside the blocks it shares
  with the less stereotyping one (difflib's matching blocks over white-space tokens, the
  word-level analogue of the shared spans that Nangia et al.'s protocol scores): 1, 2, 3, 4+;
- ``origin`` (native or translated) and ``bias_type``.

Each attribute is one bucket function in a registry (:data:`CLOZE_ATTRIBUTES`,
:data:`CROWS_ATTRIBUTES`): it gets the rows to break down and the data set, and returns each
row's ``bucket`` and ``bucket_order``. Adding an attribute is its function and one registry line.
"""

from __future__ import annotations

import difflib

import pandas as pd

from plmfair.core import GROUPS
from plmfair.crows_pairs import SCORED_STATUSES
from plmfair.crows_pairs_data import BIAS_TYPES
from plmfair.text import base_normalise

N_BUCKETS = 4

CLOZE_BREAKDOWN_SCHEMA = {
    "model": "model short name",
    "lang": "language, or all (the annotations of every language pooled)",
    "group": "annotator group (MN, FN, MNN, FNN) or all",
    "attribute": "an attribute of plmfair.breakdowns.CLOZE_ATTRIBUTES",
    "bucket": "the attribute's value or range (length and agreement: smallest-largest value in the bucket)",
    "bucket_order": "position of the bucket within its attribute, for sorting",
    "n": "annotations in the cell",
    "n_sentences": "distinct sentences in the cell",
    "p_at_1": "percentage of the cell's annotations whose answer is the top candidate",
    "p_at_5": "percentage of the cell's annotations whose answer is among the top 5 candidates",
    "mrr": "mean reciprocal rank within the top 5 (0 when absent), percent",
}

CROWS_BREAKDOWN_SCHEMA = {
    "dataset": "CrowS-Pairs data set name",
    "lang": "language of the data set",
    "model": "model short name",
    "attribute": "an attribute of plmfair.breakdowns.CROWS_ATTRIBUTES",
    "bucket": "the attribute's value or range",
    "bucket_order": "position of the bucket within its attribute, for sorting",
    "n_pairs": "pairs of the data set in the bucket (scored or not)",
    "n": "scored pairs in the bucket (the score's denominator, neutral pairs included)",
    "n_biased": "pairs whose more stereotyping sentence scores higher",
    "score": "100 x n_biased / n",
    "ci_low": "Wilson 95% interval, lower bound (percent)",
    "ci_high": "Wilson 95% interval, upper bound (percent)",
}


def _label(lo: float, hi: float) -> str:
    """'lo-hi' (or one value), as integers when both are whole numbers, else with 2 decimals."""
    whole = float(lo).is_integer() and float(hi).is_integer()
    fmt = "{:.0f}" if whole else "{:.2f}"
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}-{fmt.format(hi)}"


def equal_size_buckets(values: pd.Series, n: int = N_BUCKETS) -> pd.DataFrame:
    """``bucket`` label and ``bucket_order`` of every value: up to ``n`` buckets of as equal
    size as ties allow (cut at the quantiles), labelled with the values they hold."""
    codes = pd.qcut(values.astype(float), q=n, labels=False, duplicates="drop")
    codes = codes.fillna(0).astype(int) if len(values) else codes
    bounds = values.astype(float).groupby(codes).agg(["min", "max"])
    labels = {code: _label(row["min"], row["max"]) for code, row in bounds.iterrows()}
    return pd.DataFrame({"bucket": codes.map(labels), "bucket_order": codes}, index=values.index)


def _categories(values: pd.Series, order=None) -> pd.DataFrame:
    """Bucket = the value itself, ordered by ``order`` (else sorted)."""
    values = values.astype("string").fillna("(none)")
    order = list(order) if order is not None else sorted(values.unique())
    order += sorted(set(values) - set(order))
    rank = {v: i for i, v in enumerate(order)}
    return pd.DataFrame({"bucket": values, "bucket_order": values.map(rank).astype(int)}, index=values.index)


def _capped(counts: pd.Series, cap: int) -> pd.DataFrame:
    """Counts as buckets 1 .. cap-1 and 'cap+'."""
    counts = counts.astype(int)
    labels = counts.where(counts < cap, cap).map(lambda v: f"{v}+" if v == cap else str(v))
    return pd.DataFrame({"bucket": labels, "bucket_order": counts.clip(upper=cap)}, index=counts.index)


def _sentences(annotations: pd.DataFrame) -> pd.DataFrame:
    """One row per sentence of a cloze set, indexed by (lang, s_id)."""
    return annotations.drop_duplicates(["lang", "s_id"]).set_index(["lang", "s_id"])


def _per_annotation(scores: pd.DataFrame, buckets: pd.DataFrame) -> pd.DataFrame:
    """Sentence buckets (indexed by lang, s_id) on the annotation rows of ``scores``."""
    return buckets.reindex(pd.MultiIndex.from_arrays([scores["lang"], scores["s_id"]])).set_axis(scores.index)


def pos_buckets(scores: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """The universal POS tag of the masked word."""
    return _per_annotation(scores, _categories(_sentences(annotations)["tag"]))


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
    return _capped(scores["n_pieces"], 3)


def multiword_buckets(scores: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """Whether the answer has more than one white-space separated word."""
    return _categories(scores["answer"].map(lambda a: "yes" if len(str(a).split()) > 1 else "no"), order=["no", "yes"])


# name -> bucket function(annotation scores, the set's annotations), in the order of the figures
CLOZE_ATTRIBUTES = {
    "pos": pos_buckets,
    "length": length_buckets,
    "agreement": agreement_buckets,
    "answer_pieces": answer_pieces_buckets,
    "multiword": multiword_buckets,
}


def cloze_breakdowns(scores: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """P@1, P@5 and MRR per (model, lang, group incl. ``all``, attribute, bucket) (:data:`CLOZE_BREAKDOWN_SCHEMA`)
    from annotation scores (with ``n_pieces``) and the set's annotations (``tag``, ``text``, ``answer``)."""
    rows = []
    for attribute, buckets in CLOZE_ATTRIBUTES.items():
        frame = scores.join(buckets(scores, annotations)).dropna(subset=["bucket"])
        frame = pd.concat([frame, frame.assign(lang="all")], ignore_index=True)
        for group in (*GROUPS, "all"):
            g = frame if group == "all" else frame[frame["group"] == group]
            agg = g.groupby(["model", "lang", "bucket", "bucket_order"], observed=True).agg(
                n=("hit1", "size"), n_sentences=("s_id", "nunique"),
                p_at_1=("hit1", "mean"), p_at_5=("hit5", "mean"), mrr=("rr", "mean")).reset_index()
            agg[["p_at_1", "p_at_5", "mrr"]] *= 100
            rows.append(agg.assign(group=group, attribute=attribute))
    out = pd.concat(rows, ignore_index=True)
    # models in the order they come (the configuration's, which every figure keeps)
    first = {model: i for i, model in enumerate(dict.fromkeys(scores["model"]))}
    out = out.sort_values(["model", "lang", "attribute", "bucket_order", "group"], kind="stable",
                          key=lambda col: col.map(first) if col.name == "model" else col)
    return out[list(CLOZE_BREAKDOWN_SCHEMA)].reset_index(drop=True).astype(
        {"model": "string", "lang": "string", "group": "string", "attribute": "string", "bucket": "string",
         "bucket_order": "int64", "n": "int64", "n_sentences": "int64"})


def differing_tokens(more: str, less: str) -> int:
    """White-space tokens of ``more`` outside the blocks it shares with ``less``."""
    a, b = str(more).split(), str(less).split()
    shared = sum(block.size for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return len(a) - shared


def _pair_buckets(scores: pd.DataFrame, pairs: pd.DataFrame, value, bucketer) -> pd.DataFrame:
    """``bucketer`` over a value of every pair with both sentences (``value(sent_more, sent_less)``),
    on the rows of ``scores`` (null for a pair without both)."""
    both = pairs.dropna(subset=["sent_more", "sent_less"])
    values = pd.Series([value(m, s) for m, s in zip(both["sent_more"], both["sent_less"], strict=True)],
                       index=both["pair_id"].astype(str), dtype="int64")
    buckets = bucketer(values)
    return buckets[~buckets.index.duplicated()].reindex(scores["pair_id"].astype(str).to_numpy()).set_axis(scores.index)


def crows_length_buckets(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """White-space tokens of the more stereotyping sentence, 4 equal-size buckets over the data set's pairs."""
    return _pair_buckets(scores, pairs, lambda more, less: len(str(more).split()), equal_size_buckets)


def differing_tokens_buckets(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Tokens of the more stereotyping sentence outside the blocks it shares with the other: 1, 2, 3, 4+."""
    return _pair_buckets(scores, pairs, differing_tokens, lambda values: _capped(values, 4))


def origin_buckets(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    return _categories(scores["origin"], order=["native", "translated"])


def bias_type_buckets(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:

    return _categories(scores["bias_type"], order=BIAS_TYPES)


# name -> bucket function(per-pair scores of a run, the data set's ingested pairs), in the figures' order
CROWS_ATTRIBUTES = {
    "length": crows_length_buckets,
    "differing_tokens": differing_tokens_buckets,
    "origin": origin_buckets,
    "bias_type": bias_type_buckets,
}


def crows_breakdowns(scores: pd.DataFrame, pairs: pd.DataFrame, *, dataset: str, lang: str, model: str) -> pd.DataFrame:
    """Score and Wilson interval per attribute bucket of one (data set, model) run (:data:`CROWS_BREAKDOWN_SCHEMA`)."""
    # scipy (through stats): the figure jobs import this module for its attribute names only
    from plmfair.stats import binomial_summary

    scored = scores["status"].isin(SCORED_STATUSES).to_numpy()
    biased = scored & scores["biased"].to_numpy(dtype=bool)
    rows = []
    for attribute, buckets in CROWS_ATTRIBUTES.items():
        # positional: row i of every bucket frame is pair i of the scores
        frame = buckets(scores, pairs).reset_index(drop=True).assign(scored=scored, biased=biased)
        agg = frame.dropna(subset=["bucket"]).groupby(["bucket_order", "bucket"]).agg(
            n_pairs=("scored", "size"), n=("scored", "sum"), n_biased=("biased", "sum"))
        for (order, bucket), row in agg.iterrows():
            s = binomial_summary(int(row["n_biased"]), int(row["n"]))
            rows.append({"attribute": attribute, "bucket": bucket, "bucket_order": int(order),
                         "n_pairs": int(row["n_pairs"]), "n": int(row["n"]), "n_biased": int(row["n_biased"]),
                         "score": 100 * s.proportion, "ci_low": 100 * s.ci_low, "ci_high": 100 * s.ci_high})
    out = pd.DataFrame(rows).assign(dataset=dataset, lang=lang, model=model)
    out = out.sort_values(["attribute", "bucket_order"], kind="stable")
    return out[list(CROWS_BREAKDOWN_SCHEMA)].reset_index(drop=True)
