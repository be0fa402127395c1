"""Cloze-set jobs: which models fill each cloze set, on which languages and how, the sets with
answers, and the t-SNE maps."""

from __future__ import annotations

from dataclasses import dataclass

from plmfair.scoring.model_settings import (
    model_precision,
    model_specs,
    num_beams,
    spec_of,
    study_models,
)
from plmfair.studies import STUDIES, enabled, robustness_on

# The files of a cloze set or corpus, each path written here once: ``results/cloze/<set>/<kind>.parquet``.
SET_FILE = "results/cloze/{cloze_set}/{kind}.parquet"
# what each cloze set with answers derives from its scores, and what a constructed corpus derives from its text
ANSWERED_SET_FILES = (
    "metrics",
    "annotation_scores",
    "overview",
    "group_winloss",
    "group_gaps",
    "group_effects",
    "group_tests",
    "group_disparity",
    "breakdowns",
)
CORPUS_FILES = ("sentences", "construction")
# what the robustness analysis (robustness.enabled) derives from a set's annotation scores
ROBUSTNESS_SET_FILES = ("robustness_specifications", "robustness")


def set_file(cloze_set: str, kind: str) -> str:
    """One file of a cloze set or corpus (``{subject}`` for the templates of tables)."""
    return SET_FILE.format(cloze_set=cloze_set, kind=kind)


def sheets_folder(corpus: str) -> str:
    """A constructed corpus's annotation sheets, to send to annotators."""
    return f"results/cloze/{corpus}/sheets"


def annotations_file(cloze_set: str) -> str:
    """A cloze set's human answers, ingested."""
    return f"results/data/{cloze_set}/annotations.parquet"


def cloze_scores_file(cloze_set: str, kind: str, model: str) -> str:
    """A model's ``predictions`` or ``answer_scores`` file of a cloze set."""
    return set_file(cloze_set, f"{kind}/{model}")


def scored(config: dict, study: str) -> list[tuple[str, str]]:
    """Each model that fills a cloze set of ``study`` with its predictions of that set
    (:attr:`plmfair.studies.StudyScoring.scored`)."""
    return [
        (m, cloze_scores_file(name, "predictions", m))
        for name, cloze_set in cloze_sets(config).items()
        if cloze_set.study == study
        for m in cloze_set_models(config, name)
    ]


def cloze_set_inputs(config: dict, name: str) -> dict[str, str | list[str]]:
    """What a set's scoring jobs read: its sentences (MozArt's are its answers), and its human
    answers when it has them."""
    cloze_set, answers = cloze_sets(config)[name], annotations_file(name)
    sentences = set_file(name, "sentences") if cloze_set.constructed else answers
    return {"sentences": sentences, "answers": [answers] if cloze_set.answered else []}


def model_cloze_sets(config: dict, model: str) -> list[str]:
    """The cloze sets a model fills."""
    return [name for name in cloze_sets(config) if model in cloze_set_models(config, name)]


def cloze_set_runs(config: dict, name: str) -> list[dict[str, str]]:
    """Each model that fills a cloze set as one record (``model``, ``predictions``, ``answer_scores``)."""
    return [
        {"model": m, **{kind: cloze_scores_file(name, kind, m) for kind in ("predictions", "answer_scores")}}
        for m in cloze_set_models(config, name)
    ]


def cloze_set_models(config: dict, name: str) -> list[str]:
    """The models that fill a cloze set: its own ``models`` list (a corpus's), else its study's
    models, that cover one of its languages."""
    cloze_set = cloze_sets(config)[name]
    specs = model_specs(config)
    own = cloze_corpora(config)[name].get("models") if cloze_set.constructed else None
    candidates = list(own) if own is not None else study_models(config, cloze_set.study)
    return [m for m in candidates if any(specs[m].runs_on(lang) for lang in cloze_set.langs)]


def cloze_set_langs(config: dict, name: str, model: str) -> list[str]:
    """The languages of a cloze set a model is scored on."""
    spec = spec_of(config, model)
    return [lang for lang in cloze_sets(config)[name].langs if spec.runs_on(lang)]


def cloze_set_scoring(config: dict, name: str, model: str) -> dict:
    """What a cloze set's scoring job of a model reads from the config, and nothing else (so that
    other settings do not rerun it): languages, top_k, num_beams (beam-search families only), precision."""
    cloze_set = cloze_sets(config)[name]
    study = config[cloze_set.study]
    return {
        "langs": cloze_set_langs(config, name, model),
        "top_k": study["top_k"],
        "num_beams": num_beams(config, model, cloze_set.study),
        "precision": model_precision(config, model, cloze_set.study),
    }


def answered_sets(config: dict) -> list[str]:
    """The cloze sets with human answers that at least one model fills (they get metrics and tests)."""
    return [name for name, s in cloze_sets(config).items() if s.answered and cloze_set_models(config, name)]


def robust_sets(config: dict) -> list[str]:
    """The cloze sets with answers whose primary verdict the robustness analysis recomputes (robustness.enabled)."""
    return answered_sets(config) if robustness_on(config) else []


RECORDED = ("metrics", "group_disparity", "group_tests")  # each set's files the run record summarises


def recorded_files(config: dict, study: str) -> list[str]:
    """The files the part of ``study`` in the run record summarises (:mod:`plmfair.cloze.record_part`): the
    metrics of each of its sets with answers, then their disparities, then their group tests, then with a
    robustness analysis their verdicts' robustness."""
    sets = [name for name in answered_sets(config) if cloze_sets(config)[name].study == study]
    robust = [set_file(name, "robustness") for name in robust_sets(config) if name in sets]
    return [set_file(name, kind) for kind in RECORDED for name in sets] + robust


def constructed_answered_sets(config: dict) -> list[str]:
    """The cloze sets with human answers that were constructed from a corpus (their answers are
    ingested from the corpus's answer files)."""
    sets = cloze_sets(config)
    return [name for name in answered_sets(config) if sets[name].constructed]


def tsne_sets(config: dict) -> list[str]:
    """The ready-made cloze tests whose predictions are mapped by t-SNE (MozArt's appendix B): those
    ``mozart.tsne.sets`` names, in use and filled by some model, when quadruples are configured
    (``mozart.tsne.sentences``)."""
    tsne = config["mozart"]["tsne"]
    if not tsne["sentences"]:
        return []
    tests = cloze_tests(config)
    return [name for name in tsne["sets"] if name in tests and cloze_set_models(config, name)]


def tsne_models(config: dict, name: str) -> list[str]:
    """The models whose predictions for a ready-made cloze test are mapped by t-SNE."""
    return cloze_set_models(config, name) if name in tsne_sets(config) else []


def cloze_tests(config: dict) -> dict[str, dict]:
    """The ready-made cloze tests in MozArt's format (``datasets.cloze_tests``, MozArt's own among
    them), by name, while the study that scores them (``mozart``) is enabled."""
    if not enabled(config, "mozart"):
        return {}
    return {
        name: entry
        for name, entry in config.get("datasets", {}).get("cloze_tests", {}).items()
        if entry.get("enabled", True)
    }


def ingested_tests(config: dict) -> dict[str, str]:
    """The ready-made cloze tests' answers the study ingests, by name."""
    return {name: annotations_file(name) for name in cloze_tests(config)}


def ingested_answers(config: dict) -> dict[str, str]:
    """The human answers of the constructed sets the study ingests, by name."""
    return {name: annotations_file(name) for name in constructed_answered_sets(config)}


def cloze_test_languages(config: dict, name: str) -> list[str]:
    """The languages read from a ready-made cloze test's archive."""
    return list(cloze_tests(config)[name]["languages"])


def cloze_corpora(config: dict) -> dict[str, dict]:
    """The constructed-set corpora in use (the study and the corpus not switched off)."""
    if not enabled(config, "cloze"):
        return {}
    return {
        name: entry for name, entry in config.get("cloze", {}).get("corpora", {}).items() if entry.get("enabled", True)
    }


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
        return STUDIES[self.study].data.constructs


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


def cloze_set_languages(config: dict, study: str) -> list[str]:
    """The languages of a cloze study's sets."""
    return list(
        dict.fromkeys(
            lang for cloze_set in cloze_sets(config).values() if cloze_set.study == study for lang in cloze_set.langs
        )
    )


# the files of a set with answers whose tests the run's hypotheses adjust (:mod:`plmfair.cloze.questions`)
QUESTION_FILES = ("group_disparity", "group_gaps", "group_tests", "group_winloss")


def question_files(sets: list[str]) -> list[str]:
    """The result files whose tests the run's hypotheses adjust: the group tests of each of ``sets``."""
    return [set_file(name, kind) for name in sets for kind in QUESTION_FILES]


def ready_made_question_files(config: dict) -> list[str]:
    """The group tests of the ready-made cloze tests with answers (study mozart)."""
    return question_files([name for name in answered_sets(config) if name not in constructed_answered_sets(config)])


def constructed_question_files(config: dict) -> list[str]:
    """The group tests of the constructed cloze sets with answers (study cloze)."""
    return question_files(constructed_answered_sets(config))
