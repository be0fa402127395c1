"""The Parquet files of the cloze studies between their jobs: predictions and answer scores of each model
(:data:`PREDICTION_SCHEMA`, :data:`ANSWER_SCHEMA`), the t-SNE vectors (:data:`TSNE_VECTORS_SCHEMA`) and the
metrics (:data:`METRICS_SCHEMA`), with their readers. Light (pandas only), read by the scoring jobs (torch),
the metrics (scipy) and the run record alike."""

from __future__ import annotations

import os

import pandas as pd

from plmfair.cloze.annotations import GROUPS
from plmfair.cloze.measures import COLUMNS, METRICS
from plmfair.io.parquet import read_parquet

PREDICTION_SCHEMA = {
    "lang": "language of the sentence",
    "s_id": "sentence id",
    "rank": "1-based rank of the candidate",
    "candidate": "whole-word candidate as the model spells it (word marker stripped)",
    "candidate_norm": "candidate after NFC, trimming, lower-casing and the tokenizer's normalizer",
    "logprob": "log-probability of the candidate in the gap (mlm: of its token; seq2seq: of its span; "
    "causal: of the whole sentence with the candidate in the gap)",
}


ANSWER_SCHEMA = {
    "lang": "language of the sentence",
    "s_id": "sentence id",
    "answer": "annotators' answer (trimmed, as given)",
    "answer_norm": "answer after NFC, trimming, lower-casing and the tokenizer's normalizer",
    "logprob": "log-probability of the answer in the gap (mlm: within-word left-to-right PLL for several "
    "pieces; seq2seq: of its span; causal: of the whole sentence with the answer in the gap)",
    "n_pieces": "number of tokens the answer takes",
    "multiword": "the answer has more than one word",
}


PREDICTION_DTYPES = {
    "lang": "string",
    "s_id": "string",
    "rank": "int64",
    "candidate": "string",
    "candidate_norm": "string",
    "logprob": "float64",
}


ANSWER_DTYPES = {
    "lang": "string",
    "s_id": "string",
    "answer": "string",
    "answer_norm": "string",
    "logprob": "float64",
    "n_pieces": "int64",
    "multiword": "bool",
}


def read_cloze_scores(path: str | os.PathLike, dtypes: dict[str, str]) -> pd.DataFrame:
    """A prediction or answer-score file (``dtypes``: :data:`PREDICTION_DTYPES` or :data:`ANSWER_DTYPES`),
    refused with the command that rebuilds it when another version wrote it (a missing column, or
    numbers, flags or text of another type)."""
    kinds = {c: {"string": "string", "bool": "bool"}.get(t, "number") for c, t in dtypes.items()}
    return read_parquet(path, columns=list(dtypes), kinds=kinds)


TSNE_VECTORS_SCHEMA = {
    "model": "model short name",
    "s_id": "sentence id of the quadruple",
    "lang": "language of the sentence",
    "text": "the cloze sentence",
    "rank": "rank of the prediction (1 = highest scored)",
    "candidate": "predicted whole word",
    "logprob": "the model's log-probability of the candidate",
    "n_answers": "annotators of that language who gave this word as their answer (normalised as the metrics match)",
    "vector": "the model's last-layer vector of the candidate in the gap (mean over its tokens)",
}


METRICS_SCHEMA = {
    "model": "model short name",
    "lang": "language",
    "group": "MN, FN, MNN, FNN or all",
    "n": "annotations with a non-empty answer",
    "n_empty": "annotations excluded because the answer is empty",
    "n_too_long": "annotations excluded because their sentence or answer is longer than the model accepts",
    **{m.column: m.description for m in METRICS},
    "spearman_rho": "Spearman rho of (group answer count, model log-probability of the answer) over distinct "
    "(sentence, answer) items",
    "spearman_p": "two-sided p-value of spearman_rho",
    "kendall_tau": "Kendall tau-b of the same pairs",
    "kendall_p": "two-sided p-value of kendall_tau",
}


# what every reader of a metrics file checks (results/cloze/{cloze_set}/metrics.parquet)
METRIC_KINDS = {
    "n": "number",
    **dict.fromkeys(COLUMNS, "number"),
    "spearman_rho": "number",
    "kendall_tau": "number",
    "model": "string",
    "lang": "string",
    "group": "string",
}


def read_metrics(path: str | os.PathLike) -> pd.DataFrame:
    """A cloze set's metrics file (:data:`METRICS_SCHEMA` and more), refused with the command that
    rebuilds it when another version wrote it (a missing column, a group this version does not
    write, numbers of another type)."""
    return read_parquet(path, columns=list(METRICS_SCHEMA), kinds=METRIC_KINDS, values={"group": (*GROUPS, "all")})


# the robustness analysis (plmfair.cloze.robustness): every specification, and each verdict's summary
DIFFER, NOT_SHOWN = "groups differ", "no difference shown"

CLOZE_SPECIFICATIONS_SCHEMA = {
    "model": "model name",
    "metric": "the metric whose sigma_gd is tested (languages pooled): its column (p_at_1, p_at_5, mrr)",
    "left_out": "the annotator left out (language:id), '' for none",
    "changed": "'' (the run's own: the primary metric, every annotator), 'metric' or 'annotator'",
    "sigma_gd": "sigma_gd across the four groups (percentage points)",
    "p_value": "its permutation test's p (unadjusted)",
    "verdict": f"'{DIFFER}' (p < alpha) or '{NOT_SHOWN}'",
    "holds": "it shows the run's own verdict at the level the primary question is held to (the level column of "
    "robustness.parquet): groups differing with p below it, or (for no difference shown) none",
}

CLOZE_ROBUSTNESS_SCHEMA = {
    "model": "model name",
    "metric": "the primary metric",
    "sigma_gd": "its sigma_gd with every annotator (percentage points)",
    "p_value": "its permutation p (unadjusted)",
    "verdict": "the run's own verdict (at alpha)",
    "specifications": "K: the specifications computed (the run's own, each other metric, each annotator left out)",
    "counted": "what K counts",
    "family_size": "the size of the confirmatory family the primary question is in (the run's hypotheses; 0: "
    "untestable, no claim)",
    "level": "alpha / family_size: the level a robust claim is held to (Bonferroni over that family)",
    "holding": "k: the specifications showing the run's verdict at that level",
    "p_all": "the intersection-union test's p that every specification shows the groups differing: the largest "
    "of their p (NaN for a verdict of no difference shown)",
    "robust": "groups differing under every specification at the level: p_all < level (false for no difference "
    "shown, which is not a claim a choice could keep)",
    "short_of": "the specifications that do not show it at that level ('metric=P@5', 'without en:a3'), joined "
    "by ' | ' (low power or another answer: not a claim)",
    "removals_short": "how many single annotators' removals are among them",
    "most_influential": "the annotator whose removal moves sigma_gd most",
    "largest_change": "that change of sigma_gd (percentage points, signed: removal minus all)",
}
