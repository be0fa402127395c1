"""The run's plan: every decision about which jobs a configuration asks for and what each reads, as
functions of the validated config that return names or small records. Torch-free, so Snakemake
builds its DAG without a model library; the rules turn the answers into paths and params.

Each study plans its own jobs and paths in its package (its rule files import its plan module) and
which models score what is :mod:`plmfair.scoring.model_settings`; this package composes the studies for a
run through their records (:data:`plmfair.studies.STUDIES`): :mod:`~plmfair.plan.model_runs`,
:mod:`~plmfair.plan.downloads`, :mod:`~plmfair.plan.targets` (tables, figures, report categories, one
setting) and :mod:`~plmfair.plan.published` (every published file, the record's inputs). The shared rule
files call its functions as ``plan.<name>``: this module re-exports those, and what the studies' rules
share (the models' plan).
"""

from __future__ import annotations

from plmfair.plan.downloads import (
    DOWNLOADED,
    active_downloads,
    download_source,
    downloaded,
)
from plmfair.plan.model_runs import (
    model_languages,
    model_run_files,
)
from plmfair.plan.published import (
    hypothesis_files,
    ingested_texts,
    pinned_checksums,
    published_files,
    recorded_config,
    recorded_files,
    run_record_inputs,
)
from plmfair.plan.targets import (
    CAPTIONS,
    DATA_SUMMARY,
    FIGURE_PNG,
    MODELS_TABLE,
    RUN_RECORD,
    RUN_RECORD_HTML,
    TABLE_HTML,
    caption_models,
    data_summary_inputs,
    drawn_figures,
    output_jobs,
    report_category,
    setting,
    subject_category,
    tables,
)
from plmfair.scoring.model_settings import (
    MODEL_MANIFEST,
    built_models,
    hub_fetch,
    hub_store,
    hub_stores,
    model_folder,
    model_gpus,
    model_loading,
    model_precision,
    model_specs,
    num_beams,
    tiny_model_build,
    workflow_managed,
)
from plmfair.studies import HYPOTHESES

__all__ = [
    "HYPOTHESES",
    "DATA_SUMMARY",
    "MODELS_TABLE",
    "RUN_RECORD",
    "RUN_RECORD_HTML",
    "TABLE_HTML",
    "FIGURE_PNG",
    "DOWNLOADED",
    "active_downloads",
    "downloaded",
    "hypothesis_files",
    "data_summary_inputs",
    "ingested_texts",
    "built_models",
    "caption_models",
    "CAPTIONS",
    "output_jobs",
    "download_source",
    "drawn_figures",
    "hub_fetch",
    "hub_store",
    "hub_stores",
    "model_folder",
    "model_gpus",
    "model_languages",
    "model_loading",
    "MODEL_MANIFEST",
    "model_precision",
    "model_run_files",
    "model_specs",
    "num_beams",
    "pinned_checksums",
    "published_files",
    "recorded_config",
    "report_category",
    "subject_category",
    "recorded_files",
    "run_record_inputs",
    "setting",
    "tables",
    "tiny_model_build",
    "workflow_managed",
]
