"""Downloads: every file the config declares, and those the enabled studies use."""

from __future__ import annotations

from plmfair.errors import ConfigError
from plmfair.plan.data import cloze_corpora, cloze_langs, cloze_tests, crows_pairs_ingested


def download_entries(config: dict) -> dict[str, dict]:
    """Every declared download, keyed by its config location (``datasets.crows_pairs.fr``): every
    mapping with a ``file`` key, wherever it is in the config (models have none)."""
    out: dict[str, dict] = {}

    def walk(node, where: str) -> None:
        if isinstance(node, dict):
            if "file" in node:
                out[where] = node
                return
            for key, value in node.items():
                walk(value, f"{where}.{key}" if where else str(key))

    walk({k: v for k, v in config.items() if k != "models"}, "")
    return out


def _download_in_use(config: dict, where: str) -> bool:
    """Whether an enabled study uses the download at config location ``where`` (an unknown location
    is a programming error: a new kind of download needs its rule here)."""
    parts = where.split(".")
    if parts[:2] == ["datasets", "crows_pairs"]:
        return parts[2] in crows_pairs_ingested(config)
    if parts[:2] == ["datasets", "cloze_tests"]:
        return parts[2] in cloze_tests(config)
    if parts[:2] == ["cloze", "corpora"]:
        return parts[2] in cloze_corpora(config)
    if parts[:2] == ["cloze", "spacy"]:
        return any(parts[2] in cloze_langs(config, name) for name in cloze_corpora(config))
    raise ConfigError(f"config error at {where}: plmfair does not know what uses a download declared here")


def active_downloads(config: dict) -> dict[str, dict]:
    """The declared downloads the enabled studies use, keyed by config location."""
    return {where: entry for where, entry in download_entries(config).items() if _download_in_use(config, where)}


def download_source(config: dict, file: str) -> dict:
    """Where a download comes from and what it is: its ``url`` and ``sha256`` (the mirror is only where
    to look first, and stays out, so that moving it reruns nothing)."""
    entry = next(e for e in active_downloads(config).values() if e["file"] == file)
    return {"url": entry.get("url"), "sha256": entry.get("sha256")}
