"""Atomic writes: a failed or killed job never leaves a file or folder that looks valid.

In a workflow job (:func:`seal_writes`, which :func:`plmfair.logs.configure_logging` calls), every
file written under the run's ``results/`` also gets a seal, ``.plmfair/seals/<path>.json`` (its
SHA-256, size and time), so that a file changed outside the workflow afterwards is told apart from
one the workflow wrote (:mod:`plmfair.runs.integrity`).

Every writer writes to a temporary name in the destination folder and renames it into place
only when the write succeeded. Temporary names are ``.<name>.plmfair-tmp.<random>``: the
leftovers of a killed write of ``<name>`` are removed by its next write, and no other output's
cleanup can match them (``corpus.en``'s cleanup never touches ``corpus.en.gz``'s temporary file).
A write the machine stops (disk full, read-only file system, permission denied) ends in one line
naming the path, what is missing and what to do (:func:`storage_error`). Standard library only
(and :mod:`plmfair.errors`), so light jobs (downloads) import nothing else.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from plmfair.errors import StorageError

TMP_MARK = ".plmfair-tmp."
SEALS = Path(".plmfair") / "seals"
SEALED = "results"  # the folder under a run whose files are sealed
# folder outputs whose files are not sealed: model folders, which their manifests describe file by file
# (plmfair.scoring.specs.folder_manifest; a fetched model's weights are not hashed twice)
NOT_SEALED = ("results/models/",)
_sealing: Path | None = None  # the run folder whose results are sealed (None: no sealing)
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
_READ_ONLY = (errno.EROFS,)
_DENIED = (errno.EACCES, errno.EPERM)


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def _errno(exc: OSError) -> int | None:
    """The error number of an OSError; pyarrow's write errors carry it only in their text."""
    if exc.errno is not None:
        return exc.errno
    text = str(exc)
    for number in (*_NO_SPACE, *_READ_ONLY, *_DENIED):
        if f"errno {number}]" in text.lower() or os.strerror(number) in text:
            return number
    return None


def storage_error(exc: OSError, path: str | os.PathLike, written: int | None = None) -> StorageError | None:
    """The one line a write of ``path`` that failed with ``exc`` ends in, when the machine is the
    cause (disk full, read-only file system, permission denied): the path, what is missing (the free
    space and the bytes written before the disk ran out: it needs more than that), and what to do.
    None for any other fault."""
    path = Path(path)
    folder = next((p for p in (path.parent, *path.parents) if p.exists()), Path("/"))
    number = _errno(exc)
    if number in _NO_SPACE:
        free = shutil.disk_usage(folder).free
        got = "" if not written else f"; this file got {_mib(written)} before it stopped, so it needs more"
        return StorageError(
            f"{path}: no space left on the device holding {folder} ({_mib(free)} free{got}): free "
            f"space there (or run in a folder with room, --directory) and run the workflow again; "
            f"nothing half-written was kept"
        )
    if number in _READ_ONLY:
        return StorageError(
            f"{path}: {folder} is on a read-only file system: run in a writable folder "
            f"(--directory) or remount it read-write"
        )
    if number in _DENIED:
        st = folder.stat()
        return StorageError(
            f"{path}: permission denied writing in {folder} (owner uid {st.st_uid}, mode "
            f"{st.st_mode & 0o777:o}, you are uid {os.geteuid()}): run as a user who may write there "
            f"or in a folder you own (--directory)"
        )
    return None


@contextlib.contextmanager
def _speaking(path: Path, written: Callable[[], int | None] = lambda: None) -> Iterator[None]:
    """Turn a write's storage fault into :func:`storage_error`'s one line; other faults pass."""
    try:
        yield
    except OSError as exc:
        error = storage_error(exc, path, written())
        if error is None:
            raise
        raise error from exc


def _tmp_prefix(path: Path) -> str:
    return f".{path.name}{TMP_MARK}"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _remove_leftovers(path: Path) -> None:
    """Temporary files or folders a killed writer of ``path`` left beside it (Snakemake's lock keeps
    two runs from writing the same output at once)."""
    for stale in path.parent.glob(f"{glob.escape(_tmp_prefix(path))}*"):
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            stale.unlink(missing_ok=True)


def seal_writes(run_folder: str | os.PathLike | None) -> None:
    """Seal every file written under ``run_folder/results`` from now on (None: stop sealing)."""
    global _sealing
    _sealing = Path(run_folder).resolve() if run_folder is not None else None


def seal_path(run_folder: str | os.PathLike, relative: str | os.PathLike) -> Path:
    """Where the seal of ``relative`` (a path under the run folder) is kept."""
    return Path(run_folder) / SEALS / f"{Path(relative).as_posix()}.json"


def sha256_of(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def is_as_listed(path: str | os.PathLike, entry: Mapping) -> bool:
    """Whether a file has the size and SHA-256 that ``entry`` lists (``bytes``, ``sha256``: a seal, or a
    file of a model's manifest or a run's record); a file of another size is not read."""
    return Path(path).stat().st_size == entry.get("bytes") and sha256_of(path) == entry.get("sha256")


def _sealed_relative(path: Path) -> Path | None:
    """``path`` relative to the run whose results are sealed, when it is one of its results (None: no
    sealing, not a result, or a file inside a folder output still being written)."""
    if _sealing is None:
        return None
    try:
        relative = path.resolve().relative_to(_sealing)
    except ValueError:
        return None
    if relative.parts[:1] != (SEALED,) or any(TMP_MARK in part for part in relative.parts):
        return None
    return relative


def _write_seal(relative: Path, record: dict) -> None:
    assert _sealing is not None  # a relative path is only found while sealing
    target = seal_path(_sealing, relative)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=_tmp_prefix(target), dir=target.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(record, fh)
    os.replace(name, target)


def _seal(path: Path, tmp: Path) -> Callable[[], None] | None:
    """The seal of ``path`` about to be replaced by ``tmp`` (a writer of it after the rename), or None
    when ``path`` is not a sealed result."""
    relative = _sealed_relative(path)
    if relative is None:
        return None
    digest, size = sha256_of(tmp), tmp.stat().st_size

    def write() -> None:
        st = path.stat()  # after the rename: the times the file keeps until something changes it
        _write_seal(relative, {"sha256": digest, "bytes": size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns})

    return write


def _seal_folder(path: Path) -> None:
    """Seal every file of a folder output just renamed into place, each seal naming the folder (a file of it
    changed is the folder's change: the folder is what a job rebuilds)."""
    folder = _sealed_relative(path)
    if folder is None or f"{folder.as_posix()}/".startswith(NOT_SEALED):
        return
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        st, relative = file.stat(), _sealed_relative(file)
        assert relative is not None  # inside a sealed folder
        _write_seal(
            relative,
            {
                "sha256": sha256_of(file),
                "bytes": st.st_size,
                "mtime_ns": st.st_mtime_ns,
                "ctime_ns": st.st_ctime_ns,
                "folder": folder.as_posix(),
            },
        )


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success, delete it on error.

    The file gets the usual permissions (0644 under umask 022; ``mkstemp`` alone makes 0600),
    and temporary files a killed write left for ``path`` are removed first.
    """
    path = Path(path)
    with _speaking(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(path)
        fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(path), dir=path.parent)
        os.close(fd)
    tmp_path = Path(tmp)
    try:
        with _speaking(path, lambda: tmp_path.stat().st_size if tmp_path.exists() else None):
            yield tmp_path
            os.chmod(tmp_path, 0o666 & ~_umask())
            seal = _seal(path, tmp_path)
            os.replace(tmp_path, path)
            if seal is not None:
                seal()
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary folder beside ``path``; on success it replaces ``path`` (and whatever was
    there), on error it is deleted, so a failed job never leaves a folder that looks complete.
    The folder gets the usual permissions (0755 under umask 022)."""
    path = Path(path)
    with _speaking(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(path)
        tmp = Path(tempfile.mkdtemp(prefix=_tmp_prefix(path), dir=path.parent))
    try:
        with _speaking(path, lambda: sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file())):
            yield tmp
            os.chmod(tmp, 0o777 & ~_umask())
            if path.exists():
                shutil.rmtree(path)
            os.replace(tmp, path)
            _seal_folder(path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def write_text(text: str, path: str | os.PathLike) -> None:
    """Write ``text`` (UTF-8) atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(obj: object, path: str | os.PathLike) -> None:
    """Write JSON atomically, indented, UTF-8."""
    write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n", path)
