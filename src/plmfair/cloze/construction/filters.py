"""The filters of cloze construction, in the order applied: those that need no tagger (non-empty, length,
one-to-one alignment in every language, letters only, not a number: :func:`lexical_candidates`), then
those that read spaCy's tags (content POS, no multi-word expression: :func:`tagged_candidates`), with the
count each step leaves. The sample drawn from what passes is :mod:`plmfair.cloze.construction.selection`'s;
the rules in full: docs/construction.md."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

import pandas as pd

from plmfair.cloze.construction.pos import TAGS_SCHEMA
from plmfair.errors import DataError

# records a filter step's counts: (step, unit, description, count per language, count in all)
Recorder = Callable[[str, str, str, Mapping[str, "int | None"], int], None]

log = logging.getLogger(__name__)

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


def pivot_first(tokens: Mapping[str, pd.DataFrame], pivot: str) -> list[str]:
    """The languages of ``tokens``, the pivot first."""
    return [pivot] + [lang for lang in tokens if lang != pivot]


def _dep_matches(dep: pd.Series, labels: Sequence[str]) -> pd.Series:
    wanted = set(labels)
    base = dep.str.split(":").str[0]
    return dep.isin(wanted) | base.isin(wanted)


def _in_mwe(tokens: pd.DataFrame, labels: Sequence[str]) -> pd.Series:
    """Tokens that carry an MWE relation or govern a token that does."""
    rel = _dep_matches(tokens["dep"].fillna(""), labels)
    governs = tokens.loc[rel & (tokens["head"] != tokens["token"]), ["line", "head"]]
    heads = set(zip(governs["line"], governs["head"], strict=True))
    gov = pd.Series(
        [(ln, t) in heads for ln, t in zip(tokens["line"], tokens["token"], strict=True)], index=tokens.index
    )
    return rel | gov


def _one_to_one(links: pd.DataFrame) -> pd.DataFrame:
    """Links whose pivot token and other token each take part in this link only."""
    p = links.groupby(["line", "pivot_token"])["token"].transform("size")
    o = links.groupby(["line", "token"])["pivot_token"].transform("size")
    return links[(p == 1) & (o == 1)]


def counts_recorder(counts: list[dict], langs: Sequence[str], corpus: str) -> Recorder:
    """A function that appends a filter step's counts (per language and in all) to ``counts``."""

    def record(step: str, unit: str, desc: str, per_lang: Mapping[str, int | None], total: int) -> None:
        for lang in langs:
            counts.append(
                {
                    "corpus": corpus,
                    "step": step,
                    "unit": unit,
                    "description": desc,
                    "lang": lang,
                    "count": per_lang.get(lang),
                }
            )
        counts.append(
            {"corpus": corpus, "step": step, "unit": unit, "description": desc, "lang": "all", "count": total}
        )

    return record


class Steps:
    """Filters applied in turn to a candidate table, each recording what it keeps."""

    def __init__(self, cand: pd.DataFrame, langs: Sequence[str], record: Recorder) -> None:
        self.cand, self.langs, self.record = cand, langs, record

    def apply(
        self, name: str, desc: str, test: Callable[[str], pd.Series | None], *, also: pd.Series | None = None
    ) -> None:
        ok = {lang: test(lang) for lang in self.langs}
        per_lang = {lang: (None if kept is None else int(kept.sum())) for lang, kept in ok.items()}
        both = pd.Series(True, index=self.cand.index)
        for kept in ok.values():
            if kept is not None:
                both &= kept
        if also is not None:
            both &= also
        self.cand = self.cand[both].reset_index(drop=True)
        self.record(name, "words", desc, per_lang, len(self.cand))


def _kept_lines(
    tokens: Mapping[str, pd.DataFrame], langs: list[str], all_lines: pd.Index, f: Mapping, record: Recorder
) -> pd.Index:
    """The lines with text in every language (non_empty) and within the token bounds in every language (length),
    each filter counted by ``record``."""
    record("lines", "sentences", "lines in the corpus files", {lang: len(all_lines) for lang in langs}, len(all_lines))
    lengths = {lang: tokens[lang].groupby("line").size().reindex(all_lines, fill_value=0) for lang in langs}
    keep = pd.Series(True, index=all_lines)
    nonempty = {lang: lengths[lang] > 0 for lang in langs}
    for lang in langs:
        keep &= nonempty[lang]
    record(
        "non_empty",
        "sentences",
        "text in every language",
        {lang: int(nonempty[lang].sum()) for lang in langs},
        int(keep.sum()),
    )
    lo, hi = f["min_tokens"], f["max_tokens"]
    in_bounds = {lang: lengths[lang].between(lo, hi) for lang in langs}
    per = {lang: int((keep & in_bounds[lang]).sum()) for lang in langs}
    for lang in langs:
        keep &= in_bounds[lang]
    record("length", "sentences", f"{lo} to {hi} tokens in every language", per, int(keep.sum()))
    return all_lines[keep.to_numpy()]


def _aligned_words(
    tokens: Mapping[str, pd.DataFrame],
    alignments: Mapping[str, pd.DataFrame],
    langs: list[str],
    pivot: str,
    lines_kept: pd.Index,
) -> pd.DataFrame:
    """Every pivot-language word of ``lines_kept`` with, per other language, the word it is aligned to one-to-one
    (missing where it is not) and each word's text and lexical flags, as columns ``<name>_<lang>``."""

    def lexical(lang: str) -> pd.DataFrame:
        tok = tokens[lang][["line", "token", "text", "like_num", "is_punct"]]
        return tok.rename(columns={c: f"{c}_{lang}" for c in tok.columns if c != "line"})

    cand = lexical(pivot)
    cand = cand[cand["line"].isin(lines_kept)].reset_index(drop=True)
    for lang in langs[1:]:
        links = _one_to_one(alignments[lang]).rename(
            columns={"pivot_token": f"token_{pivot}", "token": f"token_{lang}"}
        )
        cand = cand.merge(links, on=["line", f"token_{pivot}"], how="left")
        cand = cand.merge(lexical(lang), on=["line", f"token_{lang}"], how="left")
    return cand


def lexical_candidates(
    tokens: Mapping[str, pd.DataFrame],
    alignments: Mapping[str, pd.DataFrame],
    *,
    pivot: str,
    lines: Sequence[int],
    corpus: str,
    filters: Mapping | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The candidates of ``lines`` that pass the filters needing no tagger (non_empty, length,
    one_to_one, letters_only, not_number), and their counts.

    ``tokens``: per language, a tokens table (:data:`plmfair.cloze.construction.pos.TOKENS_SCHEMA`) holding at least
    those lines; ``alignments``: per non-pivot language, links
    (:data:`plmfair.cloze.construction.alignment.ALIGNMENT_SCHEMA`).
    Every filter looks at one line only, so the counts of line ranges add up to the corpus's.
    The sentence filters (:func:`_kept_lines`) come first, then the pivot's words joined with their one-to-one
    aligned words (:func:`_aligned_words`), then the word filters, each counted as it is applied.
    """
    f = {**DEFAULT_FILTERS, **(filters or {})}
    langs = pivot_first(tokens, pivot)
    missing = [lang for lang in langs[1:] if lang not in alignments]
    if missing:
        raise DataError(f"corpus {corpus}: no alignments for {missing}")
    counts: list[dict] = []
    record = counts_recorder(counts, langs, corpus)
    lines_kept = _kept_lines(tokens, langs, pd.Index(lines), f, record)
    cand = _aligned_words(tokens, alignments, langs, pivot, lines_kept)
    record(
        "candidates", "words", "pivot-language tokens of the kept lines", {lang: len(cand) for lang in langs}, len(cand)
    )
    steps = Steps(cand, langs, record)
    steps.apply(
        "one_to_one",
        "aligned one-to-one with the pivot word in every language",
        lambda lang: None if lang == pivot else steps.cand[f"token_{lang}"].notna(),
    )
    if f["letters_only"]:
        steps.apply(
            "letters_only",
            "letters only in every language",
            lambda lang: steps.cand[f"text_{lang}"].astype(str).map(str.isalpha).astype(bool),
        )

    def not_number(lang: str) -> pd.Series:
        bad = steps.cand[f"is_punct_{lang}"].astype(bool)
        if f["exclude_numbers"]:
            bad |= steps.cand[f"like_num_{lang}"].astype(bool)
        return ~bad

    steps.apply(
        "not_number",
        "no punctuation" + (" or number-like word" if f["exclude_numbers"] else "") + " (spaCy's is_punct/like_num)",
        not_number,
    )
    cand = steps.cand
    for lang in langs[1:]:
        cand[f"token_{lang}"] = cand[f"token_{lang}"].astype("int64")
    return cand[["line"] + [f"{c}_{lang}" for lang in langs for c in ("token", "text")]], pd.DataFrame(counts)


def tagged_candidates(
    cand: pd.DataFrame, tags: Mapping[str, pd.DataFrame], *, pivot: str, corpus: str, filters: Mapping | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The lexical candidates (:func:`lexical_candidates`) of the tagged lines that pass the
    filters needing POS and dependencies (pos, not_excluded, not_mwe), with ``upos_<lang>`` and
    ``pos_class``, and their counts. ``tags``: per language, :data:`plmfair.cloze.construction.pos.TAGS_SCHEMA`
    rows of every token of the lines examined (candidates of other lines are dropped)."""
    f = {**DEFAULT_FILTERS, **(filters or {})}
    langs = pivot_first(tags, pivot)
    counts: list[dict] = []
    record = counts_recorder(counts, langs, corpus)
    examined = tags[pivot]["line"].unique()
    cand = cand[cand["line"].isin(examined)].reset_index(drop=True)
    record(
        "examined", "words", "candidates of the lines tagged and parsed", {lang: len(cand) for lang in langs}, len(cand)
    )
    for lang in langs:
        tag = tags[lang].assign(in_mwe=_in_mwe(tags[lang], f["mwe_deps"]))[["line", "token", "upos", "in_mwe"]]
        cand = cand.merge(
            tag.rename(columns={c: f"{c}_{lang}" for c in tag.columns if c != "line"}),
            on=["line", f"token_{lang}"],
            how="left",
            validate="many_to_one",
        )
    steps = Steps(cand, langs, record)
    pos = list(f["pos"])
    same = None
    if f["same_pos"]:
        same = pd.Series(True, index=cand.index)
        for lang in langs[1:]:
            same &= cand[f"upos_{lang}"] == cand[f"upos_{pivot}"]
    steps.apply(
        "pos",
        f"POS in {pos} in every language" + (" (the same in all)" if f["same_pos"] else ""),
        lambda lang: steps.cand[f"upos_{lang}"].isin(pos),
        also=same,
    )
    steps.apply(
        "not_excluded",
        f"no POS in {list(f['exclude_pos'])}",
        lambda lang: ~steps.cand[f"upos_{lang}"].isin(list(f["exclude_pos"])),
    )
    steps.apply(
        "not_mwe",
        f"not in a multi-word expression (relations {list(f['mwe_deps'])})",
        lambda lang: ~steps.cand[f"in_mwe_{lang}"].astype(bool),
    )
    cand = steps.cand
    n_sent = cand["line"].nunique()
    record(
        "sentences_with_candidate",
        "sentences",
        "lines with at least one candidate",
        {lang: n_sent for lang in langs},
        n_sent,
    )
    cand = cand.drop(columns=[f"in_mwe_{lang}" for lang in langs]).assign(pos_class=cand[f"upos_{pivot}"])
    return cand, pd.DataFrame(counts)


def add_counts(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Counts of line ranges summed per step and language (a step without a count stays without)."""
    df = pd.concat(frames, ignore_index=True)
    df["count"] = df["count"].astype("Int64")
    keys = ["corpus", "step", "unit", "description", "lang"]
    out = df.groupby(keys, sort=False, dropna=False)["count"].sum(min_count=1).reset_index()
    return out.astype({"count": "Int64"})


def candidate_words(
    tokens: Mapping[str, pd.DataFrame],
    alignments: Mapping[str, pd.DataFrame],
    *,
    pivot: str,
    n_lines: int,
    corpus: str,
    filters: Mapping | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every candidate that passes the filters, and the count table
    (:data:`plmfair.cloze.construction.selection.CONSTRUCTION_SCHEMA`),
    from tokens tagged in full (tokens with the :data:`plmfair.cloze.construction.pos.TAGS_SCHEMA` columns, as
    :func:`plmfair.cloze.construction.pos.tag_lines` gives them) over lines 1..n_lines."""
    lexical, counts = lexical_candidates(
        tokens, alignments, pivot=pivot, lines=range(1, n_lines + 1), corpus=corpus, filters=filters
    )
    tags = {lang: t[t["line"].isin(lexical["line"])][list(TAGS_SCHEMA)] for lang, t in tokens.items()}
    cand, tagged = tagged_candidates(lexical, tags, pivot=pivot, corpus=corpus, filters=filters)
    return cand, pd.concat([counts, tagged], ignore_index=True)
