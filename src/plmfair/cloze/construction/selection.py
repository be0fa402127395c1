"""Cloze sentences selected from a tagged and aligned corpus: the balanced sample of the candidates that pass
the filters (:mod:`plmfair.cloze.construction.filters`: one-to-one alignment in every language, content POS,
length), the sentences masked at its words, and the count each step leaves (:data:`CONSTRUCTION_SCHEMA`),
streamed from the corpus's files (:func:`construct_files`). The rules in full: docs/construction.md."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from plmfair.cloze.construction.filters import (
    DEFAULT_FILTERS,
    add_counts,
    counts_recorder,
    lexical_candidates,
    pivot_first,
    tagged_candidates,
)
from plmfair.cloze.construction.pos import ROW_GROUP_LINES, load_pipeline, tag_tokens
from plmfair.errors import DataError
from plmfair.io.parquet import read_parquet, read_parquet_meta
from plmfair.io.text_files import check_parallel
from plmfair.text import MASK

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


def _per_class(n: int, classes: Sequence[str], corpus: str) -> int:
    k, rest = divmod(n, len(classes))
    if rest:
        raise DataError(
            f"corpus {corpus}: sample size {n} cannot be split evenly across the POS classes {list(classes)}"
        )
    return k


def balanced_sample(
    cand: pd.DataFrame, *, n: int, classes: Sequence[str], seed: int, corpus: str, pivot: str
) -> pd.DataFrame:
    """``n / len(classes)`` lines per POS class, one candidate each, no line twice, reproducible from ``seed``."""
    k = _per_class(n, classes, corpus)
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
                f"corpus {corpus}: only {len(avail)} line(s) still have a {c} candidate after the filters, the "
                "balanced "
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


class SeededWalk:
    """The ``as_needed`` sample: lines visited in a seeded random order, each taken for a POS
    class it has a candidate of while that class still needs lines, until every class has
    ``n / len(classes)``. Which class and which candidate a line gives are drawn from a
    generator seeded by (seed, line), so the sample depends only on the seed and the
    candidates, never on how many lines were tagged at a time."""

    def __init__(self, *, n: int, classes: Sequence[str], seed: int, corpus: str, pivot: str):
        self.k = _per_class(n, classes, corpus)
        self.need = {c: self.k for c in classes}
        self.seed, self.corpus, self.pivot = seed, corpus, pivot
        self.picked: list[pd.Series] = []
        self.seen = {c: 0 for c in classes}

    def order(self, lines: Iterable[int]) -> list[int]:
        return [
            int(x) for x in np.random.default_rng(self.seed).permutation(np.unique(np.asarray(lines, dtype="int64")))
        ]

    @property
    def full(self) -> bool:
        return all(v == 0 for v in self.need.values())

    def take(self, cand: pd.DataFrame, lines: Sequence[int]) -> bool:
        """Visit ``lines`` (in the walk's order) with their candidates; True once the sample is full."""
        by_line = dict(tuple(cand.sort_values(["line", f"token_{self.pivot}"]).groupby("line", sort=False)))
        for ln in lines:
            options = by_line.get(ln)
            if options is None:
                continue
            classes = sorted(c for c in set(options["pos_class"]) if c in self.need)
            for c in classes:
                self.seen[c] += 1
            open_classes = [c for c in classes if self.need[c] > 0]
            if not open_classes or self.full:
                continue
            rng = np.random.default_rng([self.seed, int(ln)])
            c = open_classes[int(rng.integers(len(open_classes)))]
            choice = options[options["pos_class"] == c]
            self.picked.append(choice.iloc[int(rng.integers(len(choice)))])
            self.need[c] -= 1
        return self.full

    def sample(self) -> pd.DataFrame:
        if not self.full:
            short = {c: self.k - v for c, v in self.need.items() if v}
            raise DataError(
                f"corpus {self.corpus}: every line was examined and the balanced sample is still short of {short} "
                f"(needs {self.k} per class; lines with a candidate per class: {self.seen}). Lower cloze.sample.n, "
                f"relax cloze.filters, or use a larger corpus"
            )
        out = pd.DataFrame(self.picked).sort_values("line").reset_index(drop=True)
        log.info("corpus %s: sampled %d quadruples (%s per class)", self.corpus, len(out), self.k)
        return out


EXAMINE = ("as_needed", "all")


def select_sample(
    lexical: pd.DataFrame,
    tag: Callable[[Sequence[int]], Mapping[str, pd.DataFrame]],
    *,
    pivot: str,
    langs: Sequence[str],
    corpus: str,
    filters: Mapping,
    n: int,
    seed: int,
    examine: str = "as_needed",
    batch_lines: int = 2000,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tag the lines with lexical candidates batch by batch and draw the sample; its counts.

    ``tag(lines)`` returns, per language, the :data:`plmfair.cloze.construction.pos.TAGS_SCHEMA` rows of those
    lines. ``examine``: ``all`` tags every line and draws :func:`balanced_sample` from all the
    candidates; ``as_needed`` tags lines in the :class:`SeededWalk` order only until the
    sample is full (the counts from ``examined`` on are of the lines examined).
    """
    if examine not in EXAMINE:
        raise DataError(f"cloze.sample.examine: {examine!r} is not one of {EXAMINE}")
    classes = list(filters["pos"])
    lines = sorted(int(x) for x in lexical["line"].unique())
    if not lines:
        raise DataError(
            f"corpus {corpus}: no line has a candidate after the lexical filters (length, one_to_one, "
            f"letters_only, not_number); see its construction table and relax cloze.filters"
        )
    by_line = lexical.set_index("line").sort_index()
    counts, parts = [], []
    walk = SeededWalk(n=n, classes=classes, seed=seed, corpus=corpus, pivot=pivot) if examine == "as_needed" else None
    order = walk.order(lines) if walk else lines
    n_examined = 0
    for start in range(0, len(order), batch_lines):
        batch = order[start : start + batch_lines]
        cand, c = tagged_candidates(
            by_line.loc[sorted(batch)].reset_index(), tag(batch), pivot=pivot, corpus=corpus, filters=filters
        )
        counts.append(c)
        n_examined += len(batch)
        if walk is None:
            parts.append(cand)
        elif walk.take(cand, batch):
            break
    if walk is None:
        sample = balanced_sample(
            pd.concat(parts, ignore_index=True), n=n, classes=classes, seed=seed, corpus=corpus, pivot=pivot
        )
        how = "balanced sample"
    else:
        sample = walk.sample()
        how = "first lines of each class in a seeded random order"
    k = n // len(classes)
    scope = "every" if walk is None else "in seeded order until the sample was full, of"
    examined: list[dict] = []
    sampled: list[dict] = []
    counts_recorder(examined, langs, corpus)(
        "examined_lines",
        "sentences",
        f"lines tagged and parsed: {scope} {len(lines)} with a candidate",
        dict.fromkeys(langs, n_examined),
        n_examined,
    )
    counts_recorder(sampled, langs, corpus)(
        "sampled",
        "sentences",
        f"{how}, seed {seed}: {k} per class of {classes}",
        dict.fromkeys(langs, len(sample)),
        len(sample),
    )
    return sample, add_counts([pd.DataFrame(examined), *counts, pd.DataFrame(sampled)])


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


def cloze_sentences_from_sample(
    sample: pd.DataFrame, tokens: Mapping[str, pd.DataFrame], *, pivot: str, corpus: str
) -> pd.DataFrame:
    """One row per language and sampled line (:data:`SENTENCES_SCHEMA`)."""
    langs = pivot_first(tokens, pivot)
    rows = []
    for _, cand in sample.iterrows():
        line = int(cand["line"])
        for lang in langs:
            tok = int(cand[f"token_{lang}"])
            text, word = masked_text(tokens[lang], line, tok)
            rows.append(
                {
                    "lang": lang,
                    "s_id": f"{corpus}-{line}",
                    "text": text,
                    "true_mask": word,
                    "tag": cand[f"upos_{lang}"],
                    "pos_class": cand["pos_class"],
                    "line": line,
                    "token": tok,
                }
            )
    df = pd.DataFrame(rows, columns=list(SENTENCES_SCHEMA))
    return df.astype(
        {c: "string" for c in ("lang", "s_id", "text", "true_mask", "tag", "pos_class")}
        | {"line": "int64", "token": "int64"}
    )


def verify_sentences(
    sentences: pd.DataFrame,
    tokens: Mapping[str, pd.DataFrame],
    alignments: Mapping[str, pd.DataFrame],
    *,
    pivot: str,
    pos: Sequence[str],
) -> None:
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
                problems.append(
                    f"token {tok} is {t['text']!r}/{t['upos']}, expected {word!r} with a POS in {list(pos)}"
                )
            if lang != pivot:
                links = alignments[lang]
                links = links[links["line"] == line]
                if set(links.loc[links["pivot_token"] == piv, "token"]) != {tok} or set(
                    links.loc[links["token"] == tok, "pivot_token"]
                ) != {piv}:
                    problems.append(f"token {tok} is not aligned one-to-one with pivot token {piv}")
            if problems:
                raise AssertionError(
                    f"cloze construction produced an invalid sentence {s_id} ({lang}): {'; '.join(problems)}"
                )


def _compact(cand: pd.DataFrame) -> pd.DataFrame:
    """A range's lexical candidates as the sample needs them: line and token positions as 32-bit integers,
    without the words (what is sampled is read again from the tokens). Held for the whole corpus, the
    words made the memory of a million lines grow with how many candidates eflomal's links leave
    (1.7 to 3.1 GB for one corpus in two runs); the positions alone take a few hundred MB."""
    return cand[[c for c in cand.columns if not c.startswith("text_")]].astype("int32")


def _line_range_filter(start: int, stop: int) -> list:
    return [("line", ">=", start), ("line", "<", stop)]


def construct_files(
    token_files: Mapping[str, str | os.PathLike],
    alignment_files: Mapping[str, str | os.PathLike],
    *,
    pivot: str,
    corpus: str,
    filters: Mapping | None,
    n: int,
    seed: int,
    pipelines: Mapping[str, str | os.PathLike],
    tokenized: bool = False,
    examine: str = "as_needed",
    join_counts: str | os.PathLike | None = None,
    batch_lines: int = 2000,
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Sentences (:data:`SENTENCES_SCHEMA`) and counts (:data:`CONSTRUCTION_SCHEMA`) of one corpus,
    streamed from its tokens and alignments files; also the run metadata (with the seconds spent
    filtering, tagging and sampling).

    The lexical filters run over one row group of lines (:data:`plmfair.cloze.construction.pos.ROW_GROUP_LINES`)
    at a time; only the lines the sample examines are read again, tagged and parsed
    (:func:`plmfair.cloze.construction.pos.tag_tokens`). Memory holds one range of lines and the candidates.

    Long because it is the streaming loop of construction (filter a range, sample, tag what the sample examines,
    count) with its timers; its steps are functions of their own.
    """

    f = {**DEFAULT_FILTERS, **(filters or {})}
    metas = {lang: read_parquet_meta(p) for lang, p in token_files.items()}
    n_lines = check_parallel(
        {lang: m["n_lines"] for lang, m in metas.items()}, {lang: m["source"] for lang, m in metas.items()}
    )
    langs = [pivot] + [lang for lang in token_files if lang != pivot]
    seconds = {"filter": 0.0, "tag": 0.0, "sample": 0.0}
    clock = time.perf_counter()
    parts, counts = [], []
    for start in range(1, n_lines + 1, ROW_GROUP_LINES):
        stop = min(start + ROW_GROUP_LINES, n_lines + 1)
        rows = _line_range_filter(start, stop)
        toks = {lang: read_parquet(token_files[lang], filters=rows) for lang in langs}
        links = {lang: read_parquet(p, filters=rows) for lang, p in alignment_files.items()}
        cand, c = lexical_candidates(toks, links, pivot=pivot, lines=range(start, stop), corpus=corpus, filters=f)
        parts.append(_compact(cand))
        counts.append(c)
    lexical = pd.concat(parts, ignore_index=True)
    seconds["filter"] = time.perf_counter() - clock
    nlps = {lang: load_pipeline(pipelines[lang], lang) for lang in langs}

    def read_tokens(lines: Iterable[int]) -> dict[str, pd.DataFrame]:
        return {
            lang: read_parquet(token_files[lang], filters=[("line", "in", [int(x) for x in lines])]) for lang in langs
        }

    def tag_read(tokens: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
        t0 = time.perf_counter()
        out = {
            lang: tag_tokens(nlps[lang], t, tokenized=tokenized, source=metas[lang]["source"])
            for lang, t in tokens.items()
        }
        seconds["tag"] += time.perf_counter() - t0
        return out

    def tag(lines: Sequence[int]) -> dict[str, pd.DataFrame]:
        return tag_read(read_tokens(lines))

    clock = time.perf_counter()
    sample, selected = select_sample(
        lexical,
        tag,
        pivot=pivot,
        langs=langs,
        corpus=corpus,
        filters=f,
        n=n,
        seed=seed,
        examine=examine,
        batch_lines=batch_lines,
    )
    sampled = sorted(int(x) for x in sample["line"])
    tokens = read_tokens(sampled)
    tags = tag_read(tokens)
    tokens = {lang: t.merge(tags[lang], on=["line", "token"], validate="one_to_one") for lang, t in tokens.items()}
    links = {lang: read_parquet(p, filters=[("line", "in", sampled)]) for lang, p in alignment_files.items()}
    sentences = cloze_sentences_from_sample(sample, tokens, pivot=pivot, corpus=corpus)
    verify_sentences(sentences, tokens, links, pivot=pivot, pos=f["pos"])
    seconds["sample"] = time.perf_counter() - clock - seconds["tag"]
    lead = [read_parquet(join_counts)] if join_counts else []
    counts = pd.concat([*lead, add_counts(counts), selected], ignore_index=True).astype({"count": "Int64"})
    meta = {
        "corpus": corpus,
        "pivot": pivot,
        "n": n,
        "seed": seed,
        "examine": examine,
        "filters": f,
        "n_lines": n_lines,
        "seconds": seconds,
        "sources": {lang: m["source"] for lang, m in metas.items()},
        "alignments": {lang: read_parquet_meta(p) for lang, p in alignment_files.items()},
    }
    return sentences, counts, meta
