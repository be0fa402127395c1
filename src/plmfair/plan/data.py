"""The studies' data: which data sets, cloze tests and corpora a configuration uses, their
languages, and the cloze sets they make."""

from __future__ import annotations

from dataclasses import dataclass

from plmfair.core import named_function
from plmfair.studies import STUDIES


def enabled(config: dict, study: str) -> bool:
    """A study is on unless ``<study>.enabled: false`` (which, unlike an emptied mapping, survives
    Snakemake's merge of a user's --configfile into the defaults)."""
    return bool(config.get(study, {}).get("enabled", True))


def crows_pairs_sets(config: dict) -> dict[str, dict]:
    """Declared CrowS-Pairs data sets by name."""
    return config.get("datasets", {}).get("crows_pairs", {})


def crows_pairs_ingested(config: dict) -> list[str]:
    """The CrowS-Pairs data sets to download and ingest: those scored, and those they take
    directions from."""
    if not enabled(config, "crows_pairs"):
        return []
    sets = crows_pairs_sets(config)
    out = list(config["crows_pairs"]["datasets"])
    for name in out:  # grows while following direction_from
        source = sets.get(name, {}).get("direction_from")
        if source and source not in out:
            out.append(source)
    return out


def cloze_tests(config: dict) -> dict[str, dict]:
    """The ready-made cloze tests in MozArt's format (``datasets.cloze_tests``, MozArt's own among
    them), by name, while the study that scores them (``mozart``) is enabled."""
    if not enabled(config, "mozart"):
        return {}
    return {name: entry for name, entry in config.get("datasets", {}).get("cloze_tests", {}).items()
            if entry.get("enabled", True)}


def cloze_test_languages(config: dict, name: str) -> list[str]:
    """The languages read from a ready-made cloze test's archive."""
    return list(cloze_tests(config)[name]["languages"])


def cloze_corpora(config: dict) -> dict[str, dict]:
    """The constructed-set corpora in use (the study and the corpus not switched off)."""
    if not enabled(config, "cloze"):
        return {}
    return {name: entry for name, entry in config.get("cloze", {}).get("corpora", {}).items()
            if entry.get("enabled", True)}


def corpus_langs(entry: dict) -> list[str]:
    """A corpus entry's languages, pivot first: of its text files, or its bitexts' and the pivot."""
    langs = entry["bitexts"] if "bitexts" in entry else entry["text"]
    return [entry["pivot"]] + [lang for lang in langs if lang != entry["pivot"]]


def cloze_langs(config: dict, corpus: str) -> list[str]:
    """The corpus languages, pivot first."""
    return corpus_langs(cloze_corpora(config)[corpus])


def corpus_languages(config: dict) -> list[str]:
    """The languages of the corpora in use (each needs its spaCy pipeline)."""
    return list(dict.fromkeys(lang for name in cloze_corpora(config) for lang in cloze_langs(config, name)))


DOWNLOAD_KEYS = ("file", "url", "sha256")


def crows_pairs_reading(config: dict, dataset: str) -> dict:
    """How a CrowS-Pairs file is read: every key of its entry but the download's own."""
    return {key: value for key, value in crows_pairs_sets(config)[dataset].items() if key not in DOWNLOAD_KEYS}


def crows_pairs_data_file(dataset: str) -> str:
    """An ingested CrowS-Pairs data set."""
    return f"results/data/crows_pairs/{dataset}.parquet"


@dataclass(frozen=True)
class ClozeSet:
    """A set of cloze sentences the models fill: MozArt's, or one constructed from a corpus. Both go
    through the same chain (scores, metrics, tables, figures, tests); only a set with human
    answers gets the metrics and what follows them.

    ``study`` is the config section with its scoring settings and model list (``mozart`` or
    ``cloze``); ``langs`` its languages (pivot first for a constructed set); ``answered`` the
    languages with human answers."""

    name: str
    study: str
    langs: tuple[str, ...]
    answered: tuple[str, ...]

    @property
    def constructed(self) -> bool:
        return STUDIES[self.study].constructs


def cloze_sets(config: dict) -> dict[str, ClozeSet]:
    """The cloze sets in use, by name: the ready-made cloze tests (MozArt's is ``mozart``), then every
    enabled corpus."""
    out = {}
    for name, entry in cloze_tests(config).items():  # ready-made, scored under the mozart study
        langs = tuple(entry["languages"])
        out[name] = ClozeSet(name, "mozart", langs, langs)
    for name, entry in cloze_corpora(config).items():
        langs = tuple(corpus_langs(entry))
        out[name] = ClozeSet(name, "cloze", langs, tuple(lang for lang in langs if lang in entry["answers"]))
    return out


def study_languages(config: dict, study: str) -> list[str]:
    """The data languages a study covers (the models of its languages score it), as the plan function
    its record names says (:attr:`plmfair.studies.Study.languages`; none: the study scores no model)."""
    function = STUDIES[study].languages
    return named_function(function)(config, study) if function else []


def minimal_pair_languages(config: dict, study: str) -> list[str]:
    """The languages of a minimal-pair study's data sets (``<study>.datasets``)."""
    sets = crows_pairs_sets(config)
    return list(dict.fromkeys(sets[ds]["lang"] for ds in config[study]["datasets"] if ds in sets))


def cloze_set_languages(config: dict, study: str) -> list[str]:
    """The languages of a cloze study's sets."""
    return list(dict.fromkeys(lang for cloze_set in cloze_sets(config).values() if cloze_set.study == study
                              for lang in cloze_set.langs))
