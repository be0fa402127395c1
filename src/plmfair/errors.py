"""Errors that speak to the user: which file, row or key, what was expected, what to do."""

import difflib
import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path


class PlmfairError(Exception):
    """Base class of every error the workflow raises on purpose."""


class DataError(PlmfairError):
    """An input file is missing, malformed or does not match its declared checksum."""


class ConfigError(PlmfairError):
    """A configuration value is missing or inconsistent."""


class ModelError(PlmfairError):
    """A model cannot be found, loaded or used for the requested task."""


class StorageError(PlmfairError):
    """A file cannot be written: the disk is full, the folder read-only or not the user's to write."""


def first_few(names: Iterable[object], n: int = 3) -> str:
    """The first ``n`` of ``names``, comma-separated, with `` ...`` when there are more: how a one-line
    message names files it cannot all list."""
    listed = [str(name) for name in names]
    return ", ".join(listed[:n]) + (" ..." if len(listed) > n else "")


def did_you_mean(name: str, known: Iterable[object]) -> str:
    """`` (did you mean 'x'?)`` when a known name is close to ``name`` (case aside), else ``""``."""
    folded = {str(k).lower(): str(k) for k in known}
    close = difflib.get_close_matches(str(name).lower(), list(folded), n=1)
    return f" (did you mean {folded[close[0]]!r}?)" if close else ""


def program() -> str:
    """``plmfair`` as the user can type it: the bare name where that runs this installation (its virtual
    environment active), else the path of this installation's own script; every command a message prints
    starts with it."""
    script = Path(sys.executable).parent / "plmfair"
    found = shutil.which("plmfair")
    if not script.is_file() or (found and Path(found).resolve() == script.resolve()):
        return "plmfair"
    return str(script)


def missing_result(path: str | os.PathLike, run: str, folder: Path) -> DataError:
    """A result the record of ``run`` (its ``folder``) lists, gone: what ``plmfair compare`` says."""
    return DataError(
        f"{path}: missing, though the record of run {run} lists it; rebuild the run before comparing it "
        f"({program()} run --run {folder.name} --runs {folder.parent})"
    )
