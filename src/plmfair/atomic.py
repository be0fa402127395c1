"""Atomic writes: a failed or killed job never leaves a file or folder that looks valid.

Every writer writes to a temporary name in the destination folder and renames it into place
only when the write succeeded. Temporary names are ``.<name>.plmfair-tmp.<random>``: the
leftovers of a killed write of ``<name>`` are removed by its next write, and no other output's
cleanup can match them (``corpus.en``'s cleanup never touches ``corpus.en.gz``'s temporary file).
Standard library only, so light jobs (downloads) import nothing else.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

TMP_MARK = ".plmfair-tmp."


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


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success, delete it on error.

    The file gets the usual permissions (0644 under umask 022; ``mkstemp`` alone makes 0600),
    and temporary files a killed write left for ``path`` are removed first.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(path)
    fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(path), dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary folder beside ``path``; on success it replaces ``path`` (and whatever was
    there), on error it is deleted, so a failed job never leaves a folder that looks complete.
    The folder gets the usual permissions (0755 under umask 022)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(path)
    tmp = Path(tempfile.mkdtemp(prefix=_tmp_prefix(path), dir=path.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def write_text(text: str, path: str | os.PathLike) -> None:
    """Write ``text`` (UTF-8) atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(obj, path: str | os.PathLike) -> None:
    """Write JSON atomically, indented, UTF-8."""
    write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n", path)
