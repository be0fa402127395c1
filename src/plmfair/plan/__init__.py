"""The study plan: every decision about which jobs a configuration asks for and what each job
reads, as functions of the validated config (defaults filled in by the JSON schema) that return
names or small typed records (:class:`ClozeSet`, :class:`Corpus`, :class:`AlignmentRoute`,
:class:`GoldSet`, :class:`SpacyPipeline`, :class:`Table`). ``workflow/rules/common.smk`` only
turns these into paths; a job's ``params`` are what a plan function returns for it and nothing
more, so that a change reruns exactly the jobs it changes. Validation is :mod:`plmfair.config`
(which reads the plan; the plan never imports it). Torch-free, so Snakemake builds its DAG
without importing a model library.

Model lists. ``mozart.models``, ``crows_pairs.models`` and ``cloze.models`` default to
every declared model that fits the study: its family can be scored on the study
(:data:`plmfair.scoring.FAMILIES`) and its ``languages`` (empty = all) meet at least one
language of the study's data. An explicit list wins; a model on it still runs only on
the languages it covers.

A package by the plan's sections, each a module that reads only the sections before it:
:mod:`~plmfair.cloze.plan` (data sets, cloze tests, corpora, cloze sets), :mod:`~plmfair.scoring.model_plan`,
:mod:`~plmfair.crows_pairs.plan` and :mod:`~plmfair.cloze.plan` (each kind of study's jobs),
:mod:`~plmfair.cloze.construction_plan`, :mod:`~plmfair.plan.model_runs`, :mod:`~plmfair.plan.downloads`,
:mod:`~plmfair.plan.targets` (tables, figures, report categories) and :mod:`~plmfair.plan.published`.
The rules and the library call every function as ``plan.<name>``: this module re-exports them.
The study registry (:data:`plmfair.studies.STUDIES`) names the plan functions it needs by module
(``"plmfair.cloze.plan:cloze_tests"``), and a study added later may keep its plan module to itself
(its rule file imports it), so neither is re-exported here.
"""

from __future__ import annotations

from plmfair.cloze.construction_plan import (
    GOLD_FILES,
    AlignmentRoute,
    Corpus,
    GoldSet,
    SpacyPipeline,
    alignment_route,
    bitext_join,
    corpus,
    gold_corpora,
    gold_langs,
    gold_readings,
    gold_sets,
    spacy_lexicon,
    spacy_packages,
    spacy_pipeline,
    text_reading,
)
from plmfair.cloze.plan import (
    ClozeSet,
    answered_sets,
    cloze_corpora,
    cloze_langs,
    cloze_scores_file,
    cloze_set_langs,
    cloze_set_models,
    cloze_set_runs,
    cloze_set_scoring,
    cloze_sets,
    cloze_test_languages,
    cloze_tests,
    constructed_answered_sets,
    corpus_langs,
    tsne_models,
    tsne_sets,
)
from plmfair.crows_pairs.plan import (
    crows_pairs_data_file,
    crows_pairs_ingested,
    crows_pairs_jobs,
    crows_pairs_langs,
    crows_pairs_language_jobs,
    crows_pairs_protocol,
    crows_pairs_reading,
    crows_pairs_runs,
    crows_pairs_scores_file,
    crows_pairs_sets,
)
from plmfair.io.download import DOWNLOAD_KEYS
from plmfair.plan.downloads import (
    active_downloads,
    download_entries,
    download_source,
)
from plmfair.plan.model_runs import (
    model_languages,
    model_run_files,
    model_runs,
    models_in_use,
)
from plmfair.plan.published import (
    pinned_checksums,
    published_files,
    recorded_config,
    run_record_inputs,
)
from plmfair.plan.targets import (
    DATA_SUMMARY,
    MODELS_TABLE,
    Table,
    caption_models,
    cloze_set_category,
    figure_category,
    figures,
    output_subjects,
    report_category,
    setting,
    tables,
)
from plmfair.scoring.model_plan import (
    LOADING_KEYS,
    built_models,
    fits,
    hub_fetch,
    hub_models,
    hub_store,
    hub_store_names,
    hub_stores,
    model_folder,
    model_gpus,
    model_loading,
    model_manifest,
    model_precision,
    model_specs,
    num_beams,
    spec_of,
    study_models,
    tiny_model_build,
    workflow_managed,
)
from plmfair.studies import STUDIES, enabled, study_languages

__all__ = [
    "DATA_SUMMARY",
    "MODELS_TABLE",
    "AlignmentRoute",
    "ClozeSet",
    "Corpus",
    "DOWNLOAD_KEYS",
    "GOLD_FILES",
    "GoldSet",
    "LOADING_KEYS",
    "STUDIES",
    "SpacyPipeline",
    "Table",
    "active_downloads",
    "alignment_route",
    "answered_sets",
    "bitext_join",
    "built_models",
    "caption_models",
    "cloze_corpora",
    "cloze_langs",
    "cloze_scores_file",
    "cloze_set_category",
    "cloze_set_langs",
    "cloze_set_models",
    "cloze_set_runs",
    "cloze_set_scoring",
    "cloze_sets",
    "cloze_test_languages",
    "cloze_tests",
    "constructed_answered_sets",
    "corpus",
    "corpus_langs",
    "crows_pairs_data_file",
    "crows_pairs_ingested",
    "crows_pairs_jobs",
    "crows_pairs_langs",
    "crows_pairs_language_jobs",
    "crows_pairs_protocol",
    "crows_pairs_reading",
    "crows_pairs_runs",
    "crows_pairs_scores_file",
    "crows_pairs_sets",
    "download_entries",
    "download_source",
    "enabled",
    "figure_category",
    "figures",
    "fits",
    "gold_corpora",
    "gold_langs",
    "gold_readings",
    "gold_sets",
    "hub_fetch",
    "hub_models",
    "hub_store",
    "hub_store_names",
    "hub_stores",
    "model_folder",
    "model_manifest",
    "model_gpus",
    "model_languages",
    "model_loading",
    "model_precision",
    "model_run_files",
    "model_runs",
    "model_specs",
    "models_in_use",
    "num_beams",
    "output_subjects",
    "pinned_checksums",
    "recorded_config",
    "report_category",
    "published_files",
    "run_record_inputs",
    "spacy_lexicon",
    "spacy_packages",
    "spacy_pipeline",
    "spec_of",
    "study_languages",
    "study_models",
    "setting",
    "tables",
    "text_reading",
    "tiny_model_build",
    "tsne_models",
    "tsne_sets",
    "workflow_managed",
]
