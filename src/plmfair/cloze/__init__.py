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

from functools import partial
from typing import TYPE_CHECKING

from plmfair.cloze import config_checks, outputs, plan
from plmfair.cloze.construction import plan as construction_plan
from plmfair.resources import SCORING, Need
from plmfair.studies import CLOZE_TASK, DataChoice, Study

if TYPE_CHECKING:  # mypy checks the study's parts against their contracts; at run time they load lazily
    from plmfair.cloze import record_part, run_changes
    from plmfair.rendering.record_rows import RecordPartModule
    from plmfair.studies import ComparePart

    _record: RecordPartModule = record_part
    _compare: ComparePart = run_changes


def _own(subjects: dict) -> dict:
    """The tables and figures of the cloze outputs made for these kinds of subject."""
    return {
        "tables": tuple(t for t in outputs.TABLES if t.subjects in subjects),
        "figures": tuple(f for f in outputs.FIGURES if f.subjects in subjects),
    }


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
    constructs=False,
    data="ready-made cloze tests in MozArt's format, sentences with the answers of annotator groups "
    "(datasets.cloze_tests; MozArt's own is mozart)",
    own_jobs=("ingest_cloze_test", "tsne_vectors", "tsne"),
    rules=("mozart_common.smk", "mozart.smk"),
    outputs=("results/data/{name}/", "results/cloze/{name}/"),
    subjects=_MOZART_SUBJECTS,
    downloads={"datasets.cloze_tests": plan.cloze_tests},
    languages=plan.cloze_set_languages,
    published=published,
    question_files=plan.ready_made_question_files,
    questions="plmfair.cloze.questions:mozart_questions",
    answered_in=ANSWERED_IN,
    scored=partial(plan.scored, study="mozart"),
    recorded=partial(plan.recorded_files, study="mozart"),
    record="plmfair.cloze.record_part",
    compare="plmfair.cloze.run_changes",
    choices=(DataChoice("a ready-made cloze test", ("datasets", "cloze_tests"), languages=lambda e: e["languages"]),),
    check=config_checks.check_mozart,
    moved=config_checks.MOZART_MOVED,
    ingested=plan.ingested_tests,
    counts="plmfair.cloze.data_counts:counts",
    labels="plmfair.cloze.measures:SCORE_LABELS",
    needs={"tsne_vectors": SCORING},
    **_own(_MOZART_SUBJECTS),
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
    constructs=True,
    data="cloze sets constructed from multi-way parallel text, with human answers when given (cloze.corpora)",
    own_jobs=(
        "cloze_join_bitexts",
        "cloze_tokenize",
        "build_spacy_pipelines",
        "cloze_align",
        "cloze_select",
        "cloze_sheets",
        "ingest_cloze_answers",
        "cloze_alignment_quality",
    ),
    rules=("cloze_common.smk", "cloze.smk"),
    outputs=("results/spacy/", "results/cloze/{name}/", "results/data/{name}/"),
    subjects=_CLOZE_SUBJECTS,
    downloads={"cloze.corpora": plan.cloze_corpora, "cloze.spacy": plan.corpus_languages},
    languages=plan.cloze_set_languages,
    published=published,
    question_files=plan.constructed_question_files,
    questions="plmfair.cloze.questions:cloze_questions",
    answered_in=ANSWERED_IN,
    scored=partial(plan.scored, study="cloze"),
    recorded=partial(plan.recorded_files, study="cloze"),
    record="plmfair.cloze.record_part",
    compare="plmfair.cloze.run_changes",
    choices=(DataChoice("a cloze corpus", ("cloze", "corpora"), languages=plan.corpus_langs, own_models=True),),
    check=config_checks.check_corpora,
    ingested=plan.ingested_answers,
    pipelines=construction_plan.spacy_packages,
    labels="plmfair.cloze.measures:SCORE_LABELS",
    needs=CONSTRUCTION_NEEDS,
    **_own(_CLOZE_SUBJECTS),
)
