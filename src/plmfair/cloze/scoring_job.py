"""Cloze sets filled by a model: MozArt's, and those constructed from a corpus, alike.

The cloze sentences of a language are read from the set's sentences (MozArt's annotations
or a constructed ``sentences.parquet``: one text with exactly one ``[MASK]`` per ``s_id``);
the model's :class:`~plmfair.scoring.base.Scorer` predicts the top-k whole-word candidates
for each gap and scores every distinct human answer. The metrics computed from these files
are in :mod:`plmfair.cloze.metrics`, the paper's tables in :mod:`plmfair.rendering.table_format`.

Outputs (one job per cloze set and model, every language the model covers in one file):

``results/cloze/{cloze_set}/predictions/{model}.parquet`` (:data:`PREDICTION_SCHEMA`) and
``results/cloze/{cloze_set}/answer_scores/{model}.parquet`` (:data:`plmfair.cloze.schemas.ANSWER_SCHEMA`, no rows for a
set without answers); ``results/cloze/{cloze_set}/metrics.parquet``
(:data:`plmfair.cloze.schemas.METRICS_SCHEMA`) and ``overview.parquet``
(:data:`plmfair.cloze.metrics.OVERVIEW_SCHEMA`, MozArt's Table 1) of a set with answers.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence

import pandas as pd

from plmfair.cloze.schemas import ANSWER_DTYPES, PREDICTION_DTYPES, PREDICTION_SCHEMA
from plmfair.errors import DataError
from plmfair.scoring.base import Scorer
from plmfair.scoring.coverage import Coverage, unknown_id
from plmfair.scoring.loader import LoadedModel, load
from plmfair.scoring.specs import ModelSpec
from plmfair.text import MASK, normalise

log = logging.getLogger(__name__)


def cloze_sentences(annotations: pd.DataFrame, lang: str) -> pd.DataFrame:
    """The distinct (s_id, text) of a language; every text must hold exactly one [MASK]."""
    sents = annotations.loc[annotations["lang"] == lang, ["s_id", "text"]].drop_duplicates("s_id")
    if sents.empty:
        raise DataError(f"no cloze sentences for language {lang!r}")
    for s_id, text in zip(sents["s_id"], sents["text"], strict=True):
        n = str(text).count(MASK)
        if n != 1:
            raise DataError(
                f"language {lang}, s_id {s_id}: the sentence has {n} {MASK} tokens, expected exactly one: {text!r}"
            )
    return sents.reset_index(drop=True)


def distinct_answers(annotations: pd.DataFrame, lang: str) -> pd.DataFrame:
    """Distinct non-empty (s_id, answer) of a language, with the sentence text."""
    a = annotations[(annotations["lang"] == lang) & (annotations["answer"] != "")]
    return a[["s_id", "text", "answer"]].drop_duplicates(["s_id", "answer"]).reset_index(drop=True)


def predict(sentences: pd.DataFrame, scorer: Scorer, *, k: int = 100, num_beams: int | None = None) -> pd.DataFrame:
    """Top-k whole-word candidates at the gap of each sentence (:data:`PREDICTION_SCHEMA` without ``lang``)."""
    norm = scorer.normaliser()
    candidates = scorer.predict_gap(list(sentences["text"]), k=k, num_beams=num_beams)
    normalised = functools.cache(lambda word: normalise(word, norm))  # sentences share many candidates
    rows = [
        (s_id, rank, word, normalised(word), lp)
        for s_id, cands in zip(sentences["s_id"], candidates, strict=True)
        for rank, (word, lp) in enumerate(cands, start=1)
    ]
    df = pd.DataFrame(rows, columns=[c for c in PREDICTION_SCHEMA if c != "lang"])
    return df.astype({c: t for c, t in PREDICTION_DTYPES.items() if c != "lang"})


def score_answers(answers: pd.DataFrame, scorer: Scorer) -> pd.DataFrame:
    """Log-probability of every distinct answer in its sentence's gap (:data:`plmfair.cloze.schemas.ANSWER_SCHEMA`
    without ``lang``)."""
    scored = scorer.score_answers(list(zip(answers["text"], answers["answer"], strict=True)))
    norm = scorer.normaliser()
    df = pd.DataFrame(
        {
            "s_id": answers["s_id"].astype("string"),
            "answer": answers["answer"].astype("string"),
            "answer_norm": [normalise(a, norm) for a in answers["answer"]],
            "logprob": pd.Series([lp for lp, _ in scored], dtype="float64"),
            "n_pieces": pd.Series([n for _, n in scored], dtype="int64"),
            "multiword": [len(str(a).split()) > 1 for a in answers["answer"]],
        }
    )
    return df.astype({"answer_norm": "string"})


def read_coverage(sentences: pd.DataFrame, answers: pd.DataFrame | None, scorer: Scorer) -> Coverage:
    """What the model reads of a language's cloze items (:mod:`plmfair.scoring.coverage`): the pieces of the
    sentences (the text around the gap) and of the distinct answers; answers made of unknown pieces
    only, and answers of a sentence read as the same ids as another of its answers that differs from
    it even once normalised (the model cannot tell them apart: they get the same log-probability)."""
    coverage = Coverage()
    unknown = unknown_id(scorer.tokenizer)
    for text in sentences["text"]:
        coverage.read(scorer.read_ids(str(text).replace(MASK, " ")), unknown)
    norm = scorer.normaliser()
    read_as: dict[tuple[str, tuple[int, ...]], set[str]] = {}
    for s_id, answer in [] if answers is None else zip(answers["s_id"], answers["answer"], strict=True):
        ids = scorer.read_ids(answer)
        pieces, unknown_pieces = coverage.read(ids, unknown)
        coverage.items += 1
        coverage.unknown_items += int(pieces > 0 and unknown_pieces == pieces)
        # answers equal once normalised (case for an uncased model) are one answer, rightly read alike
        same = read_as.setdefault((s_id, tuple(ids)), set())
        coverage.identical_items += int(bool(same) and normalise(answer, norm) not in same)
        same.add(normalise(answer, norm))
    return coverage


def _by_lang(frames: dict[str, pd.DataFrame], dtypes: dict[str, str]) -> pd.DataFrame:
    """Every language's rows in one table, ``lang`` first (no rows, the same columns, when none)."""
    parts = [df.assign(lang=lang) for lang, df in frames.items()]
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(dtypes))
    return out[list(dtypes)].astype(dtypes)


def score_cloze_set(
    sentences: pd.DataFrame,
    annotations: pd.DataFrame | None,
    spec: ModelSpec,
    *,
    langs: Sequence[str],
    k: int,
    precision: str = "fp32",
    num_beams: int | None = None,
    token_budget: int = 0,
    device: str = "auto",
    threads: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Load the model once and fill a cloze set in every language of ``langs``
    (:func:`fill_cloze_set`)."""
    # torch and transformers (through the loader): only the scoring job loads a model
    loaded = load(spec, device=device, precision=precision, threads=threads)
    return fill_cloze_set(
        sentences, annotations, loaded, langs=langs, k=k, num_beams=num_beams, token_budget=token_budget
    )


def fill_cloze_set(
    sentences: pd.DataFrame,
    annotations: pd.DataFrame | None,
    loaded: LoadedModel,
    *,
    langs: Sequence[str],
    k: int,
    num_beams: int | None = None,
    token_budget: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Fill a cloze set in every language of ``langs`` with a model already loaded
    (:func:`plmfair.scoring.loader.load`): the top-``k`` predictions of each sentence (from
    ``sentences``: MozArt's annotations or a constructed set) and the log-probability of every
    distinct human answer (from ``annotations``, None for a set without answers). Returns
    (predictions, answer scores, run metadata with the sentences and mean tokens per sentence of
    each language, MozArt's Table 1)."""
    spec = loaded.spec
    scorer = loaded.scorer(token_budget=token_budget)
    limit = scorer.max_length()
    preds, scores, n_sentences, tokens, too_long, coverage = {}, {}, {}, {}, {}, {}
    with loaded.stopwatch() as watch:
        for lang in langs:
            sents = cloze_sentences(sentences, lang)
            # a sentence or answer longer than the model accepts is skipped and counted, as CrowS-Pairs' too_long
            long_sentences = [
                s for s, t in zip(sents["s_id"], sents["text"], strict=True) if scorer.input_length(t) > limit
            ]
            preds[lang] = predict(sents[~sents["s_id"].isin(long_sentences)], scorer, k=k, num_beams=num_beams)
            long_answers, answers = [], None
            if annotations is not None and (annotations["lang"] == lang).any():
                answers = distinct_answers(annotations, lang)
                answers = answers[~answers["s_id"].isin(long_sentences)]
                fits = [
                    scorer.input_length(t, a) <= limit for t, a in zip(answers["text"], answers["answer"], strict=True)
                ]
                long_answers = [
                    [s, a] for s, a, ok in zip(answers["s_id"], answers["answer"], fits, strict=True) if not ok
                ]
                scores[lang] = score_answers(answers[fits].reset_index(drop=True), scorer)
            if long_sentences or long_answers:
                log.warning(
                    "%s/%s: %d sentence(s) and %d answer(s) longer than the model's %d tokens skipped: %s",
                    spec.name,
                    lang,
                    len(long_sentences),
                    len(long_answers),
                    limit,
                    ", ".join([*long_sentences, *(f"{s}: {a[:30]!r}" for s, a in long_answers)][:10]),
                )
            too_long[lang] = {"sentences": long_sentences, "answers": long_answers}
            read = read_coverage(sents, answers, scorer)
            coverage[lang] = read.as_dict()
            log.info(
                "%s/%s: %d pieces read, %d unknown (%.1f%%); %d of %d answers of unknown pieces only, %d read as "
                "another answer of their sentence",
                spec.name,
                lang,
                read.pieces,
                read.unknown_pieces,
                100 * read.unknown_share,
                read.unknown_items,
                read.items,
                read.identical_items,
            )
            n_sentences[lang] = len(sents)
            tokens[lang] = sum(scorer.sentence_length(t) for t in sents["text"]) / len(sents)
    meta = loaded.metadata(
        langs=list(langs),
        k=k,
        num_beams=num_beams,
        token_budget=scorer.token_budget,
        wall_time_s=round(watch.seconds, 3),
        n_sentences=n_sentences,
        mean_tokens_per_sentence=tokens,
        too_long=too_long,
        coverage=coverage,
    )
    return _by_lang(preds, PREDICTION_DTYPES), _by_lang(scores, ANSWER_DTYPES), meta
