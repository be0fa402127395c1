"""Cloze construction: every filter, the balanced seeded sample, outputs checked against their inputs."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import construct_in_memory

from plmfair.cloze.construction.alignment import links_frame, parse_pharaoh
from plmfair.cloze.construction.filters import candidate_words
from plmfair.cloze.construction.pos import build_lexicon_pipeline, read_lexicon, tag_lines
from plmfair.cloze.construction.selection import balanced_sample, verify_sentences
from plmfair.cloze.tables import construction_table
from plmfair.errors import DataError
from plmfair.io.text_files import check_parallel, read_text_lines
from plmfair.text import MASK

LANGS = ("en", "de", "es", "fr")


def test_every_quadruple_checks_against_alignment_and_pos(demo_corpus):
    tokens, aligns, _ = demo_corpus
    sentences, _ = construct_in_memory(demo_corpus, n=16)
    assert len(sentences) == 16 * 4
    assert all(sorted(g) == sorted(LANGS) for g in sentences.groupby("s_id")["lang"].apply(list))
    assert (sentences["text"].str.count(MASK.replace("[", r"\[").replace("]", r"\]")) == 1).all()
    for s_id, quad in sentences.groupby("s_id"):
        line = int(quad["line"].iloc[0])
        assert s_id == f"demo-{line}"
        en_tok = int(quad.loc[quad["lang"] == "en", "token"].iloc[0])
        for _, row in quad.iterrows():
            tok = tokens[row["lang"]]
            word = tok[(tok["line"] == line) & (tok["token"] == row["token"])].iloc[0]
            assert word["text"] == row["true_mask"] and word["text"].isalpha()
            assert word["upos"] == row["tag"] and row["tag"] in {"NOUN", "VERB", "ADJ", "ADV"}
            # the text is the line with exactly that token replaced
            words = tok[tok["line"] == line].sort_values("token")["text"].tolist()
            words[row["token"]] = MASK
            assert row["text"] == " ".join(words)
            if row["lang"] == "en":
                continue
            links = aligns[row["lang"]]
            links = links[links["line"] == line]
            # one-to-one: the English word links only to this word and this word only to the English word
            assert set(links.loc[links["pivot_token"] == en_tok, "token"]) == {row["token"]}
            assert set(links.loc[links["token"] == row["token"], "pivot_token"]) == {en_tok}
    # balanced on the English word's POS
    per_class = sentences[sentences["lang"] == "en"]["pos_class"].value_counts()
    assert per_class.to_dict() == {"NOUN": 4, "VERB": 4, "ADJ": 4, "ADV": 4}


def test_same_seed_same_sample_other_seed_other_sample(demo_corpus):
    a, _ = construct_in_memory(demo_corpus, seed=3)
    b, _ = construct_in_memory(demo_corpus, seed=3)
    c, _ = construct_in_memory(demo_corpus, seed=4)
    pd.testing.assert_frame_equal(a, b)
    assert not a[["s_id", "token"]].equals(c[["s_id", "token"]])


def test_counts_follow_the_filters_on_the_demo_corpus(demo_corpus):
    _, counts = construct_in_memory(demo_corpus)
    table = construction_table(counts)
    steps = table["step"].tolist()
    assert steps == [
        "lines",
        "non_empty",
        "length",
        "candidates",
        "one_to_one",
        "letters_only",
        "not_number",
        "examined_lines",
        "examined",
        "pos",
        "not_excluded",
        "not_mwe",
        "sentences_with_candidate",
        "sampled",
    ]
    assert table.columns.tolist()[3:] == ["en", "de", "es", "fr", "all"]
    alls = table.set_index("step")["all"]
    assert alls["lines"] == 81
    # the too-short template (3 tokens) and the over-long line are dropped by the length bounds
    assert alls["length"] < alls["non_empty"]
    # word counts never grow; POS removes the determiners, punctuation, names and numbers
    words = alls.loc["candidates":"not_mwe"].drop("examined_lines").tolist()
    assert all(x >= y for x, y in zip(words, words[1:], strict=False))
    assert alls["pos"] < alls["examined"]
    # the demo's 73 lines with a candidate are all examined before the 2-per-class sample is full
    assert alls["examined_lines"] == alls["length"] == 73
    # every German gold link is one-to-one; Spanish "a menudo" and the one-word verb for "gives up"
    # break one-to-one in Spanish and French
    one = table.set_index("step").loc["one_to_one"]
    assert pd.isna(one["en"]) and one["de"] == alls["candidates"]
    assert one["es"] < one["de"] and one["fr"] < one["de"] and one["all"] == min(one["es"], one["fr"])
    # French "aujourd'hui" fails letters_only only in French
    letters = table.set_index("step").loc["letters_only"]
    assert letters["fr"] < letters["en"] == letters["de"]
    assert alls["sampled"] == 8


def _toy(words_by_lang, *, upos, deps=None, heads=None, links=None):
    """One-line token tables and alignments for the filter tests."""
    tokens = {}
    for lang, words in words_by_lang.items():
        n = len(words)
        tokens[lang] = pd.DataFrame(
            {
                "line": 1,
                "token": range(n),
                "text": words,
                "whitespace": " ",
                "upos": upos[lang],
                "dep": (deps or {}).get(lang, [""] * n),
                "head": (heads or {}).get(lang, list(range(n))),
                "like_num": [w in {"three", "drei", "tres", "trois", "3"} for w in words],
                "is_punct": [w in {".", ","} for w in words],
                "is_alpha": [w.isalpha() for w in words],
            }
        )
    aligns = {
        lang: links_frame([set((links or {}).get(lang, [(i, i) for i in range(len(words_by_lang["en"]))]))])
        for lang in words_by_lang
        if lang != "en"
    }
    return tokens, aligns


def _survivors(tokens, aligns, **filters):
    cand, counts = candidate_words(
        tokens, aligns, pivot="en", n_lines=1, corpus="toy", filters={"min_tokens": 1, **filters}
    )
    return sorted(cand["token_en"].tolist()), counts


def test_filters_one_by_one():
    words = {
        "en": ["the", "three", "old", "Anna", "sleeps", "here", "x-ray", "."],
        "de": ["die", "drei", "alte", "Anna", "schläft", "hier", "Röntgen-", "."],
    }
    upos = {
        "en": ["DET", "NUM", "ADJ", "PROPN", "VERB", "ADV", "NOUN", "PUNCT"],
        "de": ["DET", "NUM", "ADJ", "PROPN", "VERB", "ADV", "NOUN", "PUNCT"],
    }
    tokens, aligns = _toy(words, upos=upos)
    kept, counts = _survivors(tokens, aligns)
    assert kept == [2, 4, 5]  # old, sleeps, here: DET/NUM/PROPN/PUNCT by POS, x-ray by letters
    # letters_only off keeps x-ray; a wider POS list still drops NUM and PROPN through exclude_pos
    assert _survivors(tokens, aligns, letters_only=False)[0] == [2, 4, 5, 6]
    assert _survivors(tokens, aligns, pos=["NOUN", "VERB", "ADJ", "ADV", "NUM", "PROPN"])[0] == [2, 4, 5]
    assert _survivors(tokens, aligns, pos=["NUM", "ADJ"], exclude_pos=[], exclude_numbers=False)[0] == [1, 2]
    # length bounds count sentences
    kept, counts = _survivors(tokens, aligns, max_tokens=7)
    assert kept == []
    row = counts[(counts["step"] == "length") & (counts["lang"] == "all")]
    assert row["count"].item() == 0


def test_one_to_one_needs_each_side_linked_once():
    words = {
        "en": ["dogs", "sleep", "often"],
        "de": ["Hunde", "schlafen", "oft"],
        "es": ["perros", "duermen", "a", "menudo"],
    }
    upos = {"en": ["NOUN", "VERB", "ADV"], "de": ["NOUN", "VERB", "ADV"], "es": ["NOUN", "VERB", "ADP", "ADV"]}
    # es: often -> a, menudo (one to two); de: dogs and sleep both -> schlafen (two to one)
    links = {"de": [(0, 1), (1, 1), (2, 2)], "es": [(0, 0), (1, 1), (2, 2), (2, 3)]}
    tokens, aligns = _toy(words, upos=upos, links=links)
    kept, counts = _survivors(tokens, aligns)
    assert kept == []
    one = counts[counts["step"] == "one_to_one"].set_index("lang")["count"]
    assert one["de"] == 1 and one["es"] == 2 and one["all"] == 0 and pd.isna(one["en"])


def test_multiword_expressions_by_relation_and_by_dependent():
    # German separable verb: "kommt ... an" (an: svp, head kommt); English "gives up" (up: prt)
    words = {
        "en": ["she", "arrives", "today", "and", "gives", "up"],
        "de": ["sie", "kommt", "heute", "an", "gibt", "auf"],
    }
    upos = {"en": ["PRON", "VERB", "ADV", "CCONJ", "VERB", "ADP"], "de": ["PRON", "VERB", "ADV", "ADP", "VERB", "ADP"]}
    deps = {"en": ["nsubj", "ROOT", "advmod", "cc", "conj", "prt"], "de": ["sb", "ROOT", "mo", "svp", "cj", "svp"]}
    heads = {"en": [1, 1, 1, 1, 1, 4], "de": [1, 1, 1, 1, 1, 4]}
    tokens, aligns = _toy(words, upos=upos, deps=deps, heads=heads)
    kept, _ = _survivors(tokens, aligns)
    assert kept == [2]  # arrives (German kommt governs svp) and gives (both sides) are part of an MWE
    assert _survivors(tokens, aligns, mwe_deps=[])[0] == [1, 2, 4]
    # a UD subtype matches its base relation
    deps_ud = {"en": ["nsubj", "root", "flat:name", "cc", "conj", "compound:prt"], "de": deps["de"]}
    tokens, aligns = _toy(words, upos=upos, deps=deps_ud, heads=heads)
    assert 2 not in _survivors(tokens, aligns, mwe_deps=["flat"])[0]


def test_same_pos_option():
    words = {"en": ["a", "swim", "helps"], "de": ["ein", "schwimmen", "hilft"]}
    upos = {"en": ["DET", "NOUN", "VERB"], "de": ["DET", "VERB", "VERB"]}
    tokens, aligns = _toy(words, upos=upos)
    assert _survivors(tokens, aligns)[0] == [1, 2]
    assert _survivors(tokens, aligns, same_pos=True)[0] == [2]


def test_pipeline_built_in_test_sets_heads_for_mwe(tmp_path):
    """A small spaCy pipeline with a component that parses separable verbs, run through tag_lines."""
    import spacy
    from spacy.language import Language

    @Language.component("toy_svp_parser")
    def toy_svp_parser(doc):
        for tok in doc:
            tok.pos_ = {"kommt": "VERB", "heute": "ADV", "an": "ADP", "sie": "PRON"}.get(tok.lower_, "X")
            tok.dep_ = "svp" if tok.lower_ == "an" else "dep"
        for tok in doc:
            if tok.dep_ == "svp":
                tok.head = next(t for t in doc if t.pos_ == "VERB")
        return doc

    nlp = spacy.blank("de")
    nlp.add_pipe("toy_svp_parser")
    de, _ = tag_lines(nlp, ["Sie kommt heute an"])
    en, _ = tag_lines(nlp, ["she arrives today ok"])  # only needs 4 tokens
    en["upos"] = ["PRON", "VERB", "ADV", "X"]
    assert de.loc[3, "head"] == 1 and de.loc[3, "dep"] == "svp"
    aligns = {"de": links_frame([{(0, 0), (1, 1), (2, 2)}])}
    cand, _ = candidate_words(
        {"en": en, "de": de}, aligns, pivot="en", n_lines=1, corpus="t", filters={"min_tokens": 1}
    )
    assert cand["token_en"].tolist() == [2]


def test_sample_is_balanced_and_fails_clearly_when_a_class_runs_short(demo_corpus):
    tokens, aligns, n_lines = demo_corpus
    cand, _ = candidate_words(tokens, aligns, pivot="en", n_lines=n_lines, corpus="demo", filters={"min_tokens": 4})
    sample = balanced_sample(cand, n=12, classes=["NOUN", "VERB", "ADJ", "ADV"], seed=1, corpus="demo", pivot="en")
    assert sample["line"].is_unique and sample["pos_class"].value_counts().eq(3).all()
    with pytest.raises(DataError, match=r"corpus demo: only \d+ line\(s\) still have a \w+ candidate.*cloze.sample.n"):
        balanced_sample(cand, n=400, classes=["NOUN", "VERB", "ADJ", "ADV"], seed=1, corpus="demo", pivot="en")
    with pytest.raises(DataError, match="cannot be split evenly"):
        balanced_sample(cand, n=10, classes=["NOUN", "VERB", "ADJ", "ADV"], seed=1, corpus="demo", pivot="en")


def test_line_count_mismatch_names_both_files():
    with pytest.raises(DataError, match=r"different line counts \(a.en: 10, a.de: 9\)"):
        check_parallel({"en": 10, "de": 9}, {"en": "a.en", "de": "a.de"})


def test_verify_sentences_catches_a_broken_quadruple(demo_corpus):
    tokens, aligns, _ = demo_corpus
    sentences, _ = construct_in_memory(demo_corpus)
    verify_sentences(sentences, tokens, aligns, pivot="en", pos=["NOUN", "VERB", "ADJ", "ADV"])
    broken = sentences.copy()
    i = broken.index[broken["lang"] == "de"][0]
    broken.loc[i, "token"] = 0  # the determiner: wrong word, wrong POS, not the aligned token
    with pytest.raises(AssertionError, match=rf"invalid sentence {broken.loc[i, 's_id']} \(de\)"):
        verify_sentences(broken, tokens, aligns, pivot="en", pos=["NOUN", "VERB", "ADJ", "ADV"])


@pytest.fixture(scope="module")
def demo_files(demo_data, tmp_path_factory):
    """The demo corpus as the workflow stores it: tokens files (row groups of 10 lines) and alignments files."""
    import plmfair.cloze.construction.pos
    from plmfair.cloze.construction.alignment import ALIGNMENT_SCHEMA
    from plmfair.cloze.construction.pos import tokenize_corpus_file
    from plmfair.io.parquet import write_parquet

    root, out = demo_data / "cloze", tmp_path_factory.mktemp("demo_files")
    pipelines, tokens, aligns = {}, {}, {}
    saved, plmfair.cloze.construction.pos.ROW_GROUP_LINES = plmfair.cloze.construction.pos.ROW_GROUP_LINES, 10
    try:
        for lang in LANGS:
            pipelines[lang] = out / f"nlp_{lang}"
            build_lexicon_pipeline(lang, read_lexicon(root / f"lexicon_{lang}.tsv"), pipelines[lang])
            tokens[lang] = out / f"tokens_{lang}.parquet"
            tokenize_corpus_file(
                root / f"cloze_demo.{lang}", tokens[lang], lang=lang, pipeline=pipelines[lang], tokenized=True
            )
    finally:
        plmfair.cloze.construction.pos.ROW_GROUP_LINES = saved
    for lang in LANGS[1:]:
        aligns[lang] = out / f"align_{lang}.parquet"
        links = links_frame(parse_pharaoh(read_text_lines(root / f"cloze_demo.en-{lang}.align")[0], source=lang))
        write_parquet(links, aligns[lang], schema_doc=ALIGNMENT_SCHEMA)
    return tokens, aligns, pipelines


def _construct_files(demo_files, monkeypatch, *, row_group_lines=10, **kw):
    import plmfair.cloze.construction.pos
    from plmfair.cloze.construction.selection import construct_files

    monkeypatch.setattr(plmfair.cloze.construction.pos, "ROW_GROUP_LINES", row_group_lines)
    tokens, aligns, pipelines = demo_files
    args = {
        "pivot": "en",
        "corpus": "demo",
        "filters": {"min_tokens": 4, "max_tokens": 30},
        "n": 8,
        "seed": 7,
        "pipelines": pipelines,
        "tokenized": True,
        **kw,
    }
    return construct_files(tokens, aligns, **args)


def test_streaming_path_gives_todays_sentences_on_the_demo_corpus(demo_corpus, demo_files, monkeypatch):
    """Row groups of 10 lines, 7 lines tagged at a time, only lines with a candidate tagged: the
    same sentences as everything tagged and filtered in memory, and as the sample this project drew
    before it streamed (the demo's sentences.parquet of commit d29bbce)."""
    streamed, counts, meta = _construct_files(demo_files, monkeypatch, examine="all", batch_lines=7)
    in_memory, counts_memory = construct_in_memory(demo_corpus, examine="all")
    pd.testing.assert_frame_equal(streamed, in_memory)
    pd.testing.assert_frame_equal(counts, counts_memory)
    en = streamed[streamed["lang"] == "en"]
    assert list(zip(en["s_id"], en["token"], en["true_mask"], strict=True)) == [
        ("demo-19", 2, "works"),
        ("demo-24", 2, "dog"),
        ("demo-46", 1, "tired"),
        ("demo-50", 4, "here"),
        ("demo-67", 3, "sings"),
        ("demo-70", 7, "always"),
        ("demo-74", 1, "small"),
        ("demo-80", 2, "teacher"),
    ]
    assert set(meta["seconds"]) == {"filter", "tag", "sample"}


def test_as_needed_sample_does_not_depend_on_how_many_lines_are_tagged_at_a_time(demo_corpus, demo_files, monkeypatch):
    one_batch, counts_one, _ = _construct_files(demo_files, monkeypatch, n=4, batch_lines=1000)
    small, counts_small, _ = _construct_files(demo_files, monkeypatch, row_group_lines=33, n=4, batch_lines=3)
    in_memory, _ = construct_in_memory(demo_corpus, n=4, batch_lines=5)
    pd.testing.assert_frame_equal(one_batch, small)
    pd.testing.assert_frame_equal(one_batch, in_memory)
    examined = {
        name: c.set_index(["step", "lang"]).loc[("examined_lines", "all"), "count"]
        for name, c in (("one", counts_one), ("small", counts_small))
    }
    # one per class is found within the first few lines of the walk: only those batches are tagged
    assert examined["one"] == 73 and examined["small"] < 73 and examined["small"] % 3 == 0
    lexical = counts_small.set_index(["step", "lang"])
    assert (
        lexical.loc[("not_number", "all"), "count"]
        == counts_one.set_index(["step", "lang"]).loc[("not_number", "all"), "count"]
    )
    assert one_batch[one_batch["lang"] == "en"]["pos_class"].value_counts().eq(1).all()


def test_walk_reports_what_it_saw_when_a_class_runs_short(demo_corpus):
    with pytest.raises(
        DataError,
        match=r"every line was examined and the balanced sample is still short of .*"
        r"Lower cloze.sample.n",
    ):
        construct_in_memory(demo_corpus, n=400)
