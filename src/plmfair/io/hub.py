"""Fetch a Hugging Face Hub model at a pinned revision into a local folder; torch-free.

A scoring job never downloads: the workflow's ``fetch_model`` rule calls :func:`fetch_model`
once per ``hf_id`` model, which resolves the configured ``revision`` (a commit hash, tag or
branch) to a commit through ``huggingface_hub.snapshot_download`` (the shared Hub cache, so
``HF_HOME``/``HF_HUB_CACHE`` and ``HF_HUB_OFFLINE`` work as everywhere else), links the
weights and tokenizer files into the run's ``results/models/<hf_id>@<revision>`` (hard links into the
Hub cache, copies across file systems; :func:`plmfair.plan.hub_store`) and records where they came from
in :data:`SOURCE_FILE` beside them. The model's manifest (:func:`plmfair.scoring.specs.folder_manifest`)
adds each file's SHA-256, and every result carries the commit and a digest of the files.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import socket
from pathlib import Path
from urllib.parse import urlparse

from plmfair.errors import ModelError
from plmfair.io.atomic import atomic_dir

log = logging.getLogger(__name__)

SOURCE_FILE = ".plmfair-source.json"
# what scoring reads: configs, tokenizer files (json, sentencepiece, vocab/merges) and weights
FILE_PATTERNS = ["*.json", "*.safetensors", "*.model", "*.txt", "*.tiktoken", "*spiece*", "*.vocab"]
PICKLE_PATTERNS = ["*.bin", "*.pt", "*.pth"]
COMMIT = re.compile(r"^[0-9a-f]{40}$")
HUB = "https://huggingface.co"


def reachable(url: str, *, timeout: float = 3.0) -> bool:
    """Whether a TCP connection to the URL's host opens within ``timeout`` (one attempt)."""
    parts = urlparse(url)
    host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    if not host:
        return False
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def hub_reachable() -> bool:
    """False under ``HF_HUB_OFFLINE``, else whether the Hub's host answers."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    return reachable(os.environ.get("HF_ENDPOINT", HUB))


def fetch_elsewhere(hf_id: str, revision: str | None = None) -> str:
    """What to do about a model neither in the Hub cache nor reachable: the sentence every such refusal ends in,
    before its own other way (a folder of the files)."""
    at = f" --revision {revision}" if revision else ""
    return f"Fetch it where there is network (`hf download {hf_id}{at}`) and copy the cache here (HF_HOME)"


def _link_or_copy(src: Path, dst: Path) -> None:
    """A hard link into the Hub cache where the file system allows it (no second copy), else a copy."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src.resolve(), dst)
    except OSError:
        shutil.copy2(src, dst)


def fetch_model(
    *, name: str, hf_id: str, revision: str | None, out_dir: str | os.PathLike, allow_pickle: bool = False
) -> dict:
    """Download (or take from the Hub cache) ``hf_id`` at ``revision`` and write its files to
    ``out_dir``; return the source record (id, revision asked for, commit resolved, files)."""
    # only when the Hub or its cache is asked
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    patterns = FILE_PATTERNS + (PICKLE_PATTERNS if allow_pickle else [])
    where = f"models.{name}"
    try:
        # offline, the cache answers at once instead of the Hub client's retries of a DNS failure
        snapshot = Path(
            snapshot_download(
                repo_id=hf_id, revision=revision, allow_patterns=patterns, local_files_only=not hub_reachable()
            )
        )
    except RevisionNotFoundError:
        raise ModelError(
            f"{where}.revision: {hf_id} has no revision {revision!r}; give a commit hash, tag or branch "
            f"of the repository"
        ) from None
    except (RepositoryNotFoundError, GatedRepoError) as exc:
        raise ModelError(
            f"{where}.hf_id: {hf_id} cannot be fetched ({type(exc).__name__}): check the id, or log in "
            f"with `hf auth login` for a gated model"
        ) from None
    except LocalEntryNotFoundError:
        raise ModelError(
            f"{where}: {hf_id} at revision {revision or 'main'} is not in the Hub cache and the Hub cannot "
            f"be reached. {fetch_elsewhere(hf_id, revision)}, or download it to a folder and set {where}.path"
        ) from None
    commit = snapshot.name
    if not COMMIT.match(commit):
        raise ModelError(f"{where}: the Hub cache gave {snapshot}, not a snapshot folder named by its commit")
    files = sorted(p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file())
    if not any(f.endswith(".safetensors") for f in files) and not allow_pickle:
        raise ModelError(
            f"{where}: {hf_id} at {commit} has no safetensors weights; plmfair loads safetensors only, "
            f"because unpickling a file can run code. If you trust the files, set {where}.allow_pickle: "
            f"true"
        )
    if revision is None or revision != commit:
        log.warning(
            "model %s: %s revision %s resolved to commit %s; UNPINNED: set models.%s.revision: %s to tie "
            "results to these weights",
            name,
            hf_id,
            revision or "(default branch)",
            commit,
            name,
            commit,
        )
    record = {"hf_id": hf_id, "revision": revision, "commit": commit, "files": files}
    with atomic_dir(out_dir) as tmp:
        for rel in files:
            _link_or_copy(snapshot / rel, tmp / rel)
        (tmp / SOURCE_FILE).write_text(json.dumps(record, indent=1) + "\n")
    log.info("model %s: %s at commit %s, %d files in %s", name, hf_id, commit, len(files), out_dir)
    return record


def source_record(folder: str | os.PathLike) -> dict:
    """Where a fetched folder came from (empty for a folder the workflow did not fetch)."""
    path = Path(folder) / SOURCE_FILE
    return json.loads(path.read_text()) if path.is_file() else {}
