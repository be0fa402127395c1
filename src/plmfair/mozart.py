"""MozArt cloze scoring (also used for constructed cloze sets): predictions and answer scores.

The cloze sentences of a language are read from the annotations (one text with exactly
one ``[MASK]`` per ``s_id``); the model's :class:`~plmfair.scoring.base.Scorer` predicts
the top-k whole-word candidates for each gap and scores every distinct answer. The
metrics computed from these files are in :mod:`plmfair.metrics`, the paper's tables in
:mod:`plmfair.tables`.

Outputs (one file per model and language):

``results/mozart/predictions/{model}/{lang}.parquet`` (:data:`PREDICTION_SCHEMA`) and
``results/mozart/answer_scores/{model}/{lang}.parquet`` (:data:`ANSWER_SCHEMA`);
``results/mozart/metrics.parquet`` (:data:`plmfair.metrics.METRICS_SCHEMA`).
"""

from __future__ import annotations

import logging

import pandas as pd

from plmfair.data import MASK
from plmfair.errors import DataError
from plmfair.text import normalise

log = logging.getLogger(__name__)

PREDICTION_SCHEMA = {
    "s_id": "sentence id",
    "rank": "1-based rank of the candidate",
    "candidate": "whole-word candidate as the model spells it (word marker stripped)",
    "candidate_norm": "candidate after NFC, trimming, lower-casing and the tokenizer's normalizer",
    "logprob": "log-probability of the candidate in the gap (mlm: of its token; seq2seq: of its span; "
               "causal: of the whole sentence with the candidate in the gap)",
}
ANSWER_SCHEMA = {
    "s_id": "sentence id",
    "answer": "annotators' answer (trimmed, as given)",
    "answer_norm": "answer after NFC, trimming, lower-casing and the tokenizer's normalizer",
    "logprob": "log-probability of the answer in the gap (mlm: within-word left-to-right PLL for several "
               "pieces; seq2seq: of its span; causal: of the whole sentence with the answer in the gap)",
    "n_pieces": "number of tokens the answer takes",
    "multiword": "the answer has more than one word",
}


def cloze_sentences(annotations: pd.DataFrame, lang: str) -> pd.DataFrame:
    """The distinct (s_id, text) of a language; every text must hold exactly one [MASK]."""
    sents = annotations.loc[annotations["lang"] == lang, ["s_id", "text"]].drop_duplicates("s_id")
    if sents.empty:
        raise DataError(f"no MozArt sentences for language {lang!r}")
    for s_id, text in zip(sents["s_id"], sents["text"], strict=True):
        n = str(text).count(MASK)
        if n != 1:
            raise DataError(f"language {lang}, s_id {s_id}: the sentence has {n} {MASK} tokens, expected exactly one: {text!r}")
    return sents.reset_index(drop=True)


def distinct_answers(annotations: pd.DataFrame, lang: str) -> pd.DataFrame:
    """Distinct non-empty (s_id, answer) of a language, with the sentence text."""
    a = annotations[(annotations["lang"] == lang) & (annotations["answer"] != "")]
    return a[["s_id", "text", "answer"]].drop_duplicates(["s_id", "answer"]).reset_index(drop=True)


def predict(sentences: pd.DataFrame, scorer, *, k: int = 100, num_beams: int | None = None) -> pd.DataFrame:
    """Top-k whole-word candidates at the gap of each sentence (:data:`PREDICTION_SCHEMA`)."""
    norm = scorer.normaliser()
    candidates = scorer.predict_gap(list(sentences["text"]), k=k, num_beams=num_beams)
    rows = [
        (s_id, rank, word, normalise(word, norm), lp)
        for s_id, cands in zip(sentences["s_id"], candidates, strict=True)
        for rank, (word, lp) in enumerate(cands, start=1)
    ]
    df = pd.DataFrame(rows, columns=list(PREDICTION_SCHEMA))
    return df.astype({"s_id": "string", "rank": "int64", "candidate": "string", "candidate_norm": "string",
                      "logprob": "float64"})


def score_answers(answers: pd.DataFrame, scorer) -> pd.DataFrame:
    """Log-probability of every distinct answer in its sentence's gap (:data:`ANSWER_SCHEMA`)."""
    scored = scorer.score_answers(list(zip(answers["text"], answers["answer"], strict=True)))
    norm = scorer.normaliser()
    df = pd.DataFrame({
        "s_id": answers["s_id"].astype("string"),
        "answer": answers["answer"].astype("string"),
        "answer_norm": [normalise(a, norm) for a in answers["answer"]],
        "logprob": pd.Series([lp for lp, _ in scored], dtype="float64"),
        "n_pieces": pd.Series([n for _, n in scored], dtype="int64"),
        "multiword": [len(str(a).split()) > 1 for a in answers["answer"]],
    })
    return df.astype({"answer_norm": "string"})


def run_cloze_scoring(annotations: pd.DataFrame, spec, *, lang: str, k: int | None = None, precision: str = "fp32",
                      num_beams: int | None = None, token_budget: int = 0, with_answers: bool = True,
                      with_predictions: bool = True, device: str = "auto", threads: int | None = None):
    """Load the model; return (predictions or None, answer scores or None, run metadata) for one language.
    ``k`` (candidates per sentence) is needed only with predictions."""
    from plmfair.scoring.loader import load

    if with_predictions and k is None:
        raise ValueError("run_cloze_scoring: predictions need k, the number of candidates to keep")
    loaded = load(spec, device=device, precision=precision, threads=threads)
    scorer = loaded.scorer(token_budget=token_budget)
    sentences = cloze_sentences(annotations, lang)
    preds = scores = None
    with loaded.stopwatch() as watch:
        if with_predictions:
            preds = predict(sentences, scorer, k=k, num_beams=num_beams)
        if with_answers:
            scores = score_answers(distinct_answers(annotations, lang), scorer)
    lengths = [scorer.sentence_length(text) for text in sentences["text"]]
    meta = loaded.metadata(lang=lang, k=k, num_beams=num_beams if with_predictions else None,
                           wall_time_s=round(watch.seconds, 3), n_sentences=len(sentences),
                           mean_tokens_per_sentence=sum(lengths) / len(lengths))
    return preds, scores, meta


def metrics_for_runs(annotations: pd.DataFrame, *, runs, predictions, answer_scores
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Metrics (:data:`~plmfair.metrics.METRICS_SCHEMA`, then the model's metadata,
    :data:`~plmfair.models.MODEL_METADATA_SCHEMA`) and annotation scores
    (:data:`~plmfair.metrics.ANNOTATION_SCORES_SCHEMA`) of every (model, lang) run from its
    prediction and answer-score files."""
    from plmfair.io import read_parquet, read_parquet_meta
    from plmfair.metrics import annotation_scores, compute_metrics
    from plmfair.models import model_metadata

    metrics, scores = [], []
    for (model, lang), p, a in zip(runs, predictions, answer_scores, strict=True):
        preds, answers = read_parquet(p), read_parquet(a)
        run_scores = annotation_scores(annotations, preds, answers, model=model, lang=lang)
        run_metrics = compute_metrics(annotations, preds, answers, model=model, lang=lang, scores=run_scores)
        metrics.append(run_metrics.assign(**model_metadata(read_parquet_meta(a))))
        scores.append(run_scores)
    return pd.concat(metrics, ignore_index=True), pd.concat(scores, ignore_index=True)
