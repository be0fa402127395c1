"""The cloze studies: ready-made annotated cloze tests in MozArt's format (``mozart``) and cloze sets
constructed from multi-way parallel text (``cloze``); both go through the same chain per set.

Its modules: :mod:`~plmfair.cloze.annotations` (human answers), :mod:`~plmfair.cloze.construction`
(a package, a module per construction stage), :mod:`~plmfair.cloze.scoring_job` and
:mod:`~plmfair.cloze.vectors` (torch), :mod:`~plmfair.cloze.schemas` (files between jobs),
:mod:`~plmfair.cloze.metrics` (P@k, MRR, correlations, sigma_gd), :mod:`~plmfair.cloze.group_tests`,
:mod:`~plmfair.cloze.tsne`, :mod:`~plmfair.cloze.breakdowns`, :mod:`~plmfair.cloze.plan` and
:mod:`~plmfair.cloze.construction.plan` (jobs and paths), :mod:`~plmfair.cloze.outputs`,
:mod:`~plmfair.cloze.tables`, :mod:`~plmfair.cloze.figures`. Rules: ``workflow/rules/mozart.smk``,
``cloze.smk`` and the per-set chain ``cloze_sets.smk``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING

from plmfair.cloze import config_checks, outputs, plan
from plmfair.cloze.construction import plan as construction_plan
from plmfair.resources import SCORING, Need
from plmfair.studies import (
    CLOZE_TASK,
    ComparePart,
    DataChoice,
    RecordPartModule,
    Study,
    StudyConfig,
    StudyData,
    StudyHypotheses,
    StudyOutputs,
    StudyRecord,
    StudyScoring,
    StudyWorkflow,
)

if TYPE_CHECKING:
    import pandas as pd


# Its hooks that need pandas or more import their module when they are called (the comment on each import):
# every job reads the registry, so the package itself stays light.
def count_data(frames: Mapping[str, pd.DataFrame]) -> list[tuple[str, str, str, int]]:
    """What is in a ready-made cloze test's answers (:func:`plmfair.cloze.data_counts.counts`)."""
    from plmfair.cloze import data_counts  # loaded when called

    return data_counts.counts(frames)


def mozart_questions(results: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every test the ready-made cloze tests' tables mark (:func:`plmfair.cloze.questions.mozart_questions`)."""
    from plmfair.cloze import questions  # loaded when called

    return questions.mozart_questions(results)


def cloze_questions(results: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every test the constructed cloze sets' tables mark (:func:`plmfair.cloze.questions.cloze_questions`)."""
    from plmfair.cloze import questions  # loaded when called

    return questions.cloze_questions(results)


def score_labels() -> Mapping[str, str]:
    """The names of the per-annotation scores in tables and figures (:data:`plmfair.cloze.measures.SCORE_LABELS`)."""
    from plmfair.cloze.measures import SCORE_LABELS  # loaded when called

    return SCORE_LABELS


def record_module() -> RecordPartModule:
    """The cloze studies' part of the run record (:mod:`plmfair.cloze.record_part`)."""
    from plmfair.cloze import record_part  # loaded when called

    return record_part


def compare_module() -> ComparePart:
    """The cloze studies' part of ``plmfair compare`` (:mod:`plmfair.cloze.run_changes`)."""
    from plmfair.cloze import run_changes  # loaded when called

    return run_changes


def _outputs(folders: tuple[str, ...], subjects: dict) -> StudyOutputs:
    """A cloze study's outputs: its folders and the tables and figures of the cloze outputs made for its kinds
    of subject."""
    return StudyOutputs(
        folders=folders,
        subjects=subjects,
        published=published,
        tables=tuple(t for t in outputs.TABLES if t.subjects in subjects),
        figures=tuple(f for f in outputs.FIGURES if f.subjects in subjects),
        labels=score_labels,
        answered_in=ANSWERED_IN,
    )


def published(config: dict) -> list[str]:
    """The cloze studies' files a run publishes (:func:`plmfair.plan.published_files`): the answers
    ingested, each model's scores of each set, what a set with answers derives from them (and its robustness
    analysis), the t-SNE vectors and maps, and each constructed corpus's stages."""
    out = [plan.annotations_file(name) for name in [*plan.cloze_tests(config), *plan.constructed_answered_sets(config)]]
    answered, robust = plan.answered_sets(config), plan.robust_sets(config)
    for name in plan.cloze_sets(config):
        models = plan.cloze_set_models(config, name)
        # a set without answers yet gets an empty answer-scores file per model (its scoring job writes both)
        out += [plan.cloze_scores_file(name, kind, m) for m in models for kind in ("predictions", "answer_scores")]
        out += [plan.set_file(name, kind) for kind in plan.ANSWERED_SET_FILES] if name in answered else []
        out += [plan.set_file(name, kind) for kind in plan.ROBUSTNESS_SET_FILES] if name in robust else []
    for name in plan.tsne_sets(config):
        out += [plan.set_file(name, f"tsne/{m}") for m in plan.cloze_set_models(config, name)]
        out += [plan.set_file(name, "tsne")]
    gold = construction_plan.gold_corpora(config)
    for name in plan.cloze_corpora(config):
        c, langs = construction_plan.corpus(config, name), plan.cloze_langs(config, name)
        out += [plan.set_file(name, "joined"), plan.set_file(name, "join_counts")] if c.joined else []
        out += [plan.set_file(name, f"tokens/{lang}") for lang in langs]
        out += [plan.set_file(name, f"alignments/{lang}") for lang in langs if lang != c.pivot]
        out += [plan.set_file(name, kind) for kind in plan.CORPUS_FILES]
        out += (
            [plan.set_file(name, "alignment_quality"), plan.set_file(name, "gold_alignment_links")]
            if name in gold
            else []
        )
        out += [plan.sheets_folder(name)]
    return out


# a cloze set's primary answer (sigma_gd of MRR, languages pooled): its disparity table and Figure 1 of MozArt
ANSWERED_IN = {"tables": ("{subject}_disparity",), "figures": ("{subject}_mrr",)}
_MOZART_SUBJECTS = {"answered_sets": plan.answered_sets, "robust_sets": plan.robust_sets, "tsne": plan.tsne_sets}
MOZART = Study(
    name="mozart",
    title="MozArt",
    task=CLOZE_TASK,
    data=StudyData(
        described="ready-made cloze tests in MozArt's format, sentences with the answers of annotator groups "
        "(datasets.cloze_tests; MozArt's own is mozart)",
        downloads={"datasets.cloze_tests": plan.cloze_tests},
        choices=(
            DataChoice("a ready-made cloze test", ("datasets", "cloze_tests"), languages=lambda e: e["languages"]),
        ),
        ingested=plan.ingested_tests,
        counts=count_data,
    ),
    workflow=StudyWorkflow(
        rules=("ingest_cloze_test", "tsne_vectors", "tsne"),
        files=("mozart_common.smk", "mozart.smk"),
        needs={"tsne_vectors": SCORING},
    ),
    scoring=StudyScoring(languages=plan.cloze_set_languages, scored=partial(plan.scored, study="mozart")),
    outputs=_outputs(("results/data/{name}/", "results/cloze/{name}/"), _MOZART_SUBJECTS),
    hypotheses=StudyHypotheses(files=plan.ready_made_question_files, questions=mozart_questions),
    record=StudyRecord(recorded=partial(plan.recorded_files, study="mozart"), part=record_module),
    compare=compare_module,
    config=StudyConfig(check=config_checks.check_mozart, moved=config_checks.MOZART_MOVED),
)

# Construction's fits, from make bench-cloze on corpora of three shapes (docs/performance.md, "Declared
# memory across corpus shapes"): at 1,000,000 lines join peaks at 2,110 MB for 610 MB of text in, tokenize
# at 2,244 MB for 234 MB; align (eflomal) at 856 MB for 61 MB in with the demo grammar's vocabulary and
# 1,461 MB for 93 MB with 300 times as many words, so its slope is twice the fit's (a real corpus has a
# larger vocabulary still); select at 1,533 MB for 169 MB in, 977 MB for 17 MB at 100,000 lines (spaCy's
# French pipeline is most of its base)
CONSTRUCTION_NEEDS = {
    "cloze_join_bitexts": Need(1000, 3.5, 30, 20.0),
    "cloze_tokenize": Need(1000, 12.0, 60, 200.0),
    "cloze_align": Need(1500, 12.0, 60, 1500.0),
    "cloze_select": Need(1500, 6.0, 60, 300.0),
    "cloze_alignment_quality": Need(1500, 12.0, 60, 1500.0),
    "build_spacy_pipelines": Need(1000, 4.0, 10),
}
_CLOZE_SUBJECTS = {
    "answered_sets": plan.answered_sets,
    "robust_sets": plan.robust_sets,
    "corpora": plan.cloze_corpora,
    "gold_corpora": construction_plan.gold_corpora,
}
CLOZE = Study(
    name="cloze",
    title="Cloze sets",
    task=CLOZE_TASK,
    data=StudyData(
        described="cloze sets constructed from multi-way parallel text, with human answers when given (cloze.corpora)",
        constructs=True,
        downloads={"cloze.corpora": plan.cloze_corpora, "cloze.spacy": plan.corpus_languages},
        choices=(DataChoice("a cloze corpus", ("cloze", "corpora"), languages=plan.corpus_langs, own_models=True),),
        ingested=plan.ingested_answers,
        pipelines=construction_plan.spacy_packages,
    ),
    workflow=StudyWorkflow(
        rules=(
            "cloze_join_bitexts",
            "cloze_tokenize",
            "build_spacy_pipelines",
            "cloze_align",
            "cloze_select",
            "cloze_sheets",
            "ingest_cloze_answers",
            "cloze_alignment_quality",
        ),
        files=("cloze_common.smk", "cloze.smk"),
        needs=CONSTRUCTION_NEEDS,
    ),
    scoring=StudyScoring(languages=plan.cloze_set_languages, scored=partial(plan.scored, study="cloze")),
    outputs=_outputs(("results/spacy/", "results/cloze/{name}/", "results/data/{name}/"), _CLOZE_SUBJECTS),
    hypotheses=StudyHypotheses(files=plan.constructed_question_files, questions=cloze_questions),
    record=StudyRecord(recorded=partial(plan.recorded_files, study="cloze"), part=record_module),
    compare=compare_module,
    config=StudyConfig(check=config_checks.check_corpora),
)
