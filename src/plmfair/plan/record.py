"""The run record: what ``results/run.json`` summarises and echoes."""

from __future__ import annotations

from plmfair.plan.downloads import active_downloads
from plmfair.plan.model_runs import model_run_files
from plmfair.plan.outputs import output_subjects


def run_record_inputs(config: dict) -> dict[str, list[str]]:
    """What ``results/run.json`` summarises, by role: the models table and one scoring output per model
    (how each ran), the CrowS-Pairs summary, each cloze set's metrics, disparity and group tests, and
    the data files read. Every path names its model or set (the file's stem or folder)."""
    sets = output_subjects(config, "answered_sets")
    return {
        "models": ["results/models.parquet"] if output_subjects(config, "models") else [],
        "model_runs": list(model_run_files(config).values()),
        "crows_pairs": ["results/crows_pairs/summary.parquet"] if output_subjects(config, "crows_pairs") else [],
        "cloze_metrics": [f"results/cloze/{s}/metrics.parquet" for s in sets],
        "cloze_disparity": [f"results/cloze/{s}/group_disparity.parquet" for s in sets],
        "cloze_tests": [f"results/cloze/{s}/group_tests.parquet" for s in sets],
        "data": [f"resources/downloads/{entry['file']}" for entry in active_downloads(config).values()],
    }


def recorded_config(config: dict) -> dict:
    """The configuration the run record echoes: all of it but the mirror, which says where files were
    looked up, not what they are (moving it reruns nothing, the record included)."""
    return {key: value for key, value in config.items() if key != "mirror"}


def pinned_checksums(config: dict) -> dict[str, str | None]:
    """The SHA-256 the configuration pins for each data file the run reads, by file name (None: unverified)."""
    return {entry["file"]: entry.get("sha256") for entry in active_downloads(config).values()}
