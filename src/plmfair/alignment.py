"""Word alignments: Pharaoh files, eflomal, symmetrisation.

An alignment of a sentence pair is a set of links ``(i, j)``: token ``i`` of the pivot
language (English) and token ``j`` of the other language, 0-based over the tokens of
:mod:`plmfair.pos`. Pharaoh format writes one sentence per line as ``i-j`` pairs
separated by spaces.

Alignments (``results/cloze/{corpus}/alignments/{lang}.parquet``), one row per link
(:data:`ALIGNMENT_SCHEMA`): line (int64, 1-based), pivot_token (int64), token (int64).
The file's metadata records the source (a Pharaoh file, or eflomal with the
symmetrisation used).

eflomal (Östling & Tiedemann 2016) samples with a seed from /dev/urandom, so two runs on
the same text can differ slightly; the workflow keeps the alignment file and reruns it
only when its inputs change, and the sample drawn from it is reproducible from a seed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from plmfair.errors import DataError

log = logging.getLogger(__name__)

ALIGNMENT_SCHEMA = {
    "line": "1-based line of the corpus",
    "pivot_token": "0-based token index in the pivot language (English)",
    "token": "0-based token index in the other language",
}
SYMMETRISATIONS = ("intersection", "union", "grow-diag-final", "grow-diag-final-and")

Links = set[tuple[int, int]]


def parse_pharaoh(lines: Sequence[str], *, source: str, src_lengths: Sequence[int] | None = None,
                  tgt_lengths: Sequence[int] | None = None) -> list[Links]:
    """Parse Pharaoh lines; with sentence lengths given, every index must fall inside its sentence."""
    if src_lengths is not None and len(lines) != len(src_lengths):
        raise DataError(
            f"{source}: {len(lines)} alignment line(s) for a corpus of {len(src_lengths)} line(s); "
            f"an alignment file needs exactly one line per corpus line (an empty line for no links)"
        )
    out = []
    for lineno, text in enumerate(lines, start=1):
        links: Links = set()
        for item in text.split():
            i_s, sep, j_s = item.partition("-")
            if not sep or not i_s.isdigit() or not j_s.isdigit():
                raise DataError(
                    f"{source} line {lineno}: malformed link {item!r}; Pharaoh format is 0-based `i-j` pairs "
                    f"separated by spaces (pivot token i, other-language token j)"
                )
            i, j = int(i_s), int(j_s)
            if src_lengths is not None and tgt_lengths is not None and (
                i >= src_lengths[lineno - 1] or j >= tgt_lengths[lineno - 1]
            ):
                raise DataError(
                    f"{source} line {lineno}: link {item} is out of range: the pivot sentence has "
                    f"{src_lengths[lineno - 1]} token(s) and the other {tgt_lengths[lineno - 1]} (indices are 0-based); "
                    f"the alignments must index the same tokens as the corpus (see cloze.corpora.*.tokenized)"
                )
            links.add((i, j))
        out.append(links)
    return out


def format_pharaoh(links: Iterable[tuple[int, int]]) -> str:
    return " ".join(f"{i}-{j}" for i, j in sorted(links))


def _grow_diag_final(fwd: Links, rev: Links, *, final_and: bool) -> Links:
    """Koehn et al. (2003): start from the intersection, grow into neighbouring union points
    (diagonals included) that align a yet unaligned word, then add the remaining directional
    points whose words are unaligned (either word: -final; both words: -final-and)."""
    union = fwd | rev
    aligned = set(fwd & rev)
    src_done = {i for i, _ in aligned}
    tgt_done = {j for _, j in aligned}
    neighbours = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]
    grew = True
    while grew:
        grew = False
        for i, j in sorted(aligned):
            for di, dj in neighbours:
                p = (i + di, j + dj)
                if p in union and p not in aligned and (p[0] not in src_done or p[1] not in tgt_done):
                    aligned.add(p)
                    src_done.add(p[0])
                    tgt_done.add(p[1])
                    grew = True
    for direction in (fwd, rev):
        for i, j in sorted(direction):
            free_i, free_j = i not in src_done, j not in tgt_done
            if (free_i and free_j) if final_and else (free_i or free_j):
                aligned.add((i, j))
                src_done.add(i)
                tgt_done.add(j)
    return aligned


def symmetrise(fwd: Links, rev: Links, method: str = "intersection") -> Links:
    """Combine the two directional alignments of a sentence pair (both as (pivot, other) links)."""
    if method == "intersection":
        return fwd & rev
    if method == "union":
        return fwd | rev
    if method == "grow-diag-final":
        return _grow_diag_final(fwd, rev, final_and=False)
    if method == "grow-diag-final-and":
        return _grow_diag_final(fwd, rev, final_and=True)
    raise ValueError(f"unknown symmetrisation {method!r}; one of {SYMMETRISATIONS}")


@contextlib.contextmanager
def _omp_threads(threads: int | None):
    """OMP_NUM_THREADS for a child process started inside the block."""
    old = os.environ.get("OMP_NUM_THREADS")
    if threads:
        os.environ["OMP_NUM_THREADS"] = str(threads)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = old


def _eflomal_token(tok: str) -> str:
    # eflomal splits on white space: keep one token per spaCy token, white-space tokens included
    return "".join(tok.split()) or "<sp>"


def run_eflomal(src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]], *, model: int = 3,
                rel_iterations: float = 1.0, n_samplers: int = 3,
                threads: int | None = None) -> tuple[list[Links], list[Links]]:
    """Align tokenized sentence pairs with eflomal in both directions; (forward, reverse) links, each
    written as (source, target) pairs. ``threads``: OpenMP threads of the eflomal binary (its
    samplers run in parallel; None: OpenMP's default)."""
    try:
        import eflomal
    except ImportError as exc:
        raise DataError(
            "eflomal is not installed; `pip install eflomal` (or give Pharaoh alignments in the config)"
        ) from exc
    if len(src) != len(tgt):
        raise DataError(f"eflomal input: {len(src)} source and {len(tgt)} target sentences")
    aligner = eflomal.Aligner(model=model, rel_iterations=rel_iterations, n_samplers=n_samplers)
    with tempfile.TemporaryDirectory(prefix="plmfair-eflomal-") as tmp:
        fwd_path, rev_path = os.path.join(tmp, "fwd"), os.path.join(tmp, "rev")
        src_lines = [" ".join(_eflomal_token(t) for t in s) + "\n" for s in src]
        tgt_lines = [" ".join(_eflomal_token(t) for t in s) + "\n" for s in tgt]
        with _omp_threads(threads):
            aligner.align(src_lines, tgt_lines, links_filename_fwd=fwd_path, links_filename_rev=rev_path,
                          quiet=True)
        with open(fwd_path, encoding="utf-8") as fh:
            fwd = parse_pharaoh(fh.read().splitlines(), source="eflomal forward links")
        with open(rev_path, encoding="utf-8") as fh:
            rev = parse_pharaoh(fh.read().splitlines(), source="eflomal reverse links")
    # eflomal writes no line for trailing empty sentences; pad to the input length
    fwd += [set() for _ in range(len(src) - len(fwd))]
    rev += [set() for _ in range(len(src) - len(rev))]
    return fwd, rev


def sentence_lengths(tokens: pd.DataFrame, n_lines: int) -> list[int]:
    """Tokens per line 1..n_lines from a tokens table (0 for empty lines)."""
    counts = tokens.groupby("line").size()
    return [int(counts.get(i, 0)) for i in range(1, n_lines + 1)]


def sentence_tokens(tokens: pd.DataFrame, n_lines: int) -> list[list[str]]:
    grouped = tokens.sort_values(["line", "token"]).groupby("line")["text"].apply(list)
    return [list(grouped.get(i, [])) for i in range(1, n_lines + 1)]


def links_frame(alignments: Sequence[Links]) -> pd.DataFrame:
    rows = [(lineno, i, j) for lineno, links in enumerate(alignments, start=1) for i, j in sorted(links)]
    return pd.DataFrame(rows, columns=list(ALIGNMENT_SCHEMA)).astype("int64")


def align_corpus(pivot_tokens: pd.DataFrame, tokens: pd.DataFrame, *, n_lines: int, pivot_source: str, source: str,
                 pharaoh_lines: Sequence[str] | None = None, pharaoh_source: str = "",
                 extra: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]] | None = None,
                 symmetrisation: str = "intersection", eflomal_options: dict | None = None) -> tuple[pd.DataFrame, dict]:
    """Alignments pivot -> language for every corpus line: read from Pharaoh lines when given,
    else computed by eflomal in both directions (with optional extra parallel sentences
    prepended to the run and dropped afterwards) and symmetrised."""
    src_len = sentence_lengths(pivot_tokens, n_lines)
    tgt_len = sentence_lengths(tokens, n_lines)
    if pharaoh_lines is not None:
        links = parse_pharaoh(pharaoh_lines, source=pharaoh_source, src_lengths=src_len, tgt_lengths=tgt_len)
        return links_frame(links), {"alignment_source": pharaoh_source}
    src, tgt = sentence_tokens(pivot_tokens, n_lines), sentence_tokens(tokens, n_lines)
    n_extra = 0
    if extra is not None:
        extra_src, extra_tgt = extra
        if len(extra_src) != len(extra_tgt):
            raise DataError(
                f"extra alignment text: {len(extra_src)} pivot and {len(extra_tgt)} other line(s); the two files "
                f"must be parallel (same number of lines)"
            )
        n_extra = len(extra_src)
        src, tgt = list(extra_src) + src, list(extra_tgt) + tgt
    log.info("eflomal: aligning %d sentence pairs (%d corpus + %d extra)", len(src), n_lines, n_extra)
    fwd, rev = run_eflomal(src, tgt, **(eflomal_options or {}))
    links = [symmetrise(f, r, symmetrisation) for f, r in zip(fwd[n_extra:], rev[n_extra:], strict=True)]
    for lineno, (sym, n_s, n_t) in enumerate(zip(links, src_len, tgt_len, strict=True), start=1):
        if any(i >= n_s or j >= n_t for i, j in sym):
            raise DataError(f"eflomal returned a link out of range at line {lineno} of {pivot_source} / {source}")
    return links_frame(links), {"alignment_source": "eflomal", "symmetrisation": symmetrisation,
                                "extra_lines": n_extra}


def align_files(pivot_tokens: str | os.PathLike, tokens: str | os.PathLike, *, pharaoh: str | os.PathLike | None = None,
                pharaoh_member: str | None = None, extra_pivot: str | os.PathLike | None = None,
                extra_text: str | os.PathLike | None = None, extra_members: tuple[str | None, str | None] = (None, None),
                extra_lines: int | None = None, pipelines: tuple | None = None, langs: tuple[str, str] = ("en", "xx"),
                tokenized: bool = False, symmetrisation: str = "intersection",
                eflomal_options: dict | None = None) -> tuple[pd.DataFrame, dict]:
    """Alignments of one language to the pivot from the two tokens files (see :func:`align_corpus`)."""
    from plmfair.data import check_parallel, read_text_lines
    from plmfair.io import read_parquet, read_parquet_meta

    p_meta, t_meta = read_parquet_meta(pivot_tokens), read_parquet_meta(tokens)
    n_p = check_parallel({"pivot": p_meta["n_lines"], "other": t_meta["n_lines"]},
                         {"pivot": p_meta["source"], "other": t_meta["source"]})
    pharaoh_lines = pharaoh_source = None
    if pharaoh is not None:
        pharaoh_lines, pharaoh_source = read_text_lines(pharaoh, pharaoh_member)
    extra = None
    if extra_pivot is not None and extra_text is not None:
        from plmfair.pos import load_pipeline, tokenize_lines

        sides = []
        for path, member, lang, pipe in zip((extra_pivot, extra_text), extra_members, langs, pipelines or (None, None),
                                            strict=True):
            lines, _ = read_text_lines(path, member)
            lines = lines[:extra_lines] if extra_lines else lines
            nlp = None if tokenized else load_pipeline(pipe, lang)
            sides.append(tokenize_lines(nlp, lines, tokenized=tokenized))
        extra = (sides[0], sides[1])
    links, meta = align_corpus(read_parquet(pivot_tokens), read_parquet(tokens), n_lines=n_p,
                               pivot_source=p_meta["source"], source=t_meta["source"], pharaoh_lines=pharaoh_lines,
                               pharaoh_source=pharaoh_source or "", extra=extra, symmetrisation=symmetrisation,
                               eflomal_options=eflomal_options)
    return links, {**meta, "pivot": langs[0], "lang": langs[1], "n_lines": n_p}


# --- alignment quality against hand-made gold alignments -------------------------------------------------

ALIGNMENT_QUALITY_SCHEMA = {
    "corpus": "corpus whose eflomal step is measured",
    "gold": "gold alignment set (name in config)",
    "lang": "the other language (links pivot -> lang)",
    "extra": "parallel text aligned together with the gold sentences: none, or corpus (the corpus's own lines)",
    "extra_lines": "number of extra sentence pairs in the eflomal run",
    "symmetrisation": "how the two eflomal directions were combined",
    "sentences": "gold sentence pairs",
    "predicted": "|A|: links the aligner predicted",
    "sure": "|S|: sure gold links",
    "possible": "|P|: possible gold links (sure ones included)",
    "hit_sure": "|A ∩ S|",
    "hit_possible": "|A ∩ P|",
    "precision": "|A ∩ P| / |A|",
    "recall": "|A ∩ S| / |S|",
    "aer": "alignment error rate, 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|) (Och & Ney 2003)",
    "dropped_gold_links": "gold links outside their sentence, left out (defects of the gold file)",
}
GOLD_LINKS_SCHEMA = {
    "gold": ALIGNMENT_QUALITY_SCHEMA["gold"],
    "extra": ALIGNMENT_QUALITY_SCHEMA["extra"],
    "symmetrisation": ALIGNMENT_QUALITY_SCHEMA["symmetrisation"],
    "sentence": "1-based gold sentence pair",
    "pivot_token": "0-based token of the pivot sentence (white-space tokens of the gold file)",
    "token": "0-based token of the other sentence",
}


@dataclass(frozen=True)
class GoldAlignments:
    """Gold sentence pairs (white-space tokens) and their links, as (pivot, other) 0-based pairs;
    ``possible`` holds the sure links too (S ⊆ P)."""

    name: str
    pivot_sentences: list[list[str]]
    sentences: list[list[str]]
    sure: list[Links]
    possible: list[Links]
    dropped: int = 0


def parse_gold_links(lines: Sequence[str], *, fmt: str, source: str) -> tuple[list[Links], list[Links]]:
    """Sure and possible links per line, 0-based, in the file's own order. ``talp``: 1-based
    ``i-j`` sure and ``ipj`` possible links; ``pharaoh``: 0-based ``i-j``, every link sure."""
    if fmt == "pharaoh":
        sure_all = parse_pharaoh(lines, source=source)
        return sure_all, [set(links) for links in sure_all]
    if fmt != "talp":
        raise ValueError(f"unknown gold alignment format {fmt!r}")
    sure_all, possible_all = [], []
    for lineno, text in enumerate(lines, start=1):
        sure: Links = set()
        possible: Links = set()
        for item in text.split():
            sep = "p" if "p" in item else "-"
            i_s, _, j_s = item.partition(sep)
            if not i_s.isdigit() or not j_s.isdigit() or int(i_s) < 1 or int(j_s) < 1:
                raise DataError(f"{source} line {lineno}: malformed link {item!r}; expected 1-based `i-j` (sure) "
                                f"or `ipj` (possible)")
            link = (int(i_s) - 1, int(j_s) - 1)
            possible.add(link)
            if sep == "-":
                sure.add(link)
        sure_all.append(sure)
        possible_all.append(possible)
    return sure_all, possible_all


def gold_alignments(name: str, *, sentence_lines: Sequence[str], link_lines: Sequence[str], fmt: str,
                    pivot_first: bool, pivot_lines: Sequence[str] | None = None, source: str = "") -> GoldAlignments:
    """A gold set from its files. Without ``pivot_lines`` every sentence line is ``X ||| Y`` in the
    links' order; ``pivot_first``: the first index of a link (and X) is the pivot's. A link outside
    its sentence is dropped with a warning (counted in the table)."""
    strip = [s.lstrip("\ufeff") for s in sentence_lines]
    if pivot_lines is None:
        pairs = [s.split(" ||| ") for s in strip]
        bad = next((i for i, p in enumerate(pairs, start=1) if len(p) != 2), None)
        if bad:
            raise DataError(f"{source} line {bad}: expected `sentence ||| sentence`")
        first, second = [p[0].split() for p in pairs], [p[1].split() for p in pairs]
        pivot, other = (first, second) if pivot_first else (second, first)
    else:
        pivot = [s.lstrip("\ufeff").split() for s in pivot_lines]
        other = [s.split() for s in strip]
    if not (len(pivot) == len(other) == len(link_lines)):
        raise DataError(f"{source}: {len(pivot)} pivot sentence(s), {len(other)} other sentence(s) and {len(link_lines)} "
                        f"alignment line(s); a gold set needs one line of each per sentence pair")
    sure, possible = parse_gold_links(link_lines, fmt=fmt, source=source)
    if not pivot_first:
        sure = [{(j, i) for i, j in s} for s in sure]
        possible = [{(j, i) for i, j in p} for p in possible]
    dropped = 0
    for n, (p_toks, o_toks) in enumerate(zip(pivot, other, strict=True)):
        inside = {(i, j) for i, j in possible[n] if i < len(p_toks) and j < len(o_toks)}
        if len(inside) < len(possible[n]):
            out = sorted(possible[n] - inside)
            log.warning("%s: sentence %d has link(s) outside the sentence, left out: %s", source, n + 1, out)
            dropped += len(out)
            possible[n], sure[n] = inside, sure[n] & inside
    return GoldAlignments(name, pivot, other, sure, possible, dropped)


def alignment_error(predicted: Sequence[Links], sure: Sequence[Links], possible: Sequence[Links]) -> dict:
    """Precision, recall and AER (Och & Ney 2003) of predicted links against sure and possible ones,
    summed over the sentences before dividing."""
    a = sum(len(x) for x in predicted)
    s = sum(len(x) for x in sure)
    p = sum(len(x) for x in possible)
    a_s = sum(len(x & y) for x, y in zip(predicted, sure, strict=True))
    a_p = sum(len(x & y) for x, y in zip(predicted, possible, strict=True))
    return {"predicted": a, "sure": s, "possible": p, "hit_sure": a_s, "hit_possible": a_p,
            "precision": a_p / a if a else float("nan"), "recall": a_s / s if s else float("nan"),
            "aer": 1 - (a_s + a_p) / (a + s) if a + s else float("nan")}


def alignment_quality(gold: GoldAlignments, *, corpus: str, lang: str,
                      extra: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]] | None = None,
                      symmetrisations: Sequence[str] = SYMMETRISATIONS, eflomal_options: dict | None = None,
                      lowercase: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """eflomal on the gold sentences, alone and with ``extra`` sentence pairs in the same run, each
    symmetrisation scored: the quality rows (:data:`ALIGNMENT_QUALITY_SCHEMA`) and the predicted
    links (:data:`GOLD_LINKS_SCHEMA`) they were computed from."""
    runs = [("none", [], [])]
    if extra is not None:
        low = (lambda s: [t.lower() for t in s]) if lowercase else list
        runs.append(("corpus", [low(s) for s in extra[0]], [low(s) for s in extra[1]]))
    rows, links = [], []
    n = len(gold.sentences)
    for extra_name, ex_src, ex_tgt in runs:
        log.info("eflomal on %d gold sentence pairs of %s + %d extra", n, gold.name, len(ex_src))
        fwd, rev = run_eflomal(list(gold.pivot_sentences) + ex_src, list(gold.sentences) + ex_tgt, **(eflomal_options or {}))
        for method in symmetrisations:
            predicted = [symmetrise(f, r, method) for f, r in zip(fwd[:n], rev[:n], strict=True)]
            rows.append({"corpus": corpus, "gold": gold.name, "lang": lang, "extra": extra_name, "extra_lines": len(ex_src),
                         "symmetrisation": method, "sentences": n,
                         **alignment_error(predicted, gold.sure, gold.possible), "dropped_gold_links": gold.dropped})
            links += [(gold.name, extra_name, method, k, i, j) for k, sent in enumerate(predicted, start=1)
                      for i, j in sorted(sent)]
    quality = pd.DataFrame(rows, columns=list(ALIGNMENT_QUALITY_SCHEMA))
    return quality, pd.DataFrame(links, columns=list(GOLD_LINKS_SCHEMA)).astype(
        {"sentence": "int64", "pivot_token": "int64", "token": "int64"})


def alignment_quality_files(gold_sets: Mapping[str, dict], *, corpus: str, pivot: str,
                            token_files: Mapping[str, str | os.PathLike] | None = None,
                            symmetrisations: Sequence[str] = SYMMETRISATIONS,
                            eflomal_options: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`alignment_quality` for every gold set of a corpus. ``gold_sets``: name -> settings
    (lang, format, links_first, lowercase) and the local paths and members of ``sentences``,
    ``links`` and optionally ``pivot_sentences``; ``token_files``: the corpus tokens per
    language, the extra text (None: without extra text only)."""
    from plmfair.data import read_text_lines
    from plmfair.io import read_parquet, read_parquet_meta

    def lines(spec):
        return read_text_lines(spec["path"], spec.get("member"))

    corpus_sentences: dict[str, list[list[str]]] = {}

    def corpus_text(lang):
        """The corpus's sentences in ``lang`` as token lists, read once however many gold sets use them."""
        if lang not in corpus_sentences:
            n_lines = read_parquet_meta(token_files[lang])["n_lines"]
            corpus_sentences[lang] = sentence_tokens(read_parquet(token_files[lang]), n_lines)
        return corpus_sentences[lang]

    qualities, all_links = [], []
    for name, g in gold_sets.items():
        lang = g["lang"]
        sentence_lines, source = lines(g["sentences"])
        link_lines, link_source = lines(g["links"])
        pivot_lines = lines(g["pivot_sentences"])[0] if g.get("pivot_sentences") else None
        gold = gold_alignments(name, sentence_lines=sentence_lines, link_lines=link_lines, fmt=g.get("format", "talp"),
                               pivot_first=g.get("links_first") in (None, pivot), pivot_lines=pivot_lines,
                               source=f"{source} / {link_source}")
        extra = None if token_files is None else (corpus_text(pivot), corpus_text(lang))
        quality, links = alignment_quality(gold, corpus=corpus, lang=lang, extra=extra, symmetrisations=symmetrisations,
                                           eflomal_options=eflomal_options, lowercase=g.get("lowercase", False))
        qualities.append(quality)
        all_links.append(links)
    return pd.concat(qualities, ignore_index=True), pd.concat(all_links, ignore_index=True)
