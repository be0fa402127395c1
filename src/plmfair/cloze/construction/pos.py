"""Tokenization, universal part of speech and dependency relations with spaCy.

One pipeline per language, named in config (``cloze.spacy``): an installed package such
as ``en_core_web_sm``, a folder written by ``nlp.to_disk``, or a lookup pipeline that the
workflow builds from a word list (:func:`build_lexicon_pipeline`, for the offline demo).
Alignment and cloze selection use exactly the tokens written here.

Two passes, so that the expensive one runs only where it is needed. Every line is
tokenized (spaCy's rule-based tokenizer, a few million words a second); the tagger and
parser then run only on the lines the cloze selection examines (:func:`tag_tokens`, from
the same tokens: the line's text is rebuilt from them and must tokenize the same way).

Tokens (``results/cloze/{corpus}/tokens/{lang}.parquet``), one row per token
(:data:`TOKENS_SCHEMA`), written in row groups of :data:`ROW_GROUP_LINES` lines:

- line (int64): 1-based line of the corpus (the sentence id across languages).
- token (int64): 0-based token index within the line; alignment indices refer to it.
- text (string): the token as written.
- whitespace (string): the white space that follows it in the line ("" or " ").
- like_num (bool), is_punct (bool), is_alpha (bool): spaCy's lexical flags.

Tags (:data:`TAGS_SCHEMA`), per examined line and token: upos (string, "" when the pipeline
has no tagger for it), dep (string, "" without a parser), head (int64, the head's token
index; its own index for the root or without a parser).

Empty lines have no tokens; the file's metadata records the number of lines, the empty
ones and the source.
"""

from __future__ import annotations

import csv
import importlib.util
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, cast

import pandas as pd

from plmfair.cloze.construction.bitext import joined_lines
from plmfair.errors import ConfigError, DataError
from plmfair.io.atomic import atomic_dir
from plmfair.io.parquet import read_parquet, write_parquet_chunks
from plmfair.io.text_files import read_text_lines
from plmfair.pipelines import is_folder_name

if TYPE_CHECKING:  # spaCy's types only: it loads in the jobs that tokenize or tag (_spacy)
    from spacy.language import Language
    from spacy.tokenizer import Tokenizer

log = logging.getLogger(__name__)

TOKENS_SCHEMA = {
    "line": "1-based line of the corpus (sentence id across languages)",
    "token": "0-based token index within the line (the index alignments use)",
    "text": "token as written",
    "whitespace": "white space following the token",
    "like_num": "spaCy like_num flag (digits or number words)",
    "is_punct": "spaCy is_punct flag",
    "is_alpha": "every character is a letter",
}
TAGS_SCHEMA = {
    "line": TOKENS_SCHEMA["line"],
    "token": TOKENS_SCHEMA["token"],
    "upos": "universal part of speech ('' when untagged)",
    "dep": "dependency relation ('' without a parser)",
    "head": "token index of the syntactic head (own index for roots)",
}
TOKENS_DTYPES = {
    "line": "int64",
    "token": "int64",
    "text": "string",
    "whitespace": "string",
    "like_num": bool,
    "is_punct": bool,
    "is_alpha": bool,
}
TAGS_DTYPES = {"line": "int64", "token": "int64", "upos": "string", "dep": "string", "head": "int64"}
# lines per row group of a tokens file: the unit the cloze selection reads at a time
ROW_GROUP_LINES = 20_000
# components the cloze filters never read (POS comes from the tagger or morphologizer with the
# attribute ruler, relations from the parser), switched off while tagging
UNUSED_COMPONENTS = ("ner", "lemmatizer", "entity_ruler", "textcat", "textcat_multilabel", "spancat")


# packages whose spaCy pipelines run torch (transformer-based ones: en_core_web_trf and the like)
TORCH_PIPELINE_PACKAGES = ("spacy_transformers", "spacy_curated_transformers")


def _spacy() -> ModuleType:
    """spaCy, imported on first use: only the jobs that tokenize or tag load it. Its thinc imports
    torch only to learn whether it is there (1.5 s of a 2.2 s import, in every such job); the
    pipelines a run tags with (spaCy's CPU ones, lookup pipelines) never use it and the cloze
    environment (envs/cloze.yaml) has none. So, unless torch is loaded already or a transformer
    pipeline package is installed, thinc finds it absent, as in that environment."""
    first = "spacy" not in sys.modules and "torch" not in sys.modules
    if first and not any(importlib.util.find_spec(name) for name in TORCH_PIPELINE_PACKAGES):
        sys.modules["torch"] = None  # type: ignore[assignment]  # an import of torch now fails: thinc's check
        try:
            import spacy.tokens  # spaCy is heavy: only the jobs that tokenize or tag load it
        finally:
            del sys.modules["torch"]
    import spacy.tokens  # (loaded already above, or here with torch when torch was loaded first)

    return spacy


def load_pipeline(name: str | os.PathLike, lang: str) -> Language:
    """Load a spaCy pipeline by package name or path; a missing one stops with the command that installs it."""
    try:
        nlp = _spacy().load(name)
    except OSError as exc:
        if Path(str(name)).exists() or is_folder_name(str(name)):
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


def _check_empty(lines: Sequence[str], source: str, empty: str) -> list[int]:
    empties = [i for i, text in enumerate(lines, start=1) if not text.strip()]
    if empties and empty == "error":
        raise DataError(
            f"{source} line {empties[0]}: empty sentence ({len(empties)} empty line(s) in all); remove it from every "
            f"language's file, or set cloze.empty_lines: skip to drop such lines from the selection"
        )
    return empties


def tokenize_table(
    nlp: Language,
    lines: Sequence[str],
    *,
    tokenized: bool = False,
    source: str = "<text>",
    empty: str = "error",
    chunk_lines: int = ROW_GROUP_LINES,
) -> tuple[Iterator[pd.DataFrame], list[int]]:
    """Tokens of every line (:data:`TOKENS_SCHEMA`) in frames of ``chunk_lines`` lines, and the
    1-based numbers of empty lines (checked before the first frame is made).

    ``tokenized``: the lines are already tokenized with single spaces (as word alignments
    usually are) and keep those tokens. ``empty``: ``error`` stops at the first empty line,
    ``skip`` keeps it with no tokens and counts it.
    """
    empties = _check_empty(lines, source, empty)

    def frames() -> Iterator[pd.DataFrame]:
        Doc = _spacy().tokens.Doc

        for start in range(0, max(len(lines), 1), chunk_lines):
            keep = [
                (i, text) for i, text in enumerate(lines[start : start + chunk_lines], start=start + 1) if text.strip()
            ]
            if tokenized:
                docs = (Doc(nlp.vocab, words=text.split()) for _, text in keep)
            else:
                docs = cast("Tokenizer", nlp.tokenizer).pipe(text.strip() for _, text in keep)
            cols: dict[str, list] = {k: [] for k in TOKENS_SCHEMA}
            for (lineno, _), doc in zip(keep, docs, strict=True):
                for tok in doc:
                    cols["line"].append(lineno)
                    cols["token"].append(tok.i)
                    cols["text"].append(tok.text)
                    cols["whitespace"].append(tok.whitespace_)
                    cols["like_num"].append(bool(tok.like_num))
                    cols["is_punct"].append(bool(tok.is_punct))
                    cols["is_alpha"].append(bool(tok.is_alpha))
            yield pd.DataFrame(cols).astype(TOKENS_DTYPES)

    return frames(), empties


def tag_tokens(
    nlp: Language, tokens: pd.DataFrame, *, tokenized: bool = False, source: str = "<text>", batch_size: int = 256
) -> pd.DataFrame:
    """Universal POS and dependencies (:data:`TAGS_SCHEMA`) of every line in a tokens table.

    The line is tagged as a whole: pre-tokenized lines as those tokens, raw lines by running
    the full pipeline on the text rebuilt from the tokens (their text and trailing white
    space), which must give the same tokens again; components the filters do not read are
    switched off.
    """
    Doc = _spacy().tokens.Doc

    tokens = tokens.sort_values(["line", "token"])
    words = tokens.groupby("line", sort=True)["text"].agg(list)
    numbers = list(words.index)
    if tokenized:
        docs_in = (Doc(nlp.vocab, words=w) for w in words)
    else:
        texts = (tokens["text"] + tokens["whitespace"]).groupby(tokens["line"], sort=True).agg("".join)
        docs_in = iter(texts)
    cols: dict[str, list] = {k: [] for k in TAGS_SCHEMA}
    with nlp.select_pipes(disable=[c for c in UNUSED_COMPONENTS if c in nlp.pipe_names]):
        for lineno, expected, doc in zip(numbers, words, nlp.pipe(docs_in, batch_size=batch_size), strict=True):
            if [t.text for t in doc] != expected:
                raise DataError(
                    f"{source} line {lineno}: the pipeline tokenizes the line differently now "
                    f"({[t.text for t in doc][:12]} vs {expected[:12]}); rerun the tokenize stage with this pipeline"
                )
            for tok in doc:
                cols["line"].append(lineno)
                cols["token"].append(tok.i)
                cols["upos"].append(tok.pos_)
                cols["dep"].append(tok.dep_)
                cols["head"].append(tok.head.i)
    return pd.DataFrame(cols).astype(TAGS_DTYPES)


def tag_lines(
    nlp: Language, lines: Sequence[str], *, tokenized: bool = False, source: str = "<text>", empty: str = "error"
) -> tuple[pd.DataFrame, list[int]]:
    """Every line tokenized and tagged in memory: tokens (:data:`TOKENS_SCHEMA`) with the
    :data:`TAGS_SCHEMA` columns, and the empty lines. For small corpora and tests; the workflow
    tags only the lines the selection examines."""
    frames, empties = tokenize_table(nlp, lines, tokenized=tokenized, source=source, empty=empty)
    tokens = pd.concat(list(frames), ignore_index=True)
    tags = tag_tokens(nlp, tokens, tokenized=tokenized, source=source)
    return tokens.merge(tags, on=["line", "token"], how="left", validate="one_to_one"), empties


def tokenize_lines(nlp: Language | None, lines: Sequence[str], *, tokenized: bool = False) -> list[list[str]]:
    """Tokens only (the pipeline's tokenizer, no tagging): for extra alignment text. Lines ``tokenized``
    already need no pipeline (``nlp`` None)."""
    if tokenized:
        return [text.split() for text in lines]
    if nlp is None:
        raise ValueError("lines not tokenized yet need a spaCy pipeline to tokenize them")
    return [[t.text for t in doc] for doc in cast("Tokenizer", nlp.tokenizer).pipe(text.strip() for text in lines)]


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
    nlp = _spacy().blank(lang)
    ruler = nlp.add_pipe("attribute_ruler")
    for e in entries:
        attrs = {"POS": e["upos"]}
        if e.get("dep"):
            attrs["DEP"] = e["dep"]
        ruler.add([[{"LOWER": e["word"].lower()}]], attrs)
    with atomic_dir(out_dir) as tmp:
        nlp.to_disk(tmp)


def corpus_lines(path: str | os.PathLike, *, lang: str, member: str | None = None) -> tuple[list[str], str]:
    """One language's lines: of a text file (or archive member), or of a joined corpus
    (:mod:`plmfair.cloze.construction.bitext`, a ``.parquet`` file)."""
    if str(path).endswith(".parquet"):
        source = f"{path}[{lang}]"
        return joined_lines(read_parquet(path), lang, str(path)), source

    return read_text_lines(path, member)


def tokenize_corpus_file(
    path: str | os.PathLike,
    out: str | os.PathLike,
    *,
    lang: str,
    pipeline: str | os.PathLike,
    member: str | None = None,
    tokenized: bool = False,
    empty: str = "error",
) -> dict:
    """Tokenize one language's corpus file into ``out`` (row groups of :data:`ROW_GROUP_LINES`
    lines, written atomically); returns the run metadata (source, line counts, pipeline)."""

    lines, source = corpus_lines(path, lang=lang, member=member)
    if not lines:
        raise DataError(f"{source}: the corpus file is empty; check the download or the `member` in the config")
    nlp = load_pipeline(pipeline, lang)
    frames, empties = tokenize_table(
        nlp, lines, tokenized=tokenized, source=source, empty=empty, chunk_lines=ROW_GROUP_LINES
    )
    if empties:
        log.warning("%s: %d empty line(s) skipped (first: line %d)", source, len(empties), empties[0])
    meta = {
        "source": source,
        "lang": lang,
        "n_lines": len(lines),
        "n_empty": len(empties),
        "empty_lines": empties[:100],
        "pipeline": str(pipeline),
        "pipeline_version": f"{nlp.meta.get('name', '')} {nlp.meta.get('version', '')}".strip(),
        "tokenized": tokenized,
    }
    write_parquet_chunks(frames, out, schema_doc=TOKENS_SCHEMA, meta=meta)
    return meta
