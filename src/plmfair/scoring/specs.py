"""Model entries of the config (``models.<name>``) as specs; torch-free.

An entry has ``hf_id`` (a Hugging Face id) or ``path`` (a local folder), ``family`` (a
name registered in :data:`plmfair.scoring.FAMILIES`: ``mlm``, ``seq2seq`` or ``causal``),
optional ``revision``, ``uncased`` (lower-case input first, as the CrowS-Pairs protocol
does for uncased models), ``languages`` (the data languages it is evaluated on; empty
= all), ``allow_pickle`` (accept PyTorch pickle weights), ``precision`` (this model's
precision in every study, over the study's), ``device_map``/``max_memory`` (spread a model
larger than one GPU over several devices, accelerate) and ``gpus`` (GPUs per scoring job).
Loading is :func:`plmfair.scoring.loader.load`.

A scoring job loads every model from a local folder named by the model's manifest
(:func:`folder_manifest`, the run's ``results/manifests/<name>.json``): a ``path`` model's own
folder, the run's ``results/models/<name>`` where the workflow built it, or the folder under
the run's ``results/models/`` folder it fetched the ``hf_id`` at its revision into (:mod:`plmfair.io.hub`;
:func:`plmfair.plan.hub_store`). The manifest's commit and digest go into every result, and a
folder whose files no longer match it, byte for byte, is refused (:func:`spec_from_entry`).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from plmfair.errors import ConfigError, ModelError, first_few
from plmfair.io.atomic import is_as_listed, sha256_of
from plmfair.io.hub import source_record
from plmfair.scoring import get_family

if TYPE_CHECKING:  # pandas for the models table's type only: the plan reads this module
    import pandas as pd


@dataclass(frozen=True)
class ModelSpec:
    """One model entry of the config."""

    name: str
    family: str
    hf_id: str | None = None
    path: str | None = None
    revision: str | None = None
    uncased: bool = False
    languages: tuple[str, ...] = field(default_factory=tuple)
    allow_pickle: bool = False
    precision: str | None = None
    device_map: str | None = None
    max_memory: dict | None = None
    gpus: int = 1
    # set from the manifest in a scoring job: the folder loaded, the Hub commit, the files' digest
    local_dir: str | None = None
    commit: str | None = None
    files_sha256: str | None = None

    @property
    def source(self) -> str:
        """What is loaded: the local folder when there is one, else the Hub id."""
        return self.local_dir or self.path or self.hf_id  # type: ignore[return-value]

    @property
    def is_local(self) -> bool:
        return bool(self.local_dir or self.path)

    def runs_on(self, lang: str) -> bool:
        return not self.languages or lang in self.languages

    def metadata(self) -> dict:
        """What the config and the manifest say of the model (the ``model_*`` columns of
        :data:`MODEL_METADATA_SCHEMA` that need no loaded weights)."""
        return {
            "model": self.name,
            "model_source": self.hf_id or self.path or self.local_dir,
            "model_revision": self.revision,
            "model_commit": self.commit,
            "model_files_sha256": self.files_sha256,
            "model_family": self.family,
            "model_uncased": self.uncased,
        }


# Model metadata next to every score (XTREME-R): the run metadata of every scoring output, the
# columns of every summary Parquet and of results/tables/models.*.
MODEL_METADATA_SCHEMA = {
    "model_family": "mlm, seq2seq or causal",
    "model_parameters": "parameters counted from the loaded weights (shared tensors once)",
    "model_layers": "transformer layers (encoder + decoder for seq2seq models)",
    "model_hidden_size": "hidden size",
    "model_vocab_size": "rows of the output embedding (the vocabulary the model predicts over)",
    "model_tokenizer": "tokenizer kind (WordPiece, Unigram, BPE, ...)",
    "model_max_length": "longest input in tokens (position embeddings, capped by the tokenizer's limit)",
    "model_uncased": "input lower-cased before tokenizing",
    "model_source": "Hugging Face id or local path",
    "model_revision": "revision asked for in the config (null: default branch)",
    "model_commit": "Hub commit the weights were fetched at (null: a local folder)",
    "model_files_sha256": "SHA-256 over the model folder's files and their SHA-256 (results/manifests/<model>.json)",
}

# results/models.parquet: one row per model that ran, what its first scoring job measured and the
# languages the config lets it run on (free text, pretraining_data and licence, stays in the config:
# the report shows it, so that editing it reruns nothing)
MODELS_SCHEMA = {
    "model": "model short name",
    **MODEL_METADATA_SCHEMA,
    "model_languages": "languages the config lets the model run on, comma-separated (empty: all)",
}


def model_metadata(run_meta: dict) -> dict:
    """The :data:`MODEL_METADATA_SCHEMA` entries of a scoring output's run metadata (None where absent)."""
    return {key: run_meta.get(key) for key in MODEL_METADATA_SCHEMA}


def models_frame(run_metas: dict[str, dict], languages: dict[str, list[str]]) -> pd.DataFrame:
    """:data:`MODELS_SCHEMA` rows, by model name, from the run metadata of one scoring output per model
    and each model's configured ``languages``."""
    # pandas waits for the models table: the plan reads this module to build the DAG
    import pandas as pd

    rows = [
        {"model": name, **model_metadata(meta), "model_languages": ",".join(languages.get(name) or [])}
        for name, meta in run_metas.items()
    ]
    models = pd.DataFrame(rows, columns=list(MODELS_SCHEMA)).sort_values("model").reset_index(drop=True)
    return models.astype(
        {
            "model_parameters": "Int64",
            "model_layers": "Int64",
            "model_hidden_size": "Int64",
            "model_vocab_size": "Int64",
            "model_max_length": "Int64",
        }
    )


def model_spec(name: str, entry: dict) -> ModelSpec:
    """Validate one ``models.<name>`` entry and turn it into a :class:`ModelSpec`."""
    if not isinstance(entry, dict):
        raise ConfigError(f"models.{name}: expected a mapping with hf_id or path, family, ...")
    if entry.get("hf_id") and entry.get("path"):
        raise ConfigError(
            f"config error at models.{name}: it has both hf_id and path; give one of them: hf_id "
            f"(a Hugging Face id) or path (a local folder)"
        )
    if entry.get("build") and entry.get("path"):
        raise ConfigError(
            f"config error at models.{name}.path: a model with `build` is built by the workflow into the "
            f"run's results/models/{name}: remove its path"
        )
    if not entry.get("hf_id") and not entry.get("path") and not entry.get("build"):
        raise ConfigError(f"config error at models.{name}: give hf_id (a Hugging Face id) or path (a local folder)")
    family = get_family(entry.get("family") or "", where=f"models.{name}.family").name
    return ModelSpec(
        name=name,
        family=family,
        hf_id=entry.get("hf_id"),
        path=entry.get("path"),
        revision=entry.get("revision"),
        uncased=bool(entry.get("uncased", False)),
        languages=tuple(entry.get("languages") or ()),
        allow_pickle=bool(entry.get("allow_pickle", False)),
        precision=entry.get("precision"),
        device_map=entry.get("device_map"),
        max_memory={str(k): str(v) for k, v in entry["max_memory"].items()} if entry.get("max_memory") else None,
        gpus=int(entry.get("gpus") or 1),
    )


def spec_from_entry(entry: dict, manifest: str | os.PathLike | None = None) -> ModelSpec:
    """A :class:`ModelSpec` from a scoring rule's ``model`` parameter (the ``models.<name>`` entry
    with its ``name`` added, ``get_model_entry`` in ``common.smk``), loading from the folder of
    its ``manifest`` (the rule's model input) when given."""
    entry = dict(entry)
    spec = model_spec(entry.pop("name"), entry)
    if manifest is None:
        return spec
    with open(manifest, encoding="utf-8") as fh:
        record = json.load(fh)
    _same_content(spec.name, record, manifest)
    return replace(
        spec, local_dir=record["folder"], commit=record.get("source", {}).get("commit"), files_sha256=record["sha256"]
    )


def fingerprint(path: Path) -> dict:
    """What the file system says of a file without reading it: size, modification and change times and
    inode. A copy over it changes its change time and usually its inode even when the modification time is
    set back (``touch -r``), so a file whose fingerprint is unchanged is taken as unchanged (git's index
    does the same); anything else is re-hashed."""
    st = path.stat()
    return {"bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns, "inode": st.st_ino}


def content_changes(record: dict, *, run: str | os.PathLike = ".") -> list[str]:
    """The files of a manifest's folder (relative to the ``run`` folder when the manifest says it so) whose
    content is not what the manifest lists (changed, gone, or new), each file hashed: empty when the folder
    is exactly what the manifest describes."""
    root = Path(run) / record["folder"]
    listed = {f["file"]: f for f in record["files"]}
    present = {p.relative_to(root).as_posix(): p for p in model_files(root)}
    changed = sorted(listed.keys() ^ present.keys())
    for name in sorted(listed.keys() & present.keys()):
        entry, path = listed[name], present[name]
        if not is_as_listed(path, entry):
            changed.append(name)
    return sorted(changed)


def _same_content(name: str, record: dict, manifest: str | os.PathLike) -> None:
    """The folder holds exactly the files the manifest lists, byte for byte (each hashed: a copy of other
    weights of the same size under old times is refused, so what a result calls the model's files_sha256
    is always of the files scored; 12.4 s for a 7B model's 15.2 GB in bf16 on a GPU machine's host,
    docs/performance.md, "Checking a model by its content")."""
    root = Path(record["folder"])
    if not root.is_dir() or not (root / "config.json").is_file():
        gone = "is gone" if not root.exists() else "no longer holds its config.json"
        raise ModelError(
            f"model {name!r}: {record['folder']} is missing ({gone}: moved, renamed or deleted since its manifest "
            f"{manifest} was written); nothing was scored: put the folder back, or give the model's new folder"
        )
    changed = content_changes(record)
    if changed:
        raise ModelError(
            f"model {name!r}: {record['folder']} changed since its manifest {manifest} was written "
            f"({first_few(changed)}); nothing was scored: run the workflow again (plmfair run rebuilds the "
            f"manifest of a changed folder; with snakemake alone: rm {manifest})"
        )


def specs_from_config(config: dict) -> dict[str, ModelSpec]:
    """Every ``models`` entry of the config as a spec."""
    return {name: model_spec(name, entry) for name, entry in (config.get("models") or {}).items()}


def model_files(folder: str | os.PathLike) -> list[Path]:
    """The files of a model folder, sorted (Snakemake's and hidden bookkeeping files left out); none for a
    folder without a config.json, which is no model folder (``/`` or ``/etc`` are never walked)."""
    root = Path(folder)
    if not (root / "config.json").is_file():
        return []
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def require_model_folder(folder: Path) -> None:
    """A model folder holds a config.json: checked before anything walks, hashes or loads it (``/`` or
    ``/etc`` given as a model would be walked whole)."""
    if not (folder / "config.json").is_file():
        raise ConfigError(
            f"model folder {folder} holds no config.json: give the folder that holds the model's "
            f"config.json, tokenizer files and weights"
        )


def folder_manifest(folder: str | os.PathLike) -> dict:
    """What a local model is: every file of its folder with its size, SHA-256 and :func:`fingerprint`, one
    digest of them all, and where a fetched folder came from (Hub id, revision, commit). A scoring job
    depends on this manifest, so replacing the weights reruns exactly that model's jobs; one replaced under
    old times is caught by its fingerprint before the run (:func:`plmfair.runs.integrity.changed_models`)."""

    root = Path(folder)
    require_model_folder(root)
    files = [
        {"file": p.relative_to(root).as_posix(), **fingerprint(p), "sha256": sha256_of(p)} for p in model_files(root)
    ]
    digest = hashlib.sha256("".join(f"{f['file']}\t{f['sha256']}\n" for f in files).encode()).hexdigest()
    return {"folder": str(root), "sha256": digest, "source": source_record(root), "files": files}
