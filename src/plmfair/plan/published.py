"""The run record: what ``results/run.json`` summarises and echoes."""

from __future__ import annotations

from plmfair.plan.downloads import active_downloads, downloaded
from plmfair.plan.model_runs import model_run_files, models_in_use
from plmfair.plan.targets import (
    DATA_SUMMARY,
    MODELS_TABLE,
    figures,
    ingested,
    ingesting,
    output_subjects,
    tables,
)
from plmfair.scoring.model_settings import model_manifest
from plmfair.studies import HYPOTHESES, STUDIES


def run_record_inputs(config: dict) -> dict[str, list[str]]:
    """What ``results/run.json`` summarises, by role: the models table and one scoring output per model
    (how each ran), the files each study's part summarises (:func:`recorded_files`), the run's analysis
    plan, the data files read, and every file the run publishes (hashed into the record, so it is written
    last). Every path names its model or set (the file's stem or folder)."""
    return {
        "models": [MODELS_TABLE] if output_subjects(config, "models") else [],
        "model_runs": list(model_run_files(config).values()),
        "studies": [path for paths in recorded_files(config).values() for path in paths],
        "hypotheses": [HYPOTHESES] if hypothesis_files(config) else [],
        "data": [downloaded(entry["file"]) for entry in active_downloads(config).values()],
        "published": published_files(config),
    }


def recorded_files(config: dict) -> dict[str, list[str]]:
    """Per study with a part in the run record, the files that part summarises (its ``recorded``)."""
    return {name: study.record.recorded(config) for name, study in STUDIES.items() if study.record}


def ingested_texts(config: dict) -> list[str]:
    """Every ingested data set that holds text, for the demo's tiny models to learn their vocabulary and
    their gaps from."""
    return [path for _, study in ingesting() for path in ingested(study, config).values()]


def hypothesis_files(config: dict) -> dict[str, list[str]]:
    """Per study, the result files whose tests the run's hypotheses adjust (its ``hypotheses.files``);
    the studies without any are left out."""
    files = {name: study.hypotheses.files(config) for name, study in STUDIES.items() if study.hypotheses}
    return {name: paths for name, paths in files.items() if paths}


def published_files(config: dict) -> list[str]:
    """Every file the run publishes or reads back, in ``results/``: the ingested data, the models'
    manifests, every scoring output, every summary, test and breakdown, each corpus's construction,
    the tables and figures. Each is an input of the run record, and the record lists each with its SHA-256
    (``plmfair verify``); ``plmfair run`` rebuilds a lost or altered one first (Snakemake alone does not remake
    a lost input of an up-to-date record). A folder output (a
    corpus's sheets) is listed as the folder. The record's own files are not in it."""
    out = [DATA_SUMMARY] if output_subjects(config, "data") else []
    out += [model_manifest(m) for m in models_in_use(config)]
    out += [MODELS_TABLE] if output_subjects(config, "models") else []
    out += [path for study in STUDIES.values() for path in study.outputs.published(config)]
    out += [HYPOTHESES] if hypothesis_files(config) else []
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
