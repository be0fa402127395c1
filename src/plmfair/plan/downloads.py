"""Downloads: every file the config declares, and those the enabled studies use."""

from __future__ import annotations

from plmfair.errors import ConfigError
from plmfair.studies import STUDIES

# A run reads each downloaded file through its own link, which its download job outputs; the file itself
# is kept once for every run in the shared store (plmfair.io.download.STORE), which no job outputs, so that
# Snakemake's cleanup of a failed job never removes what another run reads.
DOWNLOADED = "results/downloads/{file}"


def downloaded(file: str) -> str:
    """The run's own path of a downloaded file (:data:`DOWNLOADED`)."""
    return DOWNLOADED.format(file=file)


def download_entries(config: dict) -> dict[str, dict]:
    """Every declared download, keyed by its config location (``datasets.crows_pairs.fr``): every
    mapping with a ``file`` key, wherever it is in the config (models have none)."""
    out: dict[str, dict] = {}

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            if "file" in node:
                out[where] = node
                return
            for key, value in node.items():
                walk(value, f"{where}.{key}" if where else str(key))

    walk({k: v for k, v in config.items() if k != "models"}, "")
    return out


def _download_in_use(config: dict, where: str) -> bool:
    """Whether an enabled study uses the download at config location ``where``: the entry of its
    section (``corpus`` in ``cloze.corpora.<corpus>.text.en``) is among those the plan function of the
    section lists (:attr:`plmfair.studies.StudyData.downloads`; a location no study reads is a
    programming error: the study that reads it declares its section there)."""
    readers = [
        (section, function)
        for study in STUDIES.values()
        for section, function in study.data.downloads.items()
        if where.startswith(section + ".")
    ]
    if not readers:
        raise ConfigError(f"config error at {where}: plmfair does not know what uses a download declared here")
    return any(where[len(section) + 1 :].split(".")[0] in list(function(config)) for section, function in readers)


def active_downloads(config: dict) -> dict[str, dict]:
    """The declared downloads the enabled studies use, keyed by config location."""
    return {where: entry for where, entry in download_entries(config).items() if _download_in_use(config, where)}


def download_source(config: dict, file: str) -> dict:
    """Where a download comes from and what it is: its ``url`` and ``sha256`` (the mirror is only where
    to look first, and stays out, so that moving it reruns nothing)."""
    entry = next(e for e in active_downloads(config).values() if e["file"] == file)
    return {"url": entry.get("url"), "sha256": entry.get("sha256")}
