"""MozArt cloze scoring: model predictions, answer log-probabilities, group metrics, tables, figure.

Outputs (one file per model and language):

``results/mozart/predictions/{model}/{lang}.parquet`` (:data:`PREDICTION_SCHEMA`) and
``results/mozart/answer_scores/{model}/{lang}.parquet`` (:data:`ANSWER_SCHEMA`);
``results/mozart/metrics.parquet`` (:data:`plmfair.metrics.METRICS_SCHEMA`).
"""

from __future__ import annotations

import logging
import time

import pandas as pd
import torch

from plmfair.errors import DataError
from plmfair.metrics import (
    GROUPS,
    METRICS_SCHEMA,
    answer_ranks,
    group_metrics,
    normalise,
    sigma_gd,
    tokenizer_normaliser,
)
from plmfair.scoring.mlm import (
    mask_token_id,
    pad_token_id,
    query_logits,
    target_log_probs,
    whole_word_vocabulary,
)

log = logging.getLogger(__name__)

MASK = "[MASK]"

PREDICTION_SCHEMA = {
    "s_id": "sentence id",
    "rank": "1-based rank of the candidate",
    "candidate": "whole-word candidate as the model spells it (word marker stripped)",
    "candidate_norm": "candidate after NFC, trimming, lower-casing and the tokenizer's normalizer",
    "logprob": "log-probability of the candidate in the gap (mlm: of its token; seq2seq: of its span)",
}
ANSWER_SCHEMA = {
    "s_id": "sentence id",
    "answer": "annotators' answer (trimmed, as given)",
    "answer_norm": "answer after NFC, trimming, lower-casing and the tokenizer's normalizer",
    "logprob": "log-probability of the answer in the gap (within-word left-to-right PLL for several pieces)",
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


def _prepare(text: str, uncased: bool) -> tuple[str, str]:
    left, right = text.split(MASK)
    if uncased:
        left, right = left.lower(), right.lower()
    return left, right


def predict_mlm(sentences: pd.DataFrame, model, tokenizer, *, model_name: str, uncased: bool, k: int = 100,
                token_budget: int = 8192, progress: bool = False) -> pd.DataFrame:
    """Top-k whole-word candidates at the gap of each sentence."""
    mask_id = mask_token_id(tokenizer, model_name)
    words = whole_word_vocabulary(tokenizer)
    vocab_size = model.get_output_embeddings().weight.shape[0]
    allowed = torch.zeros(vocab_size, dtype=torch.bool)
    allowed[[i for i in words if i < vocab_size]] = True
    norm = tokenizer_normaliser(tokenizer)
    seqs, positions = [], []
    for text in sentences["text"]:
        left, right = _prepare(text, uncased)
        ids = tokenizer(left + tokenizer.mask_token + right)["input_ids"]
        seqs.append(ids)
        positions.append(ids.index(mask_id))
    rows = []
    for idx, logits in query_logits(model, seqs, positions, pad_id=pad_token_id(tokenizer), token_budget=token_budget,
                                    progress=progress, desc=f"{model_name} predictions"):
        logp = torch.log_softmax(logits, dim=-1).masked_fill(~allowed.to(logits.device)[None, :], float("-inf"))
        top = torch.topk(logp, min(k, int(allowed.sum())), dim=-1)
        for row, i in enumerate(idx):
            s_id = sentences["s_id"].iloc[i]
            for r, (v, tid) in enumerate(zip(top.values[row].tolist(), top.indices[row].tolist(), strict=True), start=1):
                rows.append((s_id, r, words[tid], normalise(words[tid], norm), v))
    return _prediction_frame(rows, sentences)


def _prediction_frame(rows, sentences) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=list(PREDICTION_SCHEMA))
    order = {s: i for i, s in enumerate(sentences["s_id"])}
    df = df.sort_values(["s_id", "rank"], key=lambda c: c.map(order) if c.name == "s_id" else c).reset_index(drop=True)
    return df.astype({"s_id": "string", "rank": "int64", "candidate": "string", "candidate_norm": "string", "logprob": "float64"})


def predict_seq2seq(sentences: pd.DataFrame, model, tokenizer, *, model_name: str, uncased: bool, k: int = 100,
                    num_beams: int | None = None, progress: bool = False) -> pd.DataFrame:
    """Top-k single-word spans for the first sentinel, by constrained beam search."""
    from plmfair.scoring.seq2seq import constrained_beam_search, span_vocabulary

    vocab = span_vocabulary(tokenizer, model.get_output_embeddings().weight.shape[0], model_name)
    norm = tokenizer_normaliser(tokenizer)
    rows = []
    iterator = zip(sentences["s_id"], sentences["text"], strict=True)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(list(iterator), desc=f"{model_name} beam search", mininterval=2.0)
    for s_id, text in iterator:
        left, right = _prepare(text, uncased)
        spans = constrained_beam_search(model, tokenizer, left + "<extra_id_0>" + right, vocab=vocab, k=k,
                                        num_beams=num_beams)
        for r, (pieces, lp) in enumerate(spans, start=1):
            word = tokenizer.convert_tokens_to_string(tokenizer.convert_ids_to_tokens(pieces)).strip()
            rows.append((s_id, r, word, normalise(word, norm), lp))
    return _prediction_frame(rows, sentences)


def distinct_answers(annotations: pd.DataFrame, lang: str) -> pd.DataFrame:
    """Distinct non-empty (s_id, answer) of a language, with the sentence text."""
    a = annotations[(annotations["lang"] == lang) & (annotations["answer"] != "")]
    return a[["s_id", "text", "answer"]].drop_duplicates(["s_id", "answer"]).reset_index(drop=True)


def answer_scores_mlm(answers: pd.DataFrame, model, tokenizer, *, model_name: str, uncased: bool,
                      token_budget: int = 8192) -> pd.DataFrame:
    """log P(answer) in the gap: as many masks as the answer has tokens, within-word left-to-right
    PLL (Kauf & Ivanova 2023): token j is scored with tokens j.. of the answer masked."""
    mask_id = mask_token_id(tokenizer, model_name)
    norm = tokenizer_normaliser(tokenizer)
    seqs, positions, targets, owner, n_pieces = [], [], [], [], []
    for i, (text, answer) in enumerate(zip(answers["text"], answers["answer"], strict=True)):
        left, right = _prepare(text, uncased)
        ans = answer.lower() if uncased else answer
        filled = left + ans + right
        enc = tokenizer(filled, return_offsets_mapping=True)
        start, end = len(left), len(left) + len(ans)
        span = [j for j, (a, b) in enumerate(enc["offset_mapping"]) if b > a and a < end and b > start]
        ids = list(enc["input_ids"])
        if not span:
            raise DataError(f"answer {answer!r} of s_id {answers['s_id'].iloc[i]} disappeared in tokenization")
        n_pieces.append(len(span))
        for j, pos in enumerate(span):
            masked = list(ids)
            for q in span[j:]:
                masked[q] = mask_id
            seqs.append(masked)
            positions.append(pos)
            targets.append(ids[pos])
            owner.append(i)
    lps = target_log_probs(model, seqs, positions, targets, pad_id=pad_token_id(tokenizer), token_budget=token_budget)
    totals = [0.0] * len(answers)
    for i, v in zip(owner, lps, strict=True):
        totals[i] += v
    return _answer_frame(answers, totals, n_pieces, norm)


def answer_scores_seq2seq(answers: pd.DataFrame, model, tokenizer, *, model_name: str, uncased: bool) -> pd.DataFrame:
    """log P(<extra_id_0> answer <end>) for every distinct answer."""
    from plmfair.scoring.seq2seq import span_log_prob, span_vocabulary

    vocab = span_vocabulary(tokenizer, model.get_output_embeddings().weight.shape[0], model_name)
    totals, n_pieces = [], []
    for text, answer in zip(answers["text"], answers["answer"], strict=True):
        left, right = _prepare(text, uncased)
        lp, n = span_log_prob(model, tokenizer, left + "<extra_id_0>" + right, answer.lower() if uncased else answer,
                              vocab=vocab)
        totals.append(lp)
        n_pieces.append(n)
    return _answer_frame(answers, totals, n_pieces, tokenizer_normaliser(tokenizer))


def _answer_frame(answers, totals, n_pieces, norm) -> pd.DataFrame:
    df = pd.DataFrame({
        "s_id": answers["s_id"].astype("string"),
        "answer": answers["answer"].astype("string"),
        "answer_norm": [normalise(a, norm) for a in answers["answer"]],
        "logprob": pd.Series(totals, dtype="float64"),
        "n_pieces": pd.Series(n_pieces, dtype="int64"),
        "multiword": [len(str(a).split()) > 1 for a in answers["answer"]],
    })
    return df.astype({"answer_norm": "string"})


def run_cloze_scoring(annotations: pd.DataFrame, spec, *, lang: str, k: int | None = None, precision: str = "fp32",
                      num_beams: int | None = None, token_budget: int = 8192, with_answers: bool = True,
                      with_predictions: bool = True, device: str = "auto"):
    """Load the model; return (predictions or None, answer scores or None, run metadata) for one language.
    ``k`` (candidates per sentence) is needed only with predictions."""
    from plmfair.models import load_model, pick_device

    if with_predictions and k is None:
        raise ValueError("run_cloze_scoring: predictions need k, the number of candidates to keep")

    dev = pick_device(device)
    model, tokenizer = load_model(spec, device=dev, precision=precision)
    sentences = cloze_sentences(annotations, lang)
    t0 = time.perf_counter()
    preds = None
    if with_predictions and spec.family == "mlm":
        preds = predict_mlm(sentences, model, tokenizer, model_name=spec.name, uncased=spec.uncased, k=k,
                            token_budget=token_budget, progress=True)
    elif with_predictions:
        preds = predict_seq2seq(sentences, model, tokenizer, model_name=spec.name, uncased=spec.uncased, k=k,
                                num_beams=num_beams, progress=True)
    scores = None
    if with_answers:
        answers = distinct_answers(annotations, lang)
        if spec.family == "mlm":
            scores = answer_scores_mlm(answers, model, tokenizer, model_name=spec.name, uncased=spec.uncased,
                                       token_budget=token_budget)
        else:
            scores = answer_scores_seq2seq(answers, model, tokenizer, model_name=spec.name, uncased=spec.uncased)
    meta = {**spec.metadata(), "lang": lang, "k": k, "precision": precision, "device": str(dev),
            "wall_time_s": round(time.perf_counter() - t0, 3), "n_sentences": len(sentences)}
    return preds, scores, meta


def compute_metrics(annotations: pd.DataFrame, predictions: pd.DataFrame, answer_scores: pd.DataFrame, *,
                    model: str, lang: str) -> pd.DataFrame:
    """Metrics of one model on one language, per group and for all annotators (:data:`METRICS_SCHEMA`)."""
    ann = annotations[annotations["lang"] == lang]
    empty = ann["answer"] == ""
    if empty.any():
        log.warning("%s: %d empty answer(s) excluded", lang, int(empty.sum()))
    ann = ann[~empty].merge(answer_scores[["s_id", "answer", "answer_norm", "logprob"]], on=["s_id", "answer"],
                            how="left", validate="many_to_one")
    missing = ann["answer_norm"].isna()
    if missing.any():
        first = ann.loc[missing].iloc[0]
        raise DataError(f"{model}/{lang}: no answer score for s_id {first['s_id']} answer {first['answer']!r}; rerun its answer scoring")
    top5 = predictions[predictions["rank"] <= 5].sort_values(["s_id", "rank"])
    cands = top5.groupby("s_id")["candidate_norm"].apply(list).to_dict()
    ann["rank"] = [answer_ranks([a], cands.get(s, []))[0] for s, a in zip(ann["s_id"], ann["answer_norm"], strict=True)]
    rows = []
    for group in (*GROUPS, "all"):
        g = ann if group == "all" else ann[ann["group"] == group]
        g = g.assign(count=g.groupby(["s_id", "answer_norm"])["answer_norm"].transform("size"))
        n_empty = int(empty.sum()) if group == "all" else int((annotations.loc[empty[empty].index, "group"] == group).sum())
        rows.append({"model": model, "lang": lang, "group": group, **group_metrics(g), "n_empty": n_empty})
    return pd.DataFrame(rows)[list(METRICS_SCHEMA)]


def metrics_and_disparity(annotations_path, *, runs, predictions, answer_scores) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Metrics of every run (:data:`METRICS_SCHEMA`) and their sigma_gd table, for a constructed cloze
    set with human answers."""
    from plmfair.io import read_parquet

    metrics = metrics_for_runs(read_parquet(annotations_path), runs=runs, predictions=predictions,
                               answer_scores=answer_scores)
    return metrics, disparity_table(metrics)


def metrics_for_runs(annotations: pd.DataFrame, *, runs, predictions, answer_scores) -> pd.DataFrame:
    """Metrics of every (model, lang) run from its prediction and answer-score files."""
    from plmfair.io import read_parquet

    frames = [
        compute_metrics(annotations, read_parquet(p), read_parquet(a), model=model, lang=lang)
        for (model, lang), p, a in zip(runs, predictions, answer_scores, strict=True)
    ]
    return pd.concat(frames, ignore_index=True)


TABLES = {"p_at_1": "Table 2 (P@1)", "spearman_rho": "Table 3 (Spearman)", "p_at_5": "Table 4 (P@5)",
          "kendall_tau": "Table 5 (Kendall)"}
LANG_ORDER = ("en", "es", "de", "fr")


def paper_table(metrics: pd.DataFrame, *, model: str, metric: str) -> pd.DataFrame:
    """One of Tables 2-5 for one model: rows MN FN MNN FNN (+ Avg for correlations), columns per
    language, each row's mean with sigma_gd across languages, a last row of each column's mean
    with sigma_gd across groups. † marks the worst-off group of a language; ‡ the language with
    the highest disparity."""
    m = metrics[(metrics["model"] == model) & metrics["group"].isin(GROUPS)]
    langs = [lang for lang in LANG_ORDER if lang in set(m["lang"])] + sorted(set(m["lang"]) - set(LANG_ORDER))
    grid = m.pivot(index="group", columns="lang", values=metric).reindex(index=list(GROUPS), columns=langs)
    scale = 1.0 if metric in ("p_at_1", "p_at_5", "mrr") else 100.0
    grid = grid * scale
    col_sigma = {lang: sigma_gd(grid[lang].to_numpy()) for lang in langs}
    worst_lang = max(col_sigma, key=lambda lang: -1 if pd.isna(col_sigma[lang]) else col_sigma[lang])
    rows = []
    for group in GROUPS:
        vals = grid.loc[group]
        row = {"group": group}
        for lang in langs:
            cell = "" if pd.isna(vals[lang]) else f"{vals[lang]:.1f}"
            if cell and vals[lang] == grid[lang].min():
                cell += "†"
            row[lang.upper() + ("‡" if lang == worst_lang else "")] = cell
        row["mean (σ_gd)"] = f"{vals.mean():.1f} ({sigma_gd(vals.to_numpy()):.1f})"
        rows.append(row)
    if metric in ("spearman_rho", "kendall_tau"):
        avg = {"group": "Avg"}
        for lang in langs:
            avg[lang.upper() + ("‡" if lang == worst_lang else "")] = f"{grid[lang].mean():.1f}"
        avg["mean (σ_gd)"] = ""
        rows.append(avg)
    last = {"group": "mean (σ_gd)"}
    for lang in langs:
        last[lang.upper() + ("‡" if lang == worst_lang else "")] = f"{grid[lang].mean():.1f} ({col_sigma[lang]:.1f})"
    last["mean (σ_gd)"] = ""
    rows.append(last)
    return pd.DataFrame(rows)


def disparity_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """sigma_gd of every metric: across groups per (model, language) and across languages per (model, group)."""
    rows = []
    m = metrics[metrics["group"].isin(GROUPS)]
    for metric in ("p_at_1", "p_at_5", "mrr", "spearman_rho", "kendall_tau"):
        for (model, lang), g in m.groupby(["model", "lang"], sort=False):
            rows.append({"model": model, "metric": metric, "across": "groups", "lang": lang, "group": "",
                         "sigma_gd": sigma_gd(g[metric].to_numpy())})
        for (model, group), g in m.groupby(["model", "group"], sort=False):
            rows.append({"model": model, "metric": metric, "across": "languages", "lang": "", "group": group,
                         "sigma_gd": sigma_gd(g[metric].to_numpy())})
    return pd.DataFrame(rows)



def write_paper_tables(metrics_path, *, out_dir_files: dict[str, dict[str, str]], disparity_csv: str) -> None:
    """Tables 2-5 for every model (CSV, Markdown, LaTeX) and the sigma_gd table."""
    from plmfair.io import read_parquet, write_csv
    from plmfair.tables import write_table

    metrics = read_parquet(metrics_path)
    for key, files in out_dir_files.items():
        model, metric = key.split("|")
        write_table(
            paper_table(metrics, model=model, metric=metric), **files,
            caption=f"MozArt {TABLES[metric]} for {model}: rows are annotator groups (M/F x native/non-native), "
                    f"cells in percent (correlations x 100); each row and column mean with its group disparity sigma_gd in parentheses; "
                    f"† worst-off group of a language, ‡ language with the highest disparity.",
            label=f"tab:mozart_{metric}_{model}", digits=1,
        )
    write_csv(disparity_table(metrics), disparity_csv)
