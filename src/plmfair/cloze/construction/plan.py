"""Cloze construction: each corpus, how its text is read and joined, its spaCy pipelines, how each
language is aligned, and its gold alignments."""

from __future__ import annotations

from dataclasses import dataclass

from plmfair.cloze.plan import cloze_corpora, corpus_langs, corpus_languages
from plmfair.errors import ConfigError
from plmfair.pipelines import is_folder_name


@dataclass(frozen=True)
class Corpus:
    """A parallel corpus the cloze sentences are constructed from. ``joined``: made of bitexts
    (:mod:`plmfair.cloze.construction.bitext`) rather than one text file per language."""

    name: str
    pivot: str
    langs: tuple[str, ...]
    joined: bool
    tokenized: bool
    entry: dict

    def text(self, lang: str) -> dict | None:
        """The download of a language's text; None for a joined corpus (its text is the join's)."""
        return None if self.joined else self.entry["text"][lang]

    def bitexts(self) -> dict[str, tuple[dict, dict]]:
        """Per other language, the downloads of its bitext's pivot side and other side."""
        return {lang: (pair["pivot"], pair["text"]) for lang, pair in self.entry.get("bitexts", {}).items()}

    def answers(self) -> dict[str, dict]:
        """The downloads of the human answers to the constructed sentences, by language."""
        return dict(self.entry["answers"])


def corpus(config: dict, name: str) -> Corpus:
    """A cloze corpus of the configuration: its pivot, languages, form (bitexts or aligned text) and entry."""
    entry = cloze_corpora(config)[name]
    return Corpus(name, entry["pivot"], tuple(corpus_langs(entry)), "bitexts" in entry, entry["tokenized"], entry)


def bitext_join(config: dict, corpus_name: str) -> dict:
    """What joining a corpus's bitexts reads: the pivot, each bitext's archive members (pivot side,
    other side) by language, and what to do with a repeated pivot sentence."""
    c = corpus(config, corpus_name)
    return {
        "pivot": c.pivot,
        "members": {lang: [pivot["member"], text["member"]] for lang, (pivot, text) in c.bitexts().items()},
        "duplicates": c.entry["duplicates"],
    }


def text_reading(config: dict, corpus_name: str, lang: str) -> dict:
    """How a language's text is read: its archive member (none for a joined corpus) and whether its
    lines are tokenized already."""
    c = corpus(config, corpus_name)
    return {"member": (c.text(lang) or {}).get("member"), "tokenized": c.tokenized}


@dataclass(frozen=True)
class SpacyPipeline:
    """The spaCy pipeline of a language: ``built`` by the workflow from a lexicon entry (the demo's
    lookup pipelines, the run's own ``results/spacy/<lang>``), else ``name``, a package or a folder."""

    lang: str
    built: bool
    name: str | None = None
    lexicon: dict | None = None

    @property
    def package(self) -> str | None:
        """The package to install, when the pipeline is one."""
        return None if self.built or self.name is None or is_folder_name(self.name) else self.name


def spacy_pipeline(config: dict, lang: str) -> SpacyPipeline:
    """The spaCy pipeline a language is tagged with: an installed package by name, or one built from a lexicon."""
    entry = config["cloze"]["spacy"][lang]
    if isinstance(entry, dict):
        return SpacyPipeline(lang, built=True, lexicon=entry["lexicon"])
    return SpacyPipeline(lang, built=False, name=entry)


def spacy_packages(config: dict) -> dict[str, str]:
    """The spaCy pipelines the enabled cloze corpora need as installed packages, by language."""
    pipelines = [spacy_pipeline(config, lang) for lang in sorted(corpus_languages(config))]
    return {p.lang: p.package for p in pipelines if p.package}


def built_pipelines(config: dict) -> list[SpacyPipeline]:
    """The spaCy pipelines the workflow builds for the enabled cloze corpora (one job builds them all)."""
    pipelines = [spacy_pipeline(config, lang) for lang in sorted(corpus_languages(config))]
    return [p for p in pipelines if p.built]


def spacy_lexicon(config: dict, lang: str) -> dict:
    """The download of the word list a built spaCy pipeline is made from."""
    lexicon = spacy_pipeline(config, lang).lexicon
    if lexicon is None:
        raise ConfigError(f"config error at cloze.spacy.{lang}: a package or folder, not a pipeline to build")
    return lexicon


@dataclass(frozen=True)
class AlignmentRoute:
    """How one language of a corpus is aligned to the pivot: a Pharaoh file of the config
    (``pharaoh``), eflomal on the corpus lines alone (``eflomal``), or eflomal with extra parallel
    text in the same run (``eflomal_extra``). ``downloads``: what the route reads, by role;
    ``pipelines``: the spaCy pipelines that tokenize the extra text; ``settings``: every setting
    the route uses and no other (so that the others do not rerun it)."""

    kind: str
    pivot: str
    lang: str
    downloads: dict[str, dict]
    pipelines: tuple[SpacyPipeline, ...]
    settings: dict


def alignment_route(config: dict, corpus_name: str, lang: str) -> AlignmentRoute:
    """How a corpus's language gets its word alignment to the pivot: a given Pharaoh file, or an aligner run."""
    c = corpus(config, corpus_name)
    entry, cloze = c.entry, config["cloze"]
    settings: dict = {"langs": [c.pivot, lang]}
    if lang in entry["alignments"]:
        pharaoh = entry["alignments"][lang]
        return AlignmentRoute(
            "pharaoh", c.pivot, lang, {"pharaoh": pharaoh}, (), {**settings, "pharaoh_member": pharaoh["member"]}
        )
    settings.update(symmetrisation=cloze["symmetrisation"], eflomal_options=dict(cloze["eflomal"]))
    if lang not in entry["align_extra"]:
        return AlignmentRoute("eflomal", c.pivot, lang, {}, (), settings)
    extra = entry["align_extra"][lang]
    pipelines = () if c.tokenized else (spacy_pipeline(config, c.pivot), spacy_pipeline(config, lang))
    settings.update(
        extra_members=[extra["pivot"]["member"], extra["text"]["member"]],
        extra_lines=entry["align_extra_lines"],
        tokenized=c.tokenized,
    )
    return AlignmentRoute(
        "eflomal_extra",
        c.pivot,
        lang,
        {"extra_pivot": extra["pivot"], "extra_text": extra["text"]},
        pipelines,
        settings,
    )


GOLD_FILES = ("sentences", "pivot_sentences", "links")


@dataclass(frozen=True)
class GoldSet:
    """Hand-made word alignments of a corpus's pivot and one other language. ``files``: its
    downloads by role (sentences, links, optionally pivot_sentences); ``settings``: how to read
    them (format, links_first, lowercase)."""

    name: str
    lang: str
    files: dict[str, dict]
    settings: dict

    def reading(self) -> dict:
        """The job's parameter for this set: its language, settings, and each file's download file
        name and archive member (the job finds the download among its inputs by that file name)."""
        return {
            "lang": self.lang,
            **self.settings,
            "files": {role: {"file": entry["file"], "member": entry["member"]} for role, entry in self.files.items()},
        }


def gold_sets(config: dict, corpus_name: str) -> dict[str, GoldSet]:
    """A corpus's gold alignment sets, by name."""
    return {
        name: GoldSet(
            name,
            gold["lang"],
            {key: gold[key] for key in GOLD_FILES if key in gold},
            {key: value for key, value in gold.items() if key not in (*GOLD_FILES, "lang")},
        )
        for name, gold in cloze_corpora(config)[corpus_name]["gold_alignments"].items()
    }


def gold_readings(config: dict, corpus_name: str) -> dict[str, dict]:
    """The alignment-quality job's parameter: how each gold set of the corpus is read, by name."""
    return {name: gold.reading() for name, gold in gold_sets(config, corpus_name).items()}


def gold_corpora(config: dict) -> list[str]:
    """The corpora with gold alignments (their alignment quality is measured)."""
    return [name for name, entry in cloze_corpora(config).items() if entry["gold_alignments"]]


def gold_langs(config: dict, corpus_name: str) -> list[str]:
    """The languages whose corpus text goes into the gold sets' eflomal runs: the pivot, then each
    gold set's other language."""
    c = corpus(config, corpus_name)
    return list(dict.fromkeys([c.pivot, *(g.lang for g in gold_sets(config, corpus_name).values())]))
