"""The run record: what ``results/run.json`` summarises and echoes."""

from __future__ import annotations

from plmfair.plan.cloze import (
    answered_sets,
    cloze_scores_file,
    cloze_set_models,
    constructed_answered_sets,
    tsne_sets,
)
from plmfair.plan.construction import corpus, gold_corpora
from plmfair.plan.crows_pairs import crows_pairs_jobs, crows_pairs_scores_file
from plmfair.plan.data import (
    cloze_corpora,
    cloze_langs,
    cloze_sets,
    cloze_tests,
    crows_pairs_data_file,
    crows_pairs_ingested,
)
from plmfair.plan.downloads import active_downloads
from plmfair.plan.model_runs import model_run_files, models_in_use
from plmfair.plan.models import model_manifest
from plmfair.plan.outputs import figures, output_subjects, tables

# what each cloze set with answers and each CrowS-Pairs run derives from its scores, and what a
# constructed corpus derives from its text (the rules' outputs, in results/cloze/<set>/ and results/crows_pairs/)
ANSWERED_SET_FILES = ("metrics", "annotation_scores", "overview", "group_winloss", "group_gaps", "group_effects",
                      "group_tests", "group_disparity", "breakdowns")
CROWS_PAIRS_FILES = ("summary", "mcnemar", "breakdowns")
CROWS_PAIRS_LANGUAGE_FILES = ("language_winloss", "language_effects")
CORPUS_FILES = ("sentences", "construction")


def run_record_inputs(config: dict) -> dict[str, list[str]]:
    """What ``results/run.json`` summarises, by role: the models table and one scoring output per model
    (how each ran), the CrowS-Pairs summary, each cloze set's metrics, disparity and group tests, the
    data files read, and every file the run publishes (hashed into the record, so it is written last).
    Every path names its model or set (the file's stem or folder)."""
    sets = output_subjects(config, "answered_sets")
    return {
        "models": ["results/models.parquet"] if output_subjects(config, "models") else [],
        "model_runs": list(model_run_files(config).values()),
        "crows_pairs": ["results/crows_pairs/summary.parquet"] if output_subjects(config, "crows_pairs") else [],
        "cloze_metrics": [f"results/cloze/{s}/metrics.parquet" for s in sets],
        "cloze_disparity": [f"results/cloze/{s}/group_disparity.parquet" for s in sets],
        "cloze_tests": [f"results/cloze/{s}/group_tests.parquet" for s in sets],
        "data": [f"resources/downloads/{entry['file']}" for entry in active_downloads(config).values()],
        "published": published_files(config),
    }


def published_files(config: dict) -> list[str]:
    """Every file the run publishes or reads back, in ``results/``: the ingested data, the models'
    manifests, every scoring output, every summary, test and breakdown, each corpus's construction,
    the tables and figures. Each is a target of the run (so a lost one is rebuilt) and the record
    lists each with its SHA-256 (``plmfair verify``). A folder output (a corpus's sheets) is listed as
    the folder. The record's own files are not in it."""
    out = [crows_pairs_data_file(ds) for ds in crows_pairs_ingested(config)]
    out += [f"results/data/{name}/annotations.parquet" for name in [*cloze_tests(config), *constructed_answered_sets(config)]]
    out += ["results/data/summary.parquet"] if output_subjects(config, "data") else []
    out += [model_manifest(m) for m in models_in_use(config)]
    out += ["results/models.parquet"] if output_subjects(config, "models") else []
    jobs = crows_pairs_jobs(config)
    out += [crows_pairs_scores_file(ds, m) for ds, m in jobs]
    if jobs:
        out += [f"results/crows_pairs/{name}.parquet" for name in CROWS_PAIRS_FILES]
    if output_subjects(config, "crows_pairs_languages"):
        out += [f"results/crows_pairs/{name}.parquet" for name in CROWS_PAIRS_LANGUAGE_FILES]
    answered = answered_sets(config)
    for name in cloze_sets(config):
        models = cloze_set_models(config, name)
        # a set without answers yet gets an empty answer-scores file per model (its scoring job writes both)
        out += [cloze_scores_file(name, kind, m) for m in models for kind in ("predictions", "answer_scores")]
        if name in answered:
            out += [f"results/cloze/{name}/{kind}.parquet" for kind in ANSWERED_SET_FILES]
    for name in tsne_sets(config):
        out += [f"results/cloze/{name}/tsne/{m}.parquet" for m in cloze_set_models(config, name)]
        out += [f"results/cloze/{name}/tsne.parquet"]
    gold = gold_corpora(config)
    for name in cloze_corpora(config):
        c = corpus(config, name)
        out += [f"results/cloze/{name}/joined.parquet", f"results/cloze/{name}/join_counts.parquet"] if c.joined else []
        out += [f"results/cloze/{name}/tokens/{lang}.parquet" for lang in cloze_langs(config, name)]
        out += [f"results/cloze/{name}/alignments/{lang}.parquet" for lang in cloze_langs(config, name) if lang != c.pivot]
        out += [f"results/cloze/{name}/{kind}.parquet" for kind in CORPUS_FILES]
        out += [f"results/cloze/{name}/alignment_quality.parquet", f"results/cloze/{name}/gold_alignment_links.parquet"
                ] if name in gold else []
        out += [f"results/cloze/{name}/sheets"]
    out += [f"results/tables/{name}.{ext}" for name in tables(config) for ext in ("csv", "md", "tex", "html")]
    out += [f"results/figures/{name}.{ext}" for name in figures(config) for ext in ("png", "pdf")]
    return list(dict.fromkeys(out))


def recorded_config(config: dict) -> dict:
    """The configuration the run record echoes: all of it but the mirror, which says where files were
    looked up, not what they are (moving it reruns nothing, the record included)."""
    return {key: value for key, value in config.items() if key != "mirror"}


def pinned_checksums(config: dict) -> dict[str, str | None]:
    """The SHA-256 the configuration pins for each data file the run reads, by file name (None: unverified)."""
    return {entry["file"]: entry.get("sha256") for entry in active_downloads(config).values()}
