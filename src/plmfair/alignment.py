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
How good eflomal's links are, against hand-made gold alignments, is :mod:`plmfair.alignment_quality`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Sequence

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


# an index of a link: ASCII digits only (str.isdigit also takes '²' and Arabic-Indic digits)
LINK_INDEX = re.compile(r"[0-9]+")

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
            if not sep or not LINK_INDEX.fullmatch(i_s) or not LINK_INDEX.fullmatch(j_s):
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
    from plmfair.corpus_text import check_parallel, read_text_lines
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
