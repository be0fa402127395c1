"""Tokenization, universal part of speech and dependency relations with spaCy.

One pipeline per language, named in config (``cloze.spacy``): an installed package such
as ``en_core_web_sm``, a folder written by ``nlp.to_disk``, or a lookup pipeline that the
workflow builds from a word list (:func:`build_lexicon_pipeline`, for the offline demo).
Alignment and cloze selection use exactly the tokens written here.

Tokens (``results/cloze/{corpus}/tokens/{lang}.parquet``), one row per token
(:data:`TOKENS_SCHEMA`):

- line (int64): 1-based line of the source file (the sentence id across languages).
- token (int64): 0-based token index within the line; alignment indices refer to it.
- text (string): the token as written.
- whitespace (string): the white space that follows it in the line ("" or " ").
- upos (string): universal POS ("" when the pipeline has no tagger for it).
- dep (string): dependency relation ("" without a parser).
- head (int64): token index of the syntactic head (its own index for the root or without a parser).
- like_num (bool), is_punct (bool), is_alpha (bool): spaCy's lexical flags.

Empty lines have no tokens; the file's metadata records the number of lines, the empty
ones and the source.
"""

from __future__ import annotations

import csv
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from plmfair.errors import ConfigError, DataError

log = logging.getLogger(__name__)

TOKENS_SCHEMA = {
    "line": "1-based line in the source file (sentence id across languages)",
    "token": "0-based token index within the line (the index alignments use)",
    "text": "token as written",
    "whitespace": "white space following the token",
    "upos": "universal part of speech ('' when untagged)",
    "dep": "dependency relation ('' without a parser)",
    "head": "token index of the syntactic head (own index for roots)",
    "like_num": "spaCy like_num flag (digits or number words)",
    "is_punct": "spaCy is_punct flag",
    "is_alpha": "every character is a letter",
}


def load_pipeline(name: str | os.PathLike, lang: str):
    """Load a spaCy pipeline by package name or path; a missing one stops with the command that installs it."""
    import spacy

    try:
        nlp = spacy.load(name)
    except OSError as exc:
        if Path(str(name)).exists() or os.sep in str(name):
            raise ConfigError(
                f"spaCy pipeline for {lang!r} at {name} cannot be loaded ({exc}); rebuild it or fix cloze.spacy.{lang}"
            ) from exc
        raise ConfigError(
            f"spaCy pipeline {name!r} (cloze.spacy.{lang}) is not installed. Install it with:\n"
            f"    python -m spacy download {name}\n"
            f"or name another pipeline for {lang!r} under cloze.spacy in the config"
        ) from exc
    if nlp.lang != lang:
        log.warning("spaCy pipeline %s is for language %r, used for %r", name, nlp.lang, lang)
    return nlp


# below this many lines, starting worker processes costs more than it saves
MIN_LINES_PER_PROCESS = 5000


def tag_lines(nlp, lines: Sequence[str], *, tokenized: bool = False, source: str = "<text>",
              empty: str = "error", batch_size: int = 256, n_process: int = 1) -> tuple[pd.DataFrame, list[int]]:
    """Tokens of every line (:data:`TOKENS_SCHEMA`) and the 1-based numbers of empty lines.

    ``tokenized``: the lines are already tokenized with single spaces (as word alignments
    usually are); the pipeline then tags those tokens unchanged. ``empty``: ``error``
    stops at the first empty line, ``skip`` keeps it with no tokens and counts it.
    ``n_process``: spaCy worker processes (the job's threads), used for large inputs only
    (:data:`MIN_LINES_PER_PROCESS` lines per process).
    """
    from spacy.tokens import Doc

    empties = [i for i, text in enumerate(lines, start=1) if not text.strip()]
    if empties and empty == "error":
        raise DataError(
            f"{source} line {empties[0]}: empty sentence ({len(empties)} empty line(s) in all); remove it from every "
            f"language's file, or set cloze.empty_lines: skip to drop such lines from the selection"
        )
    keep = [(i, text) for i, text in enumerate(lines, start=1) if text.strip()]
    if tokenized:
        docs_in = (Doc(nlp.vocab, words=text.split()) for _, text in keep)
    else:
        docs_in = (text.strip() for _, text in keep)
    cols: dict[str, list] = {k: [] for k in TOKENS_SCHEMA}
    n_process = max(1, min(n_process, len(keep) // MIN_LINES_PER_PROCESS))
    docs = nlp.pipe(docs_in, batch_size=batch_size, n_process=n_process)
    for (lineno, _), doc in zip(keep, docs, strict=True):
        for tok in doc:
            cols["line"].append(lineno)
            cols["token"].append(tok.i)
            cols["text"].append(tok.text)
            cols["whitespace"].append(tok.whitespace_)
            cols["upos"].append(tok.pos_)
            cols["dep"].append(tok.dep_)
            cols["head"].append(tok.head.i)
            cols["like_num"].append(bool(tok.like_num))
            cols["is_punct"].append(bool(tok.is_punct))
            cols["is_alpha"].append(bool(tok.is_alpha))
    df = pd.DataFrame(cols).astype(
        {"line": "int64", "token": "int64", "text": "string", "whitespace": "string", "upos": "string",
         "dep": "string", "head": "int64", "like_num": bool, "is_punct": bool, "is_alpha": bool}
    )
    return df, empties


def tokenize_lines(nlp, lines: Sequence[str], *, tokenized: bool = False) -> list[list[str]]:
    """Tokens only (the pipeline's tokenizer, no tagging): for extra alignment text."""
    if tokenized:
        return [text.split() for text in lines]
    return [[t.text for t in doc] for doc in nlp.tokenizer.pipe(text.strip() for text in lines)]


def read_lexicon(path: str | os.PathLike) -> list[dict]:
    """A tab-separated word list: word, UPOS and optionally a dependency relation, one word per line."""
    path = Path(path)
    entries = []
    with open(path, encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.reader(fh, delimiter="\t"), start=1):
            if not row or row[0].startswith("#"):
                continue
            if len(row) not in (2, 3) or not row[0] or not row[1]:
                raise DataError(f"{path} line {lineno}: expected `word<TAB>UPOS[<TAB>dep]`, got {row!r}")
            entries.append({"word": row[0], "upos": row[1], "dep": row[2] if len(row) == 3 else None})
    if not entries:
        raise DataError(f"{path}: the lexicon is empty")
    return entries


def build_lexicon_pipeline(lang: str, entries: Sequence[dict], out_dir: str | os.PathLike) -> None:
    """Write a lookup pipeline: spaCy's rule-based tokenizer for ``lang`` plus an attribute ruler
    that sets POS (and DEP) of the listed words, matched lower-cased; others stay untagged."""
    import spacy

    from plmfair.io import atomic_dir

    nlp = spacy.blank(lang)
    ruler = nlp.add_pipe("attribute_ruler")
    for e in entries:
        attrs = {"POS": e["upos"]}
        if e.get("dep"):
            attrs["DEP"] = e["dep"]
        ruler.add([[{"LOWER": e["word"].lower()}]], attrs)
    with atomic_dir(out_dir) as tmp:
        nlp.to_disk(tmp)


def tag_corpus_file(path: str | os.PathLike, *, lang: str, pipeline: str | os.PathLike, member: str | None = None,
                    tokenized: bool = False, empty: str = "error", n_process: int = 1) -> tuple[pd.DataFrame, dict]:
    """Tokens of one language's corpus file and the run metadata (source, line counts, pipeline)."""
    from plmfair.data import read_text_lines

    lines, source = read_text_lines(path, member)
    if not lines:
        raise DataError(f"{source}: the corpus file is empty; check the download or the `member` in the config")
    nlp = load_pipeline(pipeline, lang)
    tokens, empties = tag_lines(nlp, lines, tokenized=tokenized, source=source, empty=empty, n_process=n_process)
    if empties:
        log.warning("%s: %d empty line(s) skipped (first: line %d)", source, len(empties), empties[0])
    meta = {"source": source, "lang": lang, "n_lines": len(lines), "n_empty": len(empties),
            "empty_lines": empties[:100], "pipeline": str(pipeline),
            "pipeline_version": f"{nlp.meta.get('name', '')} {nlp.meta.get('version', '')}".strip(),
            "tokenized": tokenized}
    return tokens, meta
