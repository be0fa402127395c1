"""How good the eflomal step is: its links on hand-made gold alignments (precision, recall and
alignment error rate, Och & Ney 2003), per symmetrisation, the gold sentences aligned alone and
together with the corpus's own lines.

Outputs: ``results/cloze/{corpus}/alignment_quality.parquet`` (:data:`ALIGNMENT_QUALITY_SCHEMA`)
and the predicted links, ``gold_alignment_links.parquet`` (:data:`GOLD_LINKS_SCHEMA`).
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import pandas as pd

from plmfair.cloze.construction.alignment import (
    LINK_INDEX,
    SYMMETRISATIONS,
    Links,
    eflomal_links,
    parse_pharaoh,
    symmetrise,
    write_sentences,
    write_token_lines,
)
from plmfair.errors import DataError
from plmfair.io.parquet import read_parquet_meta
from plmfair.io.text_files import read_text_lines

log = logging.getLogger(__name__)


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
            if not LINK_INDEX.fullmatch(i_s) or not LINK_INDEX.fullmatch(j_s) or int(i_s) < 1 or int(j_s) < 1:
                raise DataError(
                    f"{source} line {lineno}: malformed link {item!r}; expected 1-based `i-j` (sure) "
                    f"or `ipj` (possible)"
                )
            link = (int(i_s) - 1, int(j_s) - 1)
            possible.add(link)
            if sep == "-":
                sure.add(link)
        sure_all.append(sure)
        possible_all.append(possible)
    return sure_all, possible_all


def gold_alignments(
    name: str,
    *,
    sentence_lines: Sequence[str],
    link_lines: Sequence[str],
    fmt: str,
    pivot_first: bool,
    pivot_lines: Sequence[str] | None = None,
    source: str = "",
) -> GoldAlignments:
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
        raise DataError(
            f"{source}: {len(pivot)} pivot sentence(s), {len(other)} other sentence(s) and {len(link_lines)} "
            f"alignment line(s); a gold set needs one line of each per sentence pair"
        )
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
    return {
        "predicted": a,
        "sure": s,
        "possible": p,
        "hit_sure": a_s,
        "hit_possible": a_p,
        "precision": a_p / a if a else float("nan"),
        "recall": a_s / s if s else float("nan"),
        "aer": 1 - (a_s + a_p) / (a + s) if a + s else float("nan"),
    }


def alignment_quality(
    gold: GoldAlignments,
    *,
    corpus: str,
    lang: str,
    extra: tuple[str | os.PathLike, str | os.PathLike] | None = None,
    symmetrisations: Sequence[str] = SYMMETRISATIONS,
    eflomal_options: dict | None = None,
    lowercase: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """eflomal on the gold sentences, alone and with the corpus's lines (``extra``: its pivot and
    other-language tokens files, streamed into the run, :func:`plmfair.cloze.construction.alignment.write_token_lines`,
    lower-cased with ``lowercase``) in the same run, each symmetrisation scored: the quality rows
    (:data:`ALIGNMENT_QUALITY_SCHEMA`) and the predicted links (:data:`GOLD_LINKS_SCHEMA`) they
    were computed from."""
    runs = [("none", None)] + ([] if extra is None else [("corpus", extra)])
    rows, links = [], []
    n = len(gold.sentences)
    for extra_name, tokens in runs:
        with tempfile.TemporaryDirectory(prefix="plmfair-eflomal-") as tmp:
            src, tgt = Path(tmp) / "pivot.txt", Path(tmp) / "other.txt"
            n_extra = 0
            with open(src, "w", encoding="utf-8") as src_fh, open(tgt, "w", encoding="utf-8") as tgt_fh:
                write_sentences(gold.pivot_sentences, src_fh)
                write_sentences(gold.sentences, tgt_fh)
                if tokens is not None:
                    n_extra = read_parquet_meta(tokens[0])["n_lines"]
                    for path, fh in zip(tokens, (src_fh, tgt_fh), strict=True):
                        write_token_lines(path, fh, n_lines=n_extra, lowercase=lowercase)
            log.info("eflomal on %d gold sentence pairs of %s + %d extra", n, gold.name, n_extra)
            fwd_path, rev_path = eflomal_links(src, tgt, tmp, **(eflomal_options or {}))
            fwd, rev = (_first_links(path, n) for path in (fwd_path, rev_path))
        for method in symmetrisations:
            predicted = [symmetrise(f, r, method) for f, r in zip(fwd, rev, strict=True)]
            rows.append(
                {
                    "corpus": corpus,
                    "gold": gold.name,
                    "lang": lang,
                    "extra": extra_name,
                    "extra_lines": n_extra,
                    "symmetrisation": method,
                    "sentences": n,
                    **alignment_error(predicted, gold.sure, gold.possible),
                    "dropped_gold_links": gold.dropped,
                }
            )
            links += [
                (gold.name, extra_name, method, k, i, j)
                for k, sent in enumerate(predicted, start=1)
                for i, j in sorted(sent)
            ]
    quality = pd.DataFrame(rows, columns=list(ALIGNMENT_QUALITY_SCHEMA))
    return quality, pd.DataFrame(links, columns=list(GOLD_LINKS_SCHEMA)).astype(
        {"sentence": "int64", "pivot_token": "int64", "token": "int64"}
    )


def _first_links(path: Path, n: int) -> list[Links]:
    """The links of the first ``n`` sentences of an eflomal link file (the gold ones; an empty set for
    trailing sentences eflomal wrote no line for)."""
    with open(path, encoding="utf-8") as fh:
        lines = [line.rstrip("\n") for line in islice(fh, n)]
    return parse_pharaoh(lines + [""] * (n - len(lines)), source=f"eflomal links {path.name}")


def alignment_quality_files(
    gold_sets: Mapping[str, dict],
    *,
    corpus: str,
    pivot: str,
    token_files: Mapping[str, str | os.PathLike] | None = None,
    symmetrisations: Sequence[str] = SYMMETRISATIONS,
    eflomal_options: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`alignment_quality` for every gold set of a corpus. ``gold_sets``: name -> settings
    (lang, format, links_first, lowercase) and the local paths and members of ``sentences``,
    ``links`` and optionally ``pivot_sentences``; ``token_files``: the corpus tokens per
    language, the extra text (None: without extra text only)."""

    def lines(spec: dict) -> tuple[list[str], str]:
        return read_text_lines(spec["path"], spec.get("member"))

    qualities, all_links = [], []
    for name, g in gold_sets.items():
        lang = g["lang"]
        sentence_lines, source = lines(g["sentences"])
        link_lines, link_source = lines(g["links"])
        pivot_lines = lines(g["pivot_sentences"])[0] if g.get("pivot_sentences") else None
        gold = gold_alignments(
            name,
            sentence_lines=sentence_lines,
            link_lines=link_lines,
            fmt=g.get("format", "talp"),
            pivot_first=g.get("links_first") in (None, pivot),
            pivot_lines=pivot_lines,
            source=f"{source} / {link_source}",
        )
        extra = None if token_files is None else (token_files[pivot], token_files[lang])
        quality, links = alignment_quality(
            gold,
            corpus=corpus,
            lang=lang,
            extra=extra,
            symmetrisations=symmetrisations,
            eflomal_options=eflomal_options,
            lowercase=g.get("lowercase", False),
        )
        qualities.append(quality)
        all_links.append(links)
    return pd.concat(qualities, ignore_index=True), pd.concat(all_links, ignore_index=True)
