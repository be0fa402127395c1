"""Multi-way parallel corpora from bitexts that share a pivot language.

Europarl is released as X-English bitexts (de-en, es-en, fr-en), each aligned on its own.
A four-way corpus is the set of lines whose pivot (English) sentence occurs in every
bitext: the sentences are matched exactly after white-space normalisation (runs of white
space become one space, ends stripped). The joined corpus keeps, for every line and
language, the bitext line it came from, so every constructed sentence can be traced back.

A pivot sentence that occurs more than once in a bitext ("(Applause)", "The debate is
closed.") is handled by ``duplicates``: ``first`` keeps its first occurrence with a
translation in that bitext, ``drop`` leaves the sentence out of the join. Lines with an
empty pivot or an empty translation are not joined. Every decision is counted.

Joined corpus (``results/cloze/{corpus}/joined.parquet``, :data:`JOINED_SCHEMA`): one row
per line and language, line order that of the first bitext; the counts
(:data:`plmfair.cloze.construction.selection.CONSTRUCTION_SCHEMA`, steps ``bitext_*`` and ``joined``) lead the
corpus's construction table.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from plmfair.errors import ConfigError, DataError
from plmfair.io.text_files import read_text_lines
from plmfair.text import normalise_whitespace

log = logging.getLogger(__name__)

JOINED_SCHEMA = {
    "line": "1-based line of the joined multi-way corpus (the corpus line every later stage uses)",
    "lang": "ISO 639-1 code of the sentence",
    "text": "the sentence as written in its bitext (the pivot's from the first bitext)",
    "source": "bitext file the sentence comes from (archive:member)",
    "source_line": "1-based line of the sentence in that file",
}
DUPLICATE_POLICIES = ("first", "drop")


@dataclass(frozen=True)
class Bitext:
    """One pivot-X bitext: both sides' lines (parallel) and their names for messages."""

    lang: str
    pivot_lines: Sequence[str]
    lines: Sequence[str]
    pivot_source: str
    source: str


def _index(bitext: Bitext) -> tuple[dict[str, list[int]], dict[str, int]]:
    """Pivot sentence -> 0-based line numbers with a translation, and the bitext's counts."""
    if len(bitext.pivot_lines) != len(bitext.lines):
        raise DataError(
            f"bitext {bitext.lang}: {bitext.pivot_source} has {len(bitext.pivot_lines)} line(s) and {bitext.source} "
            f"{len(bitext.lines)}; the two sides of a bitext must be parallel (same number of lines). Check the "
            f"`member` names of cloze.corpora.*.bitexts.{bitext.lang}"
        )
    where: dict[str, list[int]] = {}
    empty = 0
    for i, (pivot, other) in enumerate(zip(bitext.pivot_lines, bitext.lines, strict=True)):
        key = normalise_whitespace(pivot)
        if not key or not other.strip():
            empty += 1
            continue
        where.setdefault(key, []).append(i)
    dup = [k for k, lines in where.items() if len(lines) > 1]
    counts = {
        "bitext_lines": len(bitext.lines),
        "bitext_empty": empty,
        "bitext_distinct": len(where),
        "bitext_duplicated": len(dup),
        "bitext_repeats": sum(len(where[k]) - 1 for k in dup),
    }
    return where, counts


def join_bitexts(
    bitexts: Sequence[Bitext], *, pivot: str, corpus: str, duplicates: str = "first"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The joined corpus (:data:`JOINED_SCHEMA`) and its counts (construction-table rows)."""
    if duplicates not in DUPLICATE_POLICIES:
        raise ConfigError(f"cloze.corpora.{corpus}.duplicates: {duplicates!r} is not one of {DUPLICATE_POLICIES}")
    if not bitexts:
        raise ConfigError(f"cloze.corpora.{corpus}.bitexts: no bitext given")
    langs = [b.lang for b in bitexts]
    if pivot in langs or len(set(langs)) != len(langs):
        raise ConfigError(
            f"cloze.corpora.{corpus}.bitexts: languages {langs} must be distinct and not the pivot {pivot!r}"
        )
    indexes, per_bitext = zip(*(_index(b) for b in bitexts), strict=True)
    first = bitexts[0]
    keys = (
        k for k in dict.fromkeys(normalise_whitespace(s) for s in first.pivot_lines) if all(k in ix for ix in indexes)
    )
    if duplicates == "drop":
        keys = (k for k in keys if all(len(ix[k]) == 1 for ix in indexes))
    rows: dict[str, list] = {c: [] for c in JOINED_SCHEMA}

    def add(line: int, lang: str, text: str, source: str, source_line: int) -> None:
        for col, value in zip(JOINED_SCHEMA, (line, lang, text, source, source_line), strict=True):
            rows[col].append(value)

    n = 0
    for n, key in enumerate(keys, start=1):
        at = [ix[key][0] for ix in indexes]
        add(n, pivot, first.pivot_lines[at[0]].strip(), first.pivot_source, at[0] + 1)
        for b, i in zip(bitexts, at, strict=True):
            add(n, b.lang, b.lines[i].strip(), b.source, i + 1)
    joined = pd.DataFrame(rows).astype(
        {"line": "int64", "lang": "string", "text": "string", "source": "string", "source_line": "int64"}
    )
    joined = joined.sort_values(["lang", "line"], kind="stable").reset_index(drop=True)
    counts = _join_counts(per_bitext, langs, pivot=pivot, corpus=corpus, duplicates=duplicates, n_joined=n)
    log.info("corpus %s: %d lines whose %s sentence occurs in all of %s", corpus, n, pivot, langs)
    if n == 0:
        raise DataError(
            f"corpus {corpus}: no {pivot} sentence occurs in every bitext "
            f"({', '.join(b.pivot_source for b in bitexts)}); "
            f"check that the `pivot` files of cloze.corpora.{corpus}.bitexts are the {pivot} sides"
        )
    return joined, counts


_STEPS = {
    "bitext_lines": "lines of the bitext",
    "bitext_empty": "lines with an empty pivot sentence or translation (not joined)",
    "bitext_distinct": "distinct pivot sentences with a translation",
    "bitext_duplicated": "pivot sentences occurring more than once",
    "bitext_repeats": "lines repeating an earlier pivot sentence",
}


def _join_counts(
    per_bitext: Sequence[Mapping[str, int]],
    langs: Sequence[str],
    *,
    pivot: str,
    corpus: str,
    duplicates: str,
    n_joined: int,
) -> pd.DataFrame:
    rows: list[dict[str, object]] = []
    for step, desc in _STEPS.items():
        # one description per step (the table has a row per step); the pivot has no bitext of its own
        desc = f"{desc}, in the language's bitext with {pivot}"
        rows.append(
            {"corpus": corpus, "step": step, "unit": "sentences", "description": desc, "lang": pivot, "count": None}
        )
        for lang, counts in zip(langs, per_bitext, strict=True):
            rows.append(
                {
                    "corpus": corpus,
                    "step": step,
                    "unit": "sentences",
                    "description": desc,
                    "lang": lang,
                    "count": counts[step],
                }
            )
    policy = "first occurrence kept" if duplicates == "first" else "repeated sentences dropped"
    rows += [
        {
            "corpus": corpus,
            "step": "joined",
            "unit": "sentences",
            "description": f"pivot sentences in every bitext (white space normalised; duplicates: {policy})",
            "lang": lang,
            "count": n_joined,
        }
        for lang in [pivot, *langs, "all"]
    ]
    return pd.DataFrame(rows).astype({"count": "Int64"})


def join_bitext_files(
    bitexts: Mapping[str, tuple[tuple[str, str | None], tuple[str, str | None]]],
    *,
    pivot: str,
    corpus: str,
    duplicates: str = "first",
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """:func:`join_bitexts` on files: per language ``((pivot path, member), (path, member))``."""

    loaded = []
    for lang, ((pivot_path, pivot_member), (path, member)) in bitexts.items():
        pivot_lines, pivot_source = read_text_lines(pivot_path, pivot_member)
        lines, source = read_text_lines(path, member)
        loaded.append(Bitext(lang, pivot_lines, lines, pivot_source, source))
    joined, counts = join_bitexts(loaded, pivot=pivot, corpus=corpus, duplicates=duplicates)
    meta = {
        "corpus": corpus,
        "pivot": pivot,
        "duplicates": duplicates,
        "n_lines": int(joined["line"].max()),
        "sources": {b.lang: [b.pivot_source, b.source] for b in loaded},
    }
    return joined, counts, meta


def joined_lines(joined: pd.DataFrame, lang: str, source: str) -> list[str]:
    """One language's sentences of a joined corpus, in line order (line i at index i - 1)."""
    part = joined[joined["lang"] == lang].sort_values("line")
    if part.empty:
        raise DataError(f"{source}: no {lang!r} sentences in the joined corpus")
    if not (part["line"].to_numpy() == range(1, len(part) + 1)).all():
        raise DataError(f"{source}: the {lang!r} lines of the joined corpus are not numbered 1..{len(part)}")
    return list(part["text"])
