"""The Parquet files of the cloze studies between their jobs: predictions and answer scores of each model
(:data:`PREDICTION_SCHEMA`, :data:`ANSWER_SCHEMA`) and the t-SNE vectors (:data:`TSNE_VECTORS_SCHEMA`), with their
reader. Light (pandas only), read by the scoring jobs (torch) and the metrics (scipy) alike."""

from __future__ import annotations

import pandas as pd

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


def read_cloze_scores(path, dtypes: dict[str, str]) -> pd.DataFrame:
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
