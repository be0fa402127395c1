"""Cloze construction as in MozArt: from a multi-way parallel corpus, its tokens and word
alignments to one masked word per sentence quadruple, balanced across parts of speech.

A candidate is a pivot-language (English) token with its counterpart in every other
language. Filters, in order (each configurable under ``cloze.filters``):

1. non_empty: the line has text in every language (empty lines stop the run unless
   ``cloze.empty_lines: skip``).
2. length: every language's sentence has between ``min_tokens`` and ``max_tokens`` tokens.
3. one_to_one: the pivot token is aligned to exactly one token of each language and that
   token to nothing else.
4. pos: every language's word has a universal POS in ``pos`` (NOUN, VERB, ADJ, ADV); with
   ``same_pos`` all four must carry the same one.
5. not_excluded: no word is tagged with a POS in ``exclude_pos`` (PROPN, AUX, NUM, PUNCT),
   nor looks like a number or punctuation to spaCy (``like_num``/``is_punct``).
6. not_mwe: no word is part of a multi-word expression: neither it nor one of its dependents
   carries a relation in ``mwe_deps`` (UD fixed, flat, compound:prt, goeswith; spaCy's
   English ``prt`` and German ``svp`` for separable verb particles). A relation matches by
   its full name or by the part before ``:`` (flat matches flat:name).
7. letters_only: every word consists of letters only.

Then one candidate per line, balanced across the POS classes of ``pos`` (taken from the
pivot word): ``sample.n / len(pos)`` lines per class, drawn with ``numpy``'s generator
seeded by ``sample.seed``; the scarcest class is drawn first and a line is used once.

Outputs:

``results/cloze/{corpus}/sentences.parquet`` (:data:`SENTENCES_SCHEMA`), one row per
language and sampled line, shaped like the MozArt sentences;
``results/cloze/{corpus}/construction.parquet`` (:data:`CONSTRUCTION_SCHEMA`), the count
left after each filter, per language, rendered for all corpora as
``results/tables/cloze_construction.csv`` by :func:`plmfair.tables.write_construction_table`.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from plmfair.data import MASK
from plmfair.errors import DataError

log = logging.getLogger(__name__)

SENTENCES_SCHEMA = {
    "lang": "ISO 639-1 code of the sentence",
    "s_id": "sentence id, shared by the parallel sentences of a quadruple ({corpus}-{line})",
    "text": "the sentence with the masked word replaced by [MASK]",
    "true_mask": "the masked word",
    "tag": "universal POS of the masked word in this language",
    "pos_class": "POS class of the quadruple (the pivot word's POS), the class the sample is balanced on",
    "line": "1-based line of the corpus files",
    "token": "0-based index of the masked token in this language's tokens",
}

CONSTRUCTION_SCHEMA = {
    "corpus": "corpus name in config",
    "step": "filter, in the order applied",
    "unit": "sentences (lines) or words (candidate pivot words with their counterparts)",
    "description": "what the step keeps",
    "lang": "language the count is for, or 'all' for what passes in every language",
    "count": "number left after the step (for a language: passing the step's test in that language, "
             "among what passed every earlier step in all languages)",
}

DEFAULT_FILTERS = {
    "min_tokens": 5,
    "max_tokens": 40,
    "pos": ["NOUN", "VERB", "ADJ", "ADV"],
    "same_pos": False,
    "exclude_pos": ["PROPN", "AUX", "NUM", "PUNCT"],
    "exclude_numbers": True,
    "mwe_deps": ["fixed", "flat", "compound:prt", "goeswith", "prt", "svp"],
    "letters_only": True,
}


def _pivot_first(tokens: Mapping[str, pd.DataFrame], pivot: str) -> list[str]:
    return [pivot] + [lang for lang in tokens if lang != pivot]


def _dep_matches(dep: pd.Series, labels: Sequence[str]) -> pd.Series:
    labels = set(labels)
    base = dep.str.split(":").str[0]
    return dep.isin(labels) | base.isin(labels)


def _in_mwe(tokens: pd.DataFrame, labels: Sequence[str]) -> pd.Series:
    """Tokens that carry an MWE relation or govern a token that does."""
    rel = _dep_matches(tokens["dep"].fillna(""), labels)
    governs = tokens.loc[rel & (tokens["head"] != tokens["token"]), ["line", "head"]]
    heads = set(zip(governs["line"], governs["head"], strict=True))
    gov = pd.Series([(ln, t) in heads for ln, t in zip(tokens["line"], tokens["token"], strict=True)],
                    index=tokens.index)
    return rel | gov


def _one_to_one(links: pd.DataFrame) -> pd.DataFrame:
    """Links whose pivot token and other token each take part in this link only."""
    p = links.groupby(["line", "pivot_token"])["token"].transform("size")
    o = links.groupby(["line", "token"])["pivot_token"].transform("size")
    return links[(p == 1) & (o == 1)]


def candidate_words(tokens: Mapping[str, pd.DataFrame], alignments: Mapping[str, pd.DataFrame], *, pivot: str,
                    n_lines: int, corpus: str, filters: Mapping | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every candidate that passes the filters, and the count table (:data:`CONSTRUCTION_SCHEMA`).

    ``tokens``: per language, a tokens table (:data:`plmfair.pos.TOKENS_SCHEMA`) over the same
    ``n_lines`` lines; ``alignments``: per non-pivot language, links
    (:data:`plmfair.alignment.ALIGNMENT_SCHEMA`).
    """
    f = {**DEFAULT_FILTERS, **(filters or {})}
    langs = _pivot_first(tokens, pivot)
    missing = [lang for lang in langs[1:] if lang not in alignments]
    if missing:
        raise DataError(f"corpus {corpus}: no alignments for {missing}")
    counts: list[dict] = []

    def record(step, unit, desc, per_lang: Mapping[str, int | None], total: int):
        for lang in langs:
            counts.append({"corpus": corpus, "step": step, "unit": unit, "description": desc, "lang": lang,
                           "count": per_lang.get(lang)})
        counts.append({"corpus": corpus, "step": step, "unit": unit, "description": desc, "lang": "all",
                       "count": total})

    all_lines = pd.Index(range(1, n_lines + 1))
    record("lines", "sentences", "lines in the corpus files", {lang: n_lines for lang in langs}, n_lines)
    lengths = {lang: tokens[lang].groupby("line").size().reindex(all_lines, fill_value=0) for lang in langs}
    nonempty = {lang: lengths[lang] > 0 for lang in langs}
    keep = pd.Series(True, index=all_lines)
    for lang in langs:
        keep &= nonempty[lang]
    record("non_empty", "sentences", "text in every language", {lang: int(nonempty[lang].sum()) for lang in langs},
           int(keep.sum()))
    lo, hi = f["min_tokens"], f["max_tokens"]
    in_bounds = {lang: lengths[lang].between(lo, hi) for lang in langs}
    per = {lang: int((keep & in_bounds[lang]).sum()) for lang in langs}
    for lang in langs:
        keep &= in_bounds[lang]
    record("length", "sentences", f"{lo} to {hi} tokens in every language", per, int(keep.sum()))
    lines_kept = set(all_lines[keep.to_numpy()])

    def with_mwe(lang):
        tok = tokens[lang].assign(in_mwe=_in_mwe(tokens[lang], f["mwe_deps"]))
        return tok.rename(columns={c: f"{c}_{lang}" for c in tok.columns if c != "line"})

    cand = with_mwe(pivot)
    cand = cand[cand["line"].isin(lines_kept)].reset_index(drop=True)
    for lang in langs[1:]:
        links = _one_to_one(alignments[lang]).rename(columns={"pivot_token": f"token_{pivot}", "token": f"token_{lang}"})
        cand = cand.merge(links, on=["line", f"token_{pivot}"], how="left")
        cand = cand.merge(with_mwe(lang), on=["line", f"token_{lang}"], how="left")
    record("candidates", "words", "pivot-language tokens of the kept lines",
           {lang: len(cand) for lang in langs}, len(cand))

    def step(name, desc, test):
        nonlocal cand
        ok = {lang: test(lang) for lang in langs}
        per_lang = {lang: (None if ok[lang] is None else int(ok[lang].sum())) for lang in langs}
        both = pd.Series(True, index=cand.index)
        for lang in langs:
            if ok[lang] is not None:
                both &= ok[lang]
        if name == "pos" and f["same_pos"]:
            for lang in langs[1:]:
                both &= cand[f"upos_{lang}"] == cand[f"upos_{pivot}"]
        cand = cand[both].reset_index(drop=True)
        record(name, "words", desc, per_lang, len(cand))

    step("one_to_one", "aligned one-to-one with the pivot word in every language",
         lambda lang: None if lang == pivot else cand[f"token_{lang}"].notna())
    pos = list(f["pos"])
    step("pos", f"POS in {pos} in every language" + (" (the same in all)" if f["same_pos"] else ""),
         lambda lang: cand[f"upos_{lang}"].isin(pos))

    def not_excluded(lang):
        bad = cand[f"upos_{lang}"].isin(list(f["exclude_pos"])) | cand[f"is_punct_{lang}"].astype(bool)
        if f["exclude_numbers"]:
            bad |= cand[f"like_num_{lang}"].astype(bool)
        return ~bad

    step("not_excluded", f"no POS in {list(f['exclude_pos'])}" + (", no number-like word" if f["exclude_numbers"] else ""),
         not_excluded)
    step("not_mwe", f"not in a multi-word expression (relations {list(f['mwe_deps'])})",
         lambda lang: ~cand[f"in_mwe_{lang}"].astype(bool))
    if f["letters_only"]:
        step("letters_only", "letters only in every language",
             lambda lang: cand[f"text_{lang}"].astype(str).map(str.isalpha).astype(bool))
    n_sent = cand["line"].nunique()
    record("sentences_with_candidate", "sentences", "lines with at least one candidate",
           {lang: n_sent for lang in langs}, n_sent)
    cand = cand.assign(pos_class=cand[f"upos_{pivot}"])
    for lang in langs[1:]:
        cand[f"token_{lang}"] = cand[f"token_{lang}"].astype("int64")
    return cand, pd.DataFrame(counts)


def balanced_sample(cand: pd.DataFrame, *, n: int, classes: Sequence[str], seed: int, corpus: str,
                    pivot: str) -> pd.DataFrame:
    """``n / len(classes)`` lines per POS class, one candidate each, no line twice, reproducible from ``seed``."""
    k, rest = divmod(n, len(classes))
    if rest:
        raise DataError(f"corpus {corpus}: sample size {n} cannot be split evenly across the POS classes {list(classes)}")
    rng = np.random.default_rng(seed)
    cand = cand.sort_values(["line", f"token_{pivot}"]).reset_index(drop=True)
    lines = {c: sorted(set(cand.loc[cand["pos_class"] == c, "line"])) for c in classes}
    order = sorted(classes, key=lambda c: (len(lines[c]), c))
    used: set[int] = set()
    picked = []
    for c in order:
        avail = [ln for ln in lines[c] if ln not in used]
        if len(avail) < k:
            have = {cl: len(lines[cl]) for cl in classes}
            raise DataError(
                f"corpus {corpus}: only {len(avail)} line(s) still have a {c} candidate after the filters, the balanced "
                f"sample needs {k} per class (lines with a candidate per class: {have}). Lower cloze.sample.n, relax "
                f"cloze.filters, or use a larger corpus"
            )
        chosen = sorted(int(x) for x in rng.choice(avail, size=k, replace=False))
        used.update(chosen)
        for ln in chosen:
            options = cand[(cand["line"] == ln) & (cand["pos_class"] == c)]
            picked.append(options.iloc[int(rng.integers(len(options)))])
    out = pd.DataFrame(picked).sort_values("line").reset_index(drop=True)
    log.info("corpus %s: sampled %d quadruples (%s per class)", corpus, len(out), k)
    return out


def masked_text(tokens: pd.DataFrame, line: int, token: int) -> tuple[str, str]:
    """The line's text with token ``token`` replaced by [MASK], and the masked word."""
    sent = tokens[tokens["line"] == line].sort_values("token")
    parts = []
    word = None
    for i, text, ws in zip(sent["token"], sent["text"], sent["whitespace"], strict=True):
        if i == token:
            word = text
            text = MASK
        parts.append(f"{text}{ws}")
    if word is None:
        raise DataError(f"line {line} has no token {token}")
    return "".join(parts).strip(), word


def cloze_sentences_from_sample(sample: pd.DataFrame, tokens: Mapping[str, pd.DataFrame], *, pivot: str,
                                corpus: str) -> pd.DataFrame:
    """One row per language and sampled line (:data:`SENTENCES_SCHEMA`)."""
    langs = _pivot_first(tokens, pivot)
    rows = []
    for _, cand in sample.iterrows():
        line = int(cand["line"])
        for lang in langs:
            tok = int(cand[f"token_{lang}"])
            text, word = masked_text(tokens[lang], line, tok)
            rows.append({"lang": lang, "s_id": f"{corpus}-{line}", "text": text, "true_mask": word,
                         "tag": cand[f"upos_{lang}"], "pos_class": cand["pos_class"], "line": line, "token": tok})
    df = pd.DataFrame(rows, columns=list(SENTENCES_SCHEMA))
    return df.astype({c: "string" for c in ("lang", "s_id", "text", "true_mask", "tag", "pos_class")}
                     | {"line": "int64", "token": "int64"})


def verify_sentences(sentences: pd.DataFrame, tokens: Mapping[str, pd.DataFrame], alignments: Mapping[str, pd.DataFrame],
                     *, pivot: str, pos: Sequence[str]) -> None:
    """Check every quadruple against its inputs before it is written: one [MASK] per sentence, the
    masked word is the token named, an allowed POS in every language, and one-to-one aligned with
    the pivot word. A failure here is a bug, reported with the s_id."""
    tok_index = {lang: t.set_index(["line", "token"]) for lang, t in tokens.items()}
    for s_id, quad in sentences.groupby("s_id", sort=False):
        line = int(quad["line"].iloc[0])
        piv = int(quad.loc[quad["lang"] == pivot, "token"].iloc[0])
        for lang, tok, text, word in zip(quad["lang"], quad["token"], quad["text"], quad["true_mask"], strict=True):
            t = tok_index[lang].loc[(line, int(tok))]
            problems = []
            if text.count(MASK) != 1:
                problems.append(f"{text.count(MASK)} masks")
            if t["text"] != word or t["upos"] not in pos:
                problems.append(f"token {tok} is {t['text']!r}/{t['upos']}, expected {word!r} with a POS in {list(pos)}")
            if lang != pivot:
                links = alignments[lang]
                links = links[links["line"] == line]
                if set(links.loc[links["pivot_token"] == piv, "token"]) != {tok} or set(
                        links.loc[links["token"] == tok, "pivot_token"]) != {piv}:
                    problems.append(f"token {tok} is not aligned one-to-one with pivot token {piv}")
            if problems:
                raise AssertionError(f"cloze construction produced an invalid sentence {s_id} ({lang}): {'; '.join(problems)}")


def construct(tokens: Mapping[str, pd.DataFrame], alignments: Mapping[str, pd.DataFrame], *, pivot: str, n_lines: int,
              corpus: str, filters: Mapping | None, n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sentences (:data:`SENTENCES_SCHEMA`) and counts (:data:`CONSTRUCTION_SCHEMA`) of one corpus."""
    f = {**DEFAULT_FILTERS, **(filters or {})}
    cand, counts = candidate_words(tokens, alignments, pivot=pivot, n_lines=n_lines, corpus=corpus, filters=f)
    sample = balanced_sample(cand, n=n, classes=list(f["pos"]), seed=seed, corpus=corpus, pivot=pivot)
    sentences = cloze_sentences_from_sample(sample, tokens, pivot=pivot, corpus=corpus)
    verify_sentences(sentences, tokens, alignments, pivot=pivot, pos=f["pos"])
    langs = _pivot_first(tokens, pivot)
    extra = [{"corpus": corpus, "step": "sampled", "unit": "sentences",
              "description": f"balanced sample, seed {seed}: {n // len(f['pos'])} per class of {list(f['pos'])}",
              "lang": lang, "count": len(sample)} for lang in [*langs, "all"]]
    counts = pd.concat([counts, pd.DataFrame(extra)], ignore_index=True)
    counts["count"] = counts["count"].astype("Int64")
    return sentences, counts


def write_annotation_sheets(sentences: pd.DataFrame, *, lang: str, out_dir: str | os.PathLike,
                            batch_size: int = 10) -> list[Path]:
    """CSV sheets of ``batch_size`` sentences for annotators: batch, s_id, text, mask (left empty).

    Answers come back in the MozArt JSONL format (one line per annotator and sentence with
    s_id, text, mask, u_id and the demographic flags) and are read by :func:`ingest_answers`.
    """
    from plmfair.io import atomic_dir, write_csv

    sents = sentences[sentences["lang"] == lang].reset_index(drop=True)
    if sents.empty:
        raise DataError(f"no constructed sentences for language {lang!r}")
    out_dir = Path(out_dir)
    paths = []
    with atomic_dir(out_dir) as tmp:
        for b in range(math.ceil(len(sents) / batch_size)):
            chunk = sents.iloc[b * batch_size:(b + 1) * batch_size]
            sheet = pd.DataFrame({"batch": b + 1, "s_id": chunk["s_id"], "lang": lang, "text": chunk["text"],
                                  "mask": ""})
            name = f"batch_{b + 1:03d}.csv"
            write_csv(sheet, tmp / name)
            paths.append(out_dir / name)
    return paths


def ingest_answers(sentences: pd.DataFrame, answer_files: Mapping[str, str | os.PathLike]) -> pd.DataFrame:
    """Answers in the MozArt JSONL format, per language, as an annotations table
    (:data:`plmfair.data.MOZART_SCHEMA`); every answer must be to a constructed sentence with its text."""
    from plmfair.data import mozart_frame, read_mozart_jsonl

    frames = []
    for lang, path in answer_files.items():
        ann = read_mozart_jsonl(path, lang)
        ref = sentences[sentences["lang"] == lang].set_index("s_id")
        for s_id, text in zip(ann["s_id"], ann["text"], strict=True):
            if s_id not in ref.index:
                raise DataError(
                    f"{path}: s_id {s_id} is not a constructed {lang} sentence of this corpus "
                    f"(ids look like {ref.index[0] if len(ref) else '?'}); answers must use the s_id of the sheets"
                )
            if text != ref.at[s_id, "text"]:
                raise DataError(f"{path}: s_id {s_id} has text {text!r}, the constructed sentence is {ref.at[s_id, 'text']!r}")
        ann["true_mask"] = ann["true_mask"].fillna(ann["s_id"].map(ref["true_mask"]))
        ann["tag"] = ann["tag"].fillna(ann["s_id"].map(ref["tag"]))
        frames.append(ann)
    return mozart_frame(pd.concat(frames, ignore_index=True).to_dict("records"))


def construct_files(token_files: Mapping[str, str | os.PathLike], alignment_files: Mapping[str, str | os.PathLike], *,
                    pivot: str, corpus: str, filters: Mapping | None, n: int, seed: int
                    ) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """:func:`construct` from the tokens and alignments files of one corpus; also the run metadata."""
    from plmfair.data import check_parallel
    from plmfair.io import read_parquet, read_parquet_meta

    metas = {lang: read_parquet_meta(p) for lang, p in token_files.items()}
    n_lines = check_parallel({lang: m["n_lines"] for lang, m in metas.items()},
                             {lang: m["source"] for lang, m in metas.items()})
    tokens = {lang: read_parquet(p) for lang, p in token_files.items()}
    aligns = {lang: read_parquet(p) for lang, p in alignment_files.items()}
    sentences, counts = construct(tokens, aligns, pivot=pivot, n_lines=n_lines, corpus=corpus, filters=filters,
                                  n=n, seed=seed)
    meta = {"corpus": corpus, "pivot": pivot, "n": n, "seed": seed, "filters": {**DEFAULT_FILTERS, **(filters or {})},
            "sources": {lang: m["source"] for lang, m in metas.items()},
            "alignments": {lang: read_parquet_meta(p) for lang, p in alignment_files.items()}}
    return sentences, counts, meta
