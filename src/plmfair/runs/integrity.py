"""Is a run folder as its workflow left it? Its files against their seals and against its record.

- :func:`altered`: the results whose content differs from the seal their job wrote
  (:func:`plmfair.io.atomic.seal_writes`): changed outside the workflow. ``plmfair run`` sets them
  aside (:func:`set_aside`, kept under ``.plmfair/altered/``, never deleted) before Snakemake runs,
  so that they are rebuilt like a deleted one: every published file is an input of the run record, the
  run's target (:func:`plmfair.plan.published_files`).
- :func:`verify`: ``plmfair verify``: the files the record (``results/run.json``) lists, re-hashed:
  changed or missing, and the files of ``results/`` the record's configuration does not produce.
- :func:`missing`: the record's files that are gone (what a failed job left a run without).

Standard library only (and :mod:`plmfair.io.atomic`), so that ``plmfair show`` stays quick.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from plmfair.io.atomic import SEALED, SEALS, TMP_MARK, sha256_of
from plmfair.plan.targets import REPORT, RUN_RECORD, RUN_RECORD_HTML

RECORD = Path(RUN_RECORD)
# what results/ holds besides the published files: logs, Snakemake's benchmarks, the models and spaCy
# pipelines the run built, the record and its renderings (none is a result the record lists)
NOT_PUBLISHED = (
    "results/logs/",
    "results/benchmarks/",
    "results/models/",
    "results/spacy/",
    RUN_RECORD,
    RUN_RECORD_HTML,
    REPORT,
)
ALTERED = Path(".plmfair") / "altered"


def _sealed_files(run: Path) -> dict[str, dict]:
    """Every seal under the run, by the path (relative to the run) of the file it seals."""
    root = run / SEALS
    seals = {}
    for path in root.rglob("*.json") if root.is_dir() else []:
        try:
            seal = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a seal cut short by a killed job seals nothing
        seals[path.relative_to(root).as_posix().removesuffix(".json")] = seal
    return seals


def has_run(run: str | os.PathLike) -> bool:
    """Whether a job of the run has written a result (its seals are there)."""
    return (Path(run) / SEALS).is_dir()


def altered(run: str | os.PathLike) -> list[str]:
    """The sealed results of ``run`` whose content is no longer what their job wrote (a file of the
    same size and time is taken as unchanged without reading it)."""
    run = Path(run)
    out = []
    for relative, seal in sorted(_sealed_files(run).items()):
        path = run / relative
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue  # a missing result is rebuilt as a target of the run
        if stat.st_size == seal.get("bytes") and stat.st_mtime_ns == seal.get("mtime_ns"):
            continue
        if stat.st_size != seal.get("bytes") or sha256_of(path) != seal.get("sha256"):
            out.append(relative)
    return out


def set_aside(run: str | os.PathLike, files: list[str]) -> Path:
    """Move ``files`` (relative to ``run``) under ``.plmfair/altered/<time>/``, keeping their paths, so
    that the next run rebuilds them; the folder they went to."""
    run = Path(run)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    folder = run / ALTERED / stamp
    for relative in files:
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(run / relative), target)
    return folder


@dataclass
class Verification:
    """A run folder against its record: files changed since the record, missing, and in ``results/``
    without being produced by the record's configuration; ``record`` False when there is none."""

    record: bool
    checked: int = 0
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.record and not (self.changed or self.missing or self.unexpected)


def recorded_files(run: str | os.PathLike) -> dict[str, dict] | None:
    """The files the run's record lists, by path; None without a readable record."""
    path = Path(run) / RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {f["path"]: f for f in record.get("files", [])}


def _result_files(run: Path) -> list[str]:
    """The files of the run's ``results/`` that may be published (hidden files and temporary writes
    left out)."""
    root = run / SEALED
    if not root.is_dir():
        return []
    out = []
    for path in root.rglob("*"):
        relative = path.relative_to(run).as_posix()
        if (
            path.is_file()
            and not relative.startswith(NOT_PUBLISHED)
            and TMP_MARK not in path.name
            and not any(part.startswith(".") for part in path.relative_to(root).parts)
        ):
            out.append(relative)
    return sorted(out)


def verify(run: str | os.PathLike) -> Verification:
    """Re-hash every file the run's record lists; name those changed or missing, and the files of
    ``results/`` that the record does not list."""
    run = Path(run)
    files = recorded_files(run)
    if files is None:
        return Verification(record=False)
    out = Verification(record=True, checked=len(files))
    for relative, entry in sorted(files.items()):
        path = run / relative
        if not path.is_file():
            out.missing.append(relative)
        elif path.stat().st_size != entry["bytes"] or sha256_of(path) != entry["sha256"]:
            out.changed.append(relative)
    out.unexpected = [f for f in _result_files(run) if f not in files]
    return out


def missing(run: str | os.PathLike) -> list[str]:
    """The files the run's record lists that are not in the folder (none without a record)."""
    run = Path(run)
    return sorted(f for f in (recorded_files(run) or {}) if not (run / f).is_file())
