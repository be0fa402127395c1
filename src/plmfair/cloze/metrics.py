"""Cloze metrics of the MozArt study, per model x language x annotator group.

Definitions (the paper leaves the correlations unspecified; these are ours):

- P@k: percentage of the group's annotations whose answer matches one of the model's top k
  whole-word candidates for that sentence (one count per annotation, as the paper's
  denominators show: 20 hits of 150 annotations is its 13.3).
- MRR: mean over the group's annotations of 1/rank of the answer among the top 5 candidates,
  0 when absent, in percent.
- Spearman rho and Kendall tau-b: over the distinct (sentence, answer) items of the group's
  annotations, the pairs (number of annotators of the group who gave that answer to that
  sentence, the model's log-probability of that answer in the gap); an answer given by several
  annotators is one item, so the p-values do not count it once per annotator.
- sigma_gd (equation 1 of the paper): population standard deviation (divide by G) of a metric
  across the four groups for a language, or across the four languages for a group: in the tables
  (:func:`plmfair.cloze.tables.sigma_gd`) and, with its interval and test, in
  :func:`plmfair.cloze.disparity.group_disparity`.

Answers are matched after :func:`plmfair.text.normalise` (Unicode NFC, trimming, lower-casing, then the
model tokenizer's own normalizer, :meth:`plmfair.scoring.base.Scorer.normaliser`, so mBERT
uncased's accent-less predictions match accented answers). Empty answers are excluded and
counted. :func:`compute_metrics` gives the metrics of one model and language per group.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from plmfair.cloze.annotations import GROUPS
from plmfair.cloze.measures import METRICS, TOP
from plmfair.cloze.schemas import ANSWER_DTYPES, METRICS_SCHEMA, PREDICTION_DTYPES, read_cloze_scores
from plmfair.errors import DataError
from plmfair.io.parquet import read_parquet_meta
from plmfair.scoring.coverage import Coverage, check
from plmfair.scoring.coverage import columns as coverage_columns
from plmfair.scoring.specs import model_metadata

log = logging.getLogger(__name__)


def answer_ranks(answers_norm: Sequence[str], candidates_norm: Sequence[str]) -> list[int | None]:
    """1-based rank of each answer among the candidates (first match), None when absent."""
    first: dict[str, int] = {}
    for r, c in enumerate(candidates_norm, start=1):
        first.setdefault(c, r)
    return [first.get(a) for a in answers_norm]


def group_metrics(annotations: pd.DataFrame) -> dict:
    """Metrics over a set of annotations with columns ``rank`` (None when absent), ``count``
    (annotators of the group with this answer for this sentence) and ``logprob``."""
    n = len(annotations)
    if n == 0:
        nan = float("nan")
        return {
            "n": 0,
            **{m.column: nan for m in METRICS},
            "spearman_rho": nan,
            "spearman_p": nan,
            "kendall_tau": nan,
            "kendall_p": nan,
        }
    rank = annotations["rank"].astype("float64").to_numpy()
    out = {"n": n, **{m.column: m.mean(rank) for m in METRICS}}
    # scipy is heavy: imported where a test is computed
    # one point per distinct (sentence, answer): an answer given by k annotators is one item with
    # count k, not k items (which would make the p-values count each annotator's copy)
    items = annotations.drop_duplicates(["s_id", "answer_norm"]) if "answer_norm" in annotations else annotations
    x, y = items["count"].to_numpy(float), items["logprob"].to_numpy(float)
    ok = ~np.isnan(y)
    if ok.sum() >= 3 and np.ptp(x[ok]) > 0 and np.ptp(y[ok]) > 0:
        rho = stats.spearmanr(x[ok], y[ok])
        tau = stats.kendalltau(x[ok], y[ok], variant="b")
        out.update(
            spearman_rho=float(rho.statistic),
            spearman_p=float(rho.pvalue),
            kendall_tau=float(tau.statistic),
            kendall_p=float(tau.pvalue),
        )
    else:
        out.update(spearman_rho=math.nan, spearman_p=math.nan, kendall_tau=math.nan, kendall_p=math.nan)
    return out


ANNOTATION_SCORES_SCHEMA = {
    "model": "model short name",
    "lang": "language",
    "s_id": "sentence id",
    "u_id": "annotator id",
    "group": "annotator group (MN, FN, MNN, FNN)",
    "answer": "the annotator's answer (trimmed; annotations with an empty answer are not scored)",
    "answer_norm": "answer as matched against the candidates (see plmfair.text.normalise)",
    "rank": f"rank of the answer among the model's top {TOP} candidates (null when absent)",
    **{m.score: m.score_description for m in METRICS},
    "logprob": "the model's log-probability of the answer in the gap",
    "n_pieces": "tokens the answer takes in the model's tokenizer",
}


def annotation_scores(
    annotations: pd.DataFrame, predictions: pd.DataFrame, answer_scores: pd.DataFrame, *, model: str, lang: str
) -> pd.DataFrame:
    """One row per non-empty annotation of a language (:data:`ANNOTATION_SCORES_SCHEMA`): how the
    model's top candidates rank the annotator's answer, and each metric's score of it
    (:data:`plmfair.cloze.measures.METRICS`: P@1, P@5 and MRR are 100 x the means of hit1, hit5 and rr
    over a group's rows)."""
    ann = annotations[(annotations["lang"] == lang) & (annotations["answer"] != "")]
    ann = ann.merge(
        answer_scores[["s_id", "answer", "answer_norm", "logprob", "n_pieces"]],
        on=["s_id", "answer"],
        how="left",
        validate="many_to_one",
    )
    missing = ann["answer_norm"].isna()
    if missing.any():
        first = ann.loc[missing].iloc[0]
        raise DataError(
            f"{model}/{lang}: no answer score for s_id {first['s_id']} answer {first['answer']!r}; rerun its "
            "answer scoring"
        )
    top = predictions[predictions["rank"] <= TOP].sort_values(["s_id", "rank"])
    cands = top.groupby("s_id")["candidate_norm"].apply(list).to_dict()
    rank = pd.array(
        [answer_ranks([a], cands.get(s, []))[0] for s, a in zip(ann["s_id"], ann["answer_norm"], strict=True)],
        dtype="Int64",
    )
    found = rank.to_numpy(dtype="float64", na_value=np.nan)
    out = pd.DataFrame(
        {
            # u_id identifies the annotation; tables reduced to what the metrics need may lack it
            "model": model,
            "lang": lang,
            "s_id": ann["s_id"].to_numpy(),
            "u_id": ann["u_id"].to_numpy() if "u_id" in ann else pd.NA,
            "group": ann["group"].to_numpy(),
            "answer": ann["answer"].to_numpy(),
            "answer_norm": ann["answer_norm"].to_numpy(),
            "rank": rank,
            **{m.score: m.scores(found) for m in METRICS},
            "logprob": ann["logprob"].to_numpy(dtype="float64"),
            "n_pieces": ann["n_pieces"].to_numpy(dtype="int64"),
        }
    )
    return out.astype({c: "string" for c in ("model", "lang", "s_id", "u_id", "group", "answer", "answer_norm")})


def compute_metrics(
    annotations: pd.DataFrame,
    predictions: pd.DataFrame,
    answer_scores: pd.DataFrame,
    *,
    model: str,
    lang: str,
    scores: pd.DataFrame | None = None,
    too_long: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Metrics of one model on one language, per group and for all annotators (:data:`METRICS_SCHEMA`),
    with ``too_long`` the annotations left out because the model could not take them (counted),
    from its :func:`annotation_scores` (computed here unless given)."""
    ann = annotations[annotations["lang"] == lang]
    empty = ann["answer"] == ""
    if empty.any():
        log.warning("%s: %d empty answer(s) excluded", lang, int(empty.sum()))
    if scores is None:
        scores = annotation_scores(annotations, predictions, answer_scores, model=model, lang=lang)
    rows = []
    for group in (*GROUPS, "all"):
        g = scores if group == "all" else scores[scores["group"] == group]
        g = g.assign(count=g.groupby(["s_id", "answer_norm"])["answer_norm"].transform("size"))
        n_empty = int(empty.sum()) if group == "all" else int((ann.loc[empty, "group"] == group).sum())
        n_long = (
            0 if too_long is None else (len(too_long) if group == "all" else int((too_long["group"] == group).sum()))
        )
        rows.append(
            {"model": model, "lang": lang, "group": group, **group_metrics(g), "n_empty": n_empty, "n_too_long": n_long}
        )
    return pd.DataFrame(rows)[list(METRICS_SCHEMA)]


def metrics_for_models(
    annotations: pd.DataFrame, *, runs: Sequence[Mapping[str, str]], max_unknown: float, strict: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Metrics (:data:`~plmfair.cloze.schemas.METRICS_SCHEMA`, then the model's metadata,
    :data:`~plmfair.scoring.specs.MODEL_METADATA_SCHEMA`, then what it read of the language,
    :data:`~plmfair.scoring.coverage.COVERAGE_COLUMNS`) and annotation scores
    (:data:`~plmfair.cloze.metrics.ANNOTATION_SCORES_SCHEMA`) of every model on every language it
    scored that has answers, from its prediction and answer-score files (``runs``: one record per model,
    :func:`plmfair.cloze.plan.cloze_set_runs`). A model that cannot read
    a language is warned about, or under ``strict`` stops the job (:func:`plmfair.scoring.coverage.check`)."""

    metrics, scores = [], []
    for run in runs:
        model = run["model"]
        preds = read_cloze_scores(run["predictions"], PREDICTION_DTYPES)
        answers = read_cloze_scores(run["answer_scores"], ANSWER_DTYPES)
        run_meta = read_parquet_meta(run["answer_scores"])
        meta = model_metadata(run_meta)
        for lang in dict.fromkeys(answers["lang"]):
            lang_preds, lang_answers = preds[preds["lang"] == lang], answers[answers["lang"] == lang]
            kept, skipped = split_too_long(annotations, run_meta.get("too_long", {}).get(lang, {}), lang)
            run_scores = annotation_scores(kept, lang_preds, lang_answers, model=model, lang=lang)
            run_metrics = compute_metrics(
                kept, lang_preds, lang_answers, model=model, lang=lang, scores=run_scores, too_long=skipped
            )
            read = Coverage.from_dict(run_meta.get("coverage", {}).get(lang))
            metrics.append(
                run_metrics.assign(
                    **meta,
                    **coverage_columns(read, model=model, what=lang, max_unknown=max_unknown, item_kind="answers"),
                )
            )
            scores.append(run_scores)
    out = pd.concat(metrics, ignore_index=True)
    check(out["coverage_warning"], strict=strict, max_unknown=max_unknown)
    return out, pd.concat(scores, ignore_index=True)


def split_too_long(annotations: pd.DataFrame, too_long: dict, lang: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The annotations of ``lang`` a model scored, and those it skipped because their sentence or answer
    was longer than it accepts (``too_long``: the ``sentences`` and ``[s_id, answer]`` pairs of its run)."""
    ann = annotations[annotations["lang"] == lang]
    pairs = {tuple(x) for x in too_long.get("answers", [])}
    long = ann["s_id"].isin(too_long.get("sentences", [])) | pd.Series(
        [(s, a) in pairs for s, a in zip(ann["s_id"], ann["answer"], strict=True)], index=ann.index, dtype=bool
    )
    long &= ann["answer"] != ""
    return ann[~long], ann[long]


OVERVIEW_SCHEMA = {
    "lang": "language",
    "statistic": "sentences, annotations, annotators (of the human answers), tokens_per_sentence, or too_long "
    "(sentences and answers longer than the model accepts, skipped)",
    "model": "for tokens_per_sentence and too_long: the model (null for the others)",
    "value": "the count, or the mean number of tokens per sentence (the text left and right of the gap, no "
    "special tokens, the gap counted as one token)",
}


def set_overview(annotations: pd.DataFrame, prediction_metas: dict[str, dict]) -> pd.DataFrame:
    """What MozArt's Table 1 shows of a cloze set with answers (:data:`OVERVIEW_SCHEMA`): per language,
    its sentences, annotations and annotators, then each model's mean tokens per sentence (from the
    run metadata of its predictions, by model)."""
    rows: list[tuple[str, str, str | None, float]] = []
    by_lang = annotations.groupby("lang", sort=False)
    for statistic, values in (
        ("sentences", by_lang["s_id"].nunique()),
        ("annotations", by_lang.size()),
        ("annotators", by_lang["u_id"].nunique()),
    ):
        rows += [(lang, statistic, None, float(v)) for lang, v in values.items()]
    answered = set(annotations["lang"])
    for model, meta in prediction_metas.items():
        rows += [
            (lang, "tokens_per_sentence", model, float(v))
            for lang, v in meta["mean_tokens_per_sentence"].items()
            if lang in answered
        ]
        long = {
            lang: len(v["sentences"]) + len(v["answers"])
            for lang, v in meta.get("too_long", {}).items()
            if lang in answered
        }
        if any(long.values()):
            rows += [(lang, "too_long", model, float(n)) for lang, n in long.items()]
    return pd.DataFrame(rows, columns=list(OVERVIEW_SCHEMA)).astype({"model": "string"})
