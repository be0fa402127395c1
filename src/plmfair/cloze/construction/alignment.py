"""Word alignments: Pharaoh files, eflomal, symmetrisation.

An alignment of a sentence pair is a set of links ``(i, j)``: token ``i`` of the pivot
language (English) and token ``j`` of the other language, 0-based over the tokens of
:mod:`plmfair.cloze.construction.pos`. Pharaoh format writes one sentence per line as ``i-j`` pairs
separated by spaces.

Alignments (``results/cloze/{corpus}/alignments/{lang}.parquet``), one row per link
(:data:`ALIGNMENT_SCHEMA`): line (int64, 1-based), pivot_token (int64), token (int64).
The file's metadata records the source (a Pharaoh file, or eflomal with the
symmetrisation used). Memory does not grow with the corpus beyond eflomal's own: tokens reach
eflomal as text streamed from the tokens file (:func:`write_token_lines`), and its links come back
parsed and symmetrised a chunk of lines at a time in integer arrays (:func:`link_chunks`), written
as row groups.

eflomal (Östling & Tiedemann 2016) samples with a seed from /dev/urandom, so two runs on
the same text can differ slightly; the workflow keeps the alignment file and reruns it
only when its inputs change, and the sample drawn from it is reproducible from a seed.
How good eflomal's links are, against hand-made gold alignments, is :mod:`plmfair.cloze.construction.alignment_quality`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from plmfair.cloze.construction.pos import load_pipeline, tokenize_lines
from plmfair.errors import DataError
from plmfair.io.parquet import read_parquet_meta, write_parquet_chunks
from plmfair.io.text_files import check_parallel, read_text_lines

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


def parse_pharaoh(
    lines: Sequence[str],
    *,
    source: str,
    src_lengths: Sequence[int] | np.ndarray | None = None,
    tgt_lengths: Sequence[int] | np.ndarray | None = None,
    first_line: int = 1,
) -> list[Links]:
    """Parse Pharaoh lines (the first is line ``first_line`` of ``source``); with sentence lengths
    given, every index must fall inside its sentence."""
    if src_lengths is not None and len(lines) != len(src_lengths):
        raise DataError(
            f"{source}: {len(lines)} alignment line(s) for a corpus of {len(src_lengths)} line(s); "
            f"an alignment file needs exactly one line per corpus line (an empty line for no links)"
        )
    out = []
    for lineno, text in enumerate(lines, start=first_line):
        links: Links = set()
        for item in text.split():
            i_s, sep, j_s = item.partition("-")
            if not sep or not LINK_INDEX.fullmatch(i_s) or not LINK_INDEX.fullmatch(j_s):
                raise DataError(
                    f"{source} line {lineno}: malformed link {item!r}; Pharaoh format is 0-based `i-j` pairs "
                    f"separated by spaces (pivot token i, other-language token j)"
                )
            i, j = int(i_s), int(j_s)
            k = lineno - first_line
            if src_lengths is not None and tgt_lengths is not None and (i >= src_lengths[k] or j >= tgt_lengths[k]):
                raise DataError(
                    f"{source} line {lineno}: link {item} is out of range: the pivot sentence has "
                    f"{src_lengths[k]} token(s) and the other {tgt_lengths[k]} (indices are 0-based); "
                    f"the alignments must index the same tokens as the corpus (see cloze.corpora.*.tokenized)"
                )
            links.add((i, j))
        out.append(links)
    return out


def format_pharaoh(links: Iterable[tuple[int, int]]) -> str:
    """Links as one Pharaoh line (``0-0 1-2``), in order."""
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
def _omp_threads(threads: int | None) -> Iterator[None]:
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


def eflomal_line(tokens: Iterable[str]) -> str:
    """One sentence as eflomal reads it: its tokens separated by single spaces."""
    return " ".join(_eflomal_token(t) for t in tokens)


def write_sentences(sentences: Iterable[Sequence[str]], fh: TextIO) -> int:
    """Write token lists (gold sentences, extra text) to ``fh``, one eflomal line each; returns the count."""
    n = 0
    for sentence in sentences:
        fh.write(eflomal_line(sentence) + "\n")
        n += 1
    return n


def token_counts(tokens: str | os.PathLike, n_lines: int) -> np.ndarray:
    """Tokens per corpus line 1..``n_lines`` of a tokens file, read a batch at a time."""
    counts = np.zeros(n_lines + 1, dtype=np.int64)
    for batch in pq.ParquetFile(tokens).iter_batches(columns=["line"]):
        counts += np.bincount(batch.column("line").to_numpy(), minlength=n_lines + 1)[: n_lines + 1]
    return counts[1:]


def write_token_lines(
    tokens: str | os.PathLike, fh: TextIO, *, n_lines: int, lowercase: bool = False, batch_rows: int = 1 << 16
) -> np.ndarray:
    """Stream a tokens file (:data:`plmfair.cloze.construction.pos.TOKENS_SCHEMA`) to ``fh`` as eflomal text,
    one line per corpus line 1..``n_lines`` (an empty line where the file has no token); returns the tokens per
    line. Reads one batch of rows at a time: memory does not grow with the corpus. The file must be
    as the tokenize stage writes it, lines ascending and each line's tokens numbered 0, 1, ... in
    order (the indices the links use); anything else is refused with the command that rebuilds it.
    ``lowercase``: the tokens lower-cased."""
    lengths = np.zeros(n_lines, dtype=np.int64)
    rebuild = (
        f"{tokens}: not in line and token order as this version writes it; delete it (rm {tokens}) and run "
        f"the workflow again"
    )
    written = 0  # corpus lines written so far
    # the line being collected (it may continue into the next batch) and its tokens
    current, words = 0, list[str]()

    def flush() -> None:
        nonlocal written
        if current > n_lines:
            raise DataError(
                f"{tokens}: line {current} past the file's {n_lines} lines; delete it (rm {tokens}) and "
                f"run the workflow again"
            )
        fh.write(
            "\n" * (current - 1 - written) + eflomal_line([w.lower() for w in words] if lowercase else words) + "\n"
        )
        lengths[current - 1] = len(words)
        written = current

    for batch in pq.ParquetFile(tokens).iter_batches(batch_size=batch_rows, columns=["line", "token", "text"]):
        lines = batch.column("line").to_numpy()
        index = batch.column("token").to_numpy()
        texts = batch.column("text").to_pylist()
        starts = np.flatnonzero(np.diff(lines, prepend=-1))
        if (np.diff(lines) < 0).any() or lines[0] < current:
            raise DataError(rebuild)
        # each token's place in its line, counting the tokens of a line begun in the previous batch
        place = np.arange(len(lines)) - np.repeat(starts, np.diff(np.append(starts, len(lines))))
        if lines[0] == current:
            place[: starts[1] if len(starts) > 1 else len(lines)] += len(words)
        if not np.array_equal(place, index):
            raise DataError(rebuild)
        for a, b in zip(starts, np.append(starts[1:], len(lines)), strict=True):
            if lines[a] == current:
                words.extend(texts[a:b])
                continue
            if current:
                flush()
            current, words = int(lines[a]), texts[a:b]
    if current:
        flush()
    fh.write("\n" * (n_lines - written))
    return lengths


def eflomal_links(
    src: str | os.PathLike,
    tgt: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    model: int = 3,
    rel_iterations: float = 1.0,
    n_samplers: int = 3,
    threads: int | None = None,
) -> tuple[Path, Path]:
    """Align the sentence pairs of two eflomal text files (one sentence a line, tokens separated by
    spaces) in both directions; returns the forward and reverse Pharaoh link files written in
    ``out_dir`` (each as (source, target) pairs; eflomal writes no line for trailing empty
    sentences). ``threads``: OpenMP threads of the eflomal binary (its samplers run in parallel)."""
    try:
        # optional: only the alignment jobs need it
        import eflomal
    except ImportError as exc:
        raise DataError(
            "eflomal is not installed; `pip install eflomal` (or give Pharaoh alignments in the config)"
        ) from exc
    fwd, rev = Path(out_dir) / "links.fwd", Path(out_dir) / "links.rev"
    aligner = eflomal.Aligner(model=model, rel_iterations=rel_iterations, n_samplers=n_samplers)
    with open(src, encoding="utf-8") as src_fh, open(tgt, encoding="utf-8") as tgt_fh, _omp_threads(threads):
        aligner.align(src_fh, tgt_fh, links_filename_fwd=str(fwd), links_filename_rev=str(rev), quiet=True)
    return fwd, rev


# A link (line, i, j) as one int64 key, so that a chunk's links are symmetrised by NumPy set operations;
# the key's order is the links' order (line, then pivot token, then token).
_TOKEN_BITS = 16


def _keys(line: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    if len(i) and max(int(i.max()), int(j.max())) >= 1 << _TOKEN_BITS:
        raise DataError(
            f"a sentence of more than {1 << _TOKEN_BITS:,} tokens cannot be aligned; split the corpus lines that long"
        )
    return (line << (2 * _TOKEN_BITS)) | (i << _TOKEN_BITS) | j


def _unkey(keys: np.ndarray) -> pd.DataFrame:
    mask = (1 << _TOKEN_BITS) - 1
    return pd.DataFrame(
        {"line": keys >> (2 * _TOKEN_BITS), "pivot_token": (keys >> _TOKEN_BITS) & mask, "token": keys & mask},
        dtype="int64",
    )


def _parsed(lines: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Links per line and the pivot and other token indices of eflomal's link lines (``i-j i-j ...``)."""
    counts = np.fromiter((text.count("-") for text in lines), dtype=np.int64, count=len(lines))
    values = np.array(" ".join(lines).replace("-", " ").split(), dtype=np.int64)
    return counts, values[0::2], values[1::2]


def link_chunks(
    fwd: str | os.PathLike,
    rev: str | os.PathLike,
    *,
    skip: int,
    n_lines: int,
    method: str,
    src_len: np.ndarray,
    tgt_len: np.ndarray,
    source: str,
    chunk_lines: int = 50_000,
) -> Iterator[pd.DataFrame]:
    """eflomal's two link files, lines ``skip + 1 .. skip + n_lines``, symmetrised by ``method`` into
    :data:`ALIGNMENT_SCHEMA` frames of ``chunk_lines`` corpus lines each (lines renumbered from 1).
    Links are parsed a chunk at a time into integer arrays: memory does not grow with the corpus."""
    if method not in SYMMETRISATIONS:
        raise ValueError(f"unknown symmetrisation {method!r}; one of {SYMMETRISATIONS}")
    with open(fwd, encoding="utf-8") as f_fh, open(rev, encoding="utf-8") as r_fh:
        for _ in range(skip):
            f_fh.readline()
            r_fh.readline()
        for first in range(1, n_lines + 1, chunk_lines):
            size = min(chunk_lines, n_lines + 1 - first)
            line_no = np.arange(first, first + size, dtype=np.int64)
            keys = []
            for fh in (f_fh, r_fh):
                texts = [fh.readline() for _ in range(size)]  # "" past the end: trailing empty sentences
                counts, i, j = _parsed(texts)
                keys.append(_keys(np.repeat(line_no, counts), i, j))
            if method == "intersection":
                out = np.intersect1d(keys[0], keys[1])
            elif method == "union":
                out = np.union1d(keys[0], keys[1])
            else:
                out = _grown(keys[0], keys[1], line_no, final_and=method == "grow-diag-final-and")
            links = _unkey(out)
            rows = links["line"].to_numpy() - 1
            outside = (links["pivot_token"].to_numpy() >= src_len[rows]) | (links["token"].to_numpy() >= tgt_len[rows])
            if outside.any():
                raise DataError(f"eflomal returned a link out of range at line {int(rows[outside][0]) + 1} of {source}")
            yield links


def _grown(fwd: np.ndarray, rev: np.ndarray, line_no: np.ndarray, *, final_and: bool) -> np.ndarray:
    """grow-diag-final(-and) of a chunk, sentence by sentence (the heuristic is sequential)."""
    out = []
    bounds = [np.searchsorted(k, line_no << (2 * _TOKEN_BITS)) for k in (fwd, rev)]
    ends = [np.append(b[1:], len(k)) for b, k in zip(bounds, (fwd, rev), strict=True)]
    mask = (1 << _TOKEN_BITS) - 1
    for n, line in enumerate(line_no):
        pair = [
            {(int(k >> _TOKEN_BITS) & mask, int(k) & mask) for k in keys[b[n] : e[n]]}
            for keys, b, e in zip((fwd, rev), bounds, ends, strict=True)
        ]
        grown = _grow_diag_final(pair[0], pair[1], final_and=final_and)
        out += sorted((int(line) << (2 * _TOKEN_BITS)) | (i << _TOKEN_BITS) | j for i, j in grown)
    return np.array(out, dtype=np.int64)


def pharaoh_chunks(
    lines: Sequence[str], *, source: str, src_len: np.ndarray, tgt_len: np.ndarray, chunk_lines: int = 50_000
) -> Iterator[pd.DataFrame]:
    """A Pharaoh file's links as :data:`ALIGNMENT_SCHEMA` frames of ``chunk_lines`` lines, each link
    checked against its sentence's lengths (:func:`parse_pharaoh`)."""
    if len(lines) != len(src_len):
        parse_pharaoh(lines, source=source, src_lengths=src_len, tgt_lengths=tgt_len)  # says what is wrong
    for first in range(0, len(lines), chunk_lines):
        part = slice(first, first + chunk_lines)
        links = parse_pharaoh(
            lines[part], source=source, src_lengths=src_len[part], tgt_lengths=tgt_len[part], first_line=first + 1
        )
        yield links_frame(links, first_line=first + 1)


def links_frame(alignments: Sequence[Links], *, first_line: int = 1) -> pd.DataFrame:
    """Each line's links as rows of :data:`ALIGNMENT_SCHEMA`, the lines numbered from ``first_line``."""
    rows = [(lineno, i, j) for lineno, links in enumerate(alignments, start=first_line) for i, j in sorted(links)]
    return pd.DataFrame(rows, columns=list(ALIGNMENT_SCHEMA)).astype("int64")


def align_files(
    pivot_tokens: str | os.PathLike,
    tokens: str | os.PathLike,
    out: str | os.PathLike,
    *,
    pharaoh: str | os.PathLike | None = None,
    pharaoh_member: str | None = None,
    extra_pivot: str | os.PathLike | None = None,
    extra_text: str | os.PathLike | None = None,
    extra_members: tuple[str | None, str | None] = (None, None),
    extra_lines: int | None = None,
    pipelines: tuple | None = None,
    langs: tuple[str, str] = ("en", "xx"),
    tokenized: bool = False,
    symmetrisation: str = "intersection",
    eflomal_options: dict | None = None,
) -> dict:
    """Alignments of one language to the pivot for every corpus line, from the two tokens files, written
    to ``out`` (:data:`ALIGNMENT_SCHEMA`, row groups of corpus lines); returns the run metadata.

    Read from a Pharaoh file when one is given; otherwise computed by eflomal in both directions
    (with optional extra parallel sentences prepended to the run and dropped afterwards) and
    symmetrised. The tokens reach eflomal as text files written in a stream from the tokens files,
    and the links come back parsed a chunk at a time into integer arrays
    (:func:`write_token_lines`, :func:`link_chunks`): memory stays flat as the corpus grows."""
    p_meta, t_meta = read_parquet_meta(pivot_tokens), read_parquet_meta(tokens)
    n_p = check_parallel(
        {"pivot": p_meta["n_lines"], "other": t_meta["n_lines"]}, {"pivot": p_meta["source"], "other": t_meta["source"]}
    )
    meta_common = {"pivot": langs[0], "lang": langs[1], "n_lines": n_p}
    if pharaoh is not None:
        lines, source = read_text_lines(pharaoh, pharaoh_member)
        meta = {"alignment_source": source, **meta_common}
        chunks = pharaoh_chunks(
            lines, source=source, src_len=token_counts(pivot_tokens, n_p), tgt_len=token_counts(tokens, n_p)
        )
        write_parquet_chunks(chunks, out, schema_doc=ALIGNMENT_SCHEMA, meta=meta)
        return meta
    with tempfile.TemporaryDirectory(prefix="plmfair-eflomal-") as tmp:
        src, tgt = Path(tmp) / "pivot.txt", Path(tmp) / "other.txt"
        n_extra = 0
        with open(src, "w", encoding="utf-8") as src_fh, open(tgt, "w", encoding="utf-8") as tgt_fh:
            if extra_pivot is not None and extra_text is not None:
                n_extra = _write_extra(
                    src_fh, tgt_fh, (extra_pivot, extra_text), extra_members, extra_lines, pipelines, langs, tokenized
                )
            src_len = write_token_lines(pivot_tokens, src_fh, n_lines=n_p)
            tgt_len = write_token_lines(tokens, tgt_fh, n_lines=n_p)
        log.info("eflomal: aligning %d sentence pairs (%d corpus + %d extra)", n_p + n_extra, n_p, n_extra)
        fwd, rev = eflomal_links(src, tgt, tmp, **(eflomal_options or {}))
        meta = {"alignment_source": "eflomal", "symmetrisation": symmetrisation, "extra_lines": n_extra, **meta_common}
        chunks = link_chunks(
            fwd,
            rev,
            skip=n_extra,
            n_lines=n_p,
            method=symmetrisation,
            src_len=src_len,
            tgt_len=tgt_len,
            source=f"{p_meta['source']} / {t_meta['source']}",
        )
        write_parquet_chunks(chunks, out, schema_doc=ALIGNMENT_SCHEMA, meta=meta)
    return meta


def _write_extra(
    src_fh: TextIO,
    tgt_fh: TextIO,
    paths: tuple[str | os.PathLike, str | os.PathLike],
    members: tuple[str | None, str | None],
    extra_lines: int | None,
    pipelines: tuple | None,
    langs: tuple[str, str],
    tokenized: bool,
) -> int:
    """The extra parallel text, tokenized, at the head of eflomal's two input files; returns its lines."""
    counts = []
    for path, member, lang, pipe, fh in zip(
        paths, members, langs, pipelines or (None, None), (src_fh, tgt_fh), strict=True
    ):
        lines, _ = read_text_lines(path, member)
        lines = lines[:extra_lines] if extra_lines else lines
        nlp = None if tokenized else load_pipeline(pipe, lang)
        counts.append(write_sentences(tokenize_lines(nlp, lines, tokenized=tokenized), fh))
    if counts[0] != counts[1]:
        raise DataError(
            f"extra alignment text: {counts[0]} pivot and {counts[1]} other line(s); the two files "
            f"must be parallel (same number of lines)"
        )
    return counts[0]
