"""Is a run folder as its workflow left it? Its files against their seals and against its record.

- :func:`altered`: the results whose content differs from the seal their job wrote
  (:func:`plmfair.io.atomic.seal_writes`): changed outside the workflow. ``plmfair run`` sets them
  aside (:func:`set_aside`, kept under ``.plmfair/altered/``, never deleted) before Snakemake runs,
  so that they are rebuilt like a deleted one: every published file is an input of the run record, the
  run's target (:func:`plmfair.plan.published_files`).
- :func:`verify`: ``plmfair verify``: the files the record (``results/run.json``) lists, re-hashed:
  changed or missing, and the files of ``results/`` the record's configuration does not produce.
- :func:`missing`: the record's files that are gone (what a failed job left a run without).
- :func:`retired`: the results an earlier plmfair wrote under a name it no longer makes (``plmfair run``
  sets them aside, so that the run it brings up to date verifies).
- :func:`changed_models`: the models whose folder is no longer what the run's manifest of it lists,
  even with its old times kept (``plmfair run`` sets such a manifest aside, so the model is rescored);
  :func:`verify_models`: every model folder the run used, re-hashed (``plmfair verify``).

Standard library only (and :mod:`plmfair.io.atomic`; :mod:`plmfair.scoring.specs` for the model checks), so
that ``plmfair show`` stays quick.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from plmfair.io.atomic import SEALED, SEALS, TMP_MARK, is_as_listed, write_text
from plmfair.plan.targets import REPORT, REPORT_CAPTIONS, RUN_RECORD, RUN_RECORD_HTML

RECORD = Path(RUN_RECORD)
# what results/ holds besides the published files: the links to the downloads (the record lists them with
# their SHA-256 as data), logs, Snakemake's benchmarks, the models and spaCy pipelines the run built or
# fetched, the record and its renderings, the report's captions (none is a result the record lists)
NOT_PUBLISHED = (
    "results/downloads/",
    "results/logs/",
    "results/benchmarks/",
    "results/models/",
    "results/spacy/",
    RUN_RECORD,
    RUN_RECORD_HTML,
    REPORT,
    REPORT_CAPTIONS,
)
ALTERED = Path(".plmfair") / "altered"
# results/ files an earlier plmfair wrote under names this one no longer makes (the analysis plan, now the
# run's hypotheses: results/hypotheses.parquet and its table), as glob patterns relative to the run
RETIRED = ("results/analysis_plan.parquet", "results/tables/analysis_plan.*")
MANIFESTS = Path("results") / "manifests"
# the fingerprints of model files re-hashed and found unchanged since their manifest (a copied run folder,
# a folder touched), so that the next run does not hash them again
FINGERPRINTS = Path(".plmfair") / "fingerprints.json"


def _sealed_files(run: Path) -> dict[str, dict | None]:
    """Every seal under the run, by the path (relative to the run) of the file it seals; None for a seal
    that cannot be read (empty, cut short, not JSON): it seals nothing."""
    root = run / SEALS
    seals: dict[str, dict | None] = {}
    for path in root.rglob("*.json") if root.is_dir() else []:
        if TMP_MARK in path.name:
            continue
        try:
            seal = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            seal = None
        if not isinstance(seal, dict) or not {"sha256", "bytes"} <= seal.keys():
            seal = None
        seals[path.relative_to(root).as_posix().removesuffix(".json")] = seal
    return seals


def seals(run: str | os.PathLike) -> dict[str, dict | None]:
    """The run's seals by the path of the file each seals (None: a seal that cannot be read)."""
    return _sealed_files(Path(run))


def has_run(run: str | os.PathLike) -> bool:
    """Whether a job of the run has written a result (its seals are there, or its record: a run whose seals
    were lost has run all the same)."""
    return (Path(run) / SEALS).is_dir() or (Path(run) / RECORD).is_file()


def _agrees(path: Path, seal: dict | None) -> bool:
    """Whether a file is what its seal says its job wrote; never without a readable seal. A file of the size,
    modification time and inode change time sealed is taken as unchanged without reading it: the change time is
    the kernel's, which no user call sets back (``os.utime`` and ``touch -r`` set the modification time and
    move the change time to now), so an edit with its times put back is hashed and found."""
    if seal is None:
        return False
    stat = path.stat()
    same = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns) == (
        seal.get("bytes"),
        seal.get("mtime_ns"),
        seal.get("ctime_ns"),
    )
    return same or is_as_listed(path, seal)


def altered(run: str | os.PathLike) -> list[str]:
    """The results of ``run`` that are not what their job wrote: content unlike their seal's, or a result
    the record lists (every result of ``results/``, without a readable record) with no readable seal
    (lost, emptied or broken, the seals' folder among them: an edit could hide behind it, so the file is
    never adopted). A file neither sealed nor recorded is no result of the run's and stays where it is
    (``verify`` names it)."""
    run = Path(run)
    seals = _sealed_files(run)
    recorded = recorded_files(run)
    results = _result_files(run) if recorded is None else recorded
    out = []
    for relative in sorted(set(seals) | set(results)):
        path = run / relative
        if not path.is_file():
            continue  # a missing result is rebuilt as a target of the run
        seal = seals.get(relative)
        if not _agrees(path, seal):
            # a file of a folder output: the folder is set aside whole, to be rebuilt by its job
            out.append(seal.get("folder", relative) if seal else relative)
    return list(dict.fromkeys(out))


def _seal_problems(seals: dict[str, dict | None], files: Iterable[str]) -> list[str]:
    """Of ``files`` (relative to the run), those whose seal (in the run's ``seals``) is missing or cannot be
    read, in words."""
    return [
        f"{relative}: {'no seal' if relative not in seals else 'its seal cannot be read'}"
        for relative in files
        if seals.get(relative) is None
    ]


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
    without being produced by the record's configuration; files (the record among them) whose seal is
    missing or broken; whether the record is what its job wrote (``record_sealed``); ``record`` False when
    there is none."""

    record: bool
    checked: int = 0
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    unsealed: list[str] = field(default_factory=list)
    record_sealed: bool = True

    @property
    def ok(self) -> bool:
        return (
            self.record
            and self.record_sealed
            and not (self.changed or self.missing or self.unexpected or self.unsealed)
        )


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
    """Re-hash every file the run's record lists; name those changed or missing, the files of ``results/``
    that the record does not list, and those whose seal is missing or broken; check the record against
    its own seal (an edit of ``run.json`` is named, never shown as verified)."""
    run = Path(run)
    files = recorded_files(run)
    if files is None:
        return Verification(record=False)
    out = Verification(record=True, checked=len(files))
    for relative, entry in sorted(files.items()):
        path = run / relative
        if not path.is_file():
            out.missing.append(relative)
        elif not is_as_listed(path, entry):
            out.changed.append(relative)
    out.unexpected = [f for f in _result_files(run) if f not in files]
    seals = _sealed_files(run)
    out.unsealed = _seal_problems(seals, [RUN_RECORD, *(f for f in sorted(files) if f not in out.missing)])
    out.record_sealed = _agrees(run / RECORD, seals.get(RUN_RECORD))
    return out


def retired(run: str | os.PathLike) -> list[str]:
    """The run's files under the names of an earlier plmfair (:data:`RETIRED`), relative to it."""
    run = Path(run)
    return sorted({p.relative_to(run).as_posix() for pattern in RETIRED for p in run.glob(pattern) if p.is_file()})


def missing(run: str | os.PathLike) -> list[str]:
    """The files the run's record lists that are not in the folder (none without a record)."""
    run = Path(run)
    return sorted(f for f in (recorded_files(run) or {}) if not (run / f).is_file())


def _manifests(run: Path) -> dict[str, dict]:
    """The run's model manifests by path relative to the run (an unreadable one left to its job)."""
    out = {}
    for path in sorted((run / MANIFESTS).glob("*.json")):
        try:
            out[path.relative_to(run).as_posix()] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
    return out


def changed_models(run: str | os.PathLike) -> list[str]:
    """The run's model manifests (paths relative to it) whose folder's content differs from what they list:
    a file's fingerprint (size, times, inode: :func:`plmfair.scoring.specs.fingerprint`) unlike the
    manifest's and the last check's, then its content re-hashed; a file added or gone. Files whose
    fingerprint moved but whose content did not are remembered in :data:`FINGERPRINTS`."""
    # the model layer only for the model checks: plmfair show stays quick
    from plmfair.scoring.specs import fingerprint, model_files

    run = Path(run)
    try:
        known = json.loads((run / FINGERPRINTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    changed, remembered = [], {}
    for relative, manifest in _manifests(run).items():
        root = run / manifest.get("folder", "")  # a built or fetched model's folder is the run's own
        listed = {f["file"]: f for f in manifest.get("files", [])}
        present = {p.relative_to(root).as_posix(): p for p in model_files(root)} if root.is_dir() else {}
        if listed.keys() != present.keys():
            changed.append(relative)
            continue
        seen = {}
        for name, entry in listed.items():
            now = fingerprint(present[name])
            if all(entry.get(k) == v for k, v in now.items()) or known.get(relative, {}).get(name) == now:
                continue
            if not is_as_listed(present[name], entry):
                changed.append(relative)
                break
            seen[name] = now
        else:
            if seen or relative in known:
                remembered[relative] = {**known.get(relative, {}), **seen}
    if remembered != known:
        (run / FINGERPRINTS).parent.mkdir(parents=True, exist_ok=True)
        write_text(json.dumps(remembered, indent=1), run / FINGERPRINTS)
    return changed


@dataclass
class ModelCheck:
    """``plmfair verify``'s re-hash of the model folders a run used: the manifests checked, the bytes read,
    the seconds it took, and each model whose folder differs from its manifest, with the files."""

    checked: int = 0
    bytes: int = 0
    seconds: float = 0.0
    changed: dict[str, list[str]] = field(default_factory=dict)


def verify_models(run: str | os.PathLike) -> ModelCheck:
    """Re-hash every file of every model folder the run's manifests list
    (:func:`plmfair.scoring.specs.content_changes`)."""
    # the model layer only for the model checks: plmfair show stays quick
    from plmfair.scoring.specs import content_changes

    start = time.perf_counter()
    out = ModelCheck()
    for relative, manifest in _manifests(Path(run)).items():
        out.checked += 1
        out.bytes += sum(int(f.get("bytes", 0)) for f in manifest.get("files", []))
        present = (Path(run) / manifest.get("folder", "")).is_dir()
        changes = content_changes(manifest, run=run) if present else ["(the folder is gone)"]
        if changes:
            out.changed[f"{Path(relative).stem} ({manifest.get('folder')})"] = changes
    out.seconds = time.perf_counter() - start
    return out
