"""The cloze studies' configuration checks beyond the schema (:attr:`plmfair.studies.StudyConfig.check`): MozArt's
t-SNE maps name declared ready-made tests; a constructed corpus's sample balances its POS classes and its
languages, pivot, alignments and answers fit together, each with its spaCy pipeline; and the keys an
earlier version had (:attr:`plmfair.studies.StudyConfig.moved`)."""

from __future__ import annotations

from plmfair.cloze.plan import corpus_langs
from plmfair.errors import ConfigError

MOZART_MOVED = {
    "datasets.mozart": "MozArt is now one ready-made cloze test; move the entry (file, url, sha256, languages) "
    "to datasets.cloze_tests.mozart",
}


def check_mozart(config: dict) -> None:
    """The ready-made tests whose quadruples the t-SNE maps are declared."""
    tests = config.get("datasets", {}).get("cloze_tests", {})
    tsne = config["mozart"]["tsne"]
    unknown = [name for name in tsne["sets"] if name not in tests]
    if tsne["sentences"] and tests and unknown:  # with no ready-made test declared there is nothing to map
        raise ConfigError(
            f"config error at mozart.tsne.sets: {unknown[0]!r} is no ready-made cloze test (declared in "
            f"datasets.cloze_tests: {sorted(tests)}); list the tests whose quadruples are mapped, or set "
            f"mozart.tsne.sentences: [] for no maps"
        )


def check_corpora(config: dict) -> None:
    """The sample and each corpus in use fit together; one line naming the key otherwise."""
    cloze = config["cloze"]
    classes = len(cloze["filters"]["pos"])
    n = cloze["sample"]["n"]
    if cloze["corpora"] and n % classes:
        raise ConfigError(
            f"config error at cloze.sample.n: {n} quadruples cannot be balanced across {classes} POS classes; "
            f"use a multiple of {classes}"
        )
    for name, corpus in cloze["corpora"].items():
        if not corpus.get("enabled", True):
            continue
        where = f"cloze.corpora.{name}"
        pivot = corpus["pivot"]
        if "bitexts" in corpus and pivot in corpus["bitexts"]:
            raise ConfigError(
                f"config error at {where}.bitexts.{pivot}: the pivot language has no bitext of its own; "
                f"give one bitext per other language"
            )
        langs = corpus_langs(corpus)
        if "text" in corpus and pivot not in corpus["text"]:
            raise ConfigError(
                f"config error at {where}.pivot: {pivot!r} is not one of the text languages {list(corpus['text'])}"
            )
        for gold_name, gold in corpus["gold_alignments"].items():
            if gold["lang"] not in langs or gold["lang"] == pivot:
                raise ConfigError(
                    f"config error at {where}.gold_alignments.{gold_name}.lang: {gold['lang']!r} is not "
                    f"a non-pivot language of the corpus ({langs[1:]})"
                )
        for key in ("alignments", "align_extra", "answers"):
            for lang in corpus[key]:
                if lang not in langs or (key != "answers" and lang == pivot):
                    allowed = [x for x in langs if key == "answers" or x != pivot]
                    raise ConfigError(f"config error at {where}.{key}.{lang}: not a language of the corpus ({allowed})")
        for lang in langs:
            if lang not in cloze["spacy"]:
                raise ConfigError(
                    f"config error at cloze.spacy: no spaCy pipeline for {lang!r} (used by {where}); add "
                    f"`{lang}: <pipeline name>` (for example {lang}_core_news_sm)"
                )
