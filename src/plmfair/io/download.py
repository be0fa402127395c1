"""Fetch a declared file from a local mirror or its URL, verified by SHA-256, once for every run.

A mirror is a local folder searched first, recursively, by file name. Whatever the
source, the bytes go to a temporary file that is checked against the declared
SHA-256 and only then renamed into place, so a wrong or partial file is never
left where the workflow would take it as valid.

Files are kept in a store every run shares (``resources/downloads/``, :data:`STORE`) and each run reads
its own hard link to the stored file (a copy where the file system has no links): the run's link is what
its download job outputs, so Snakemake, which deletes a failed job's outputs, never deletes a stored
file another run reads. A stored file is fetched again only when it is not what the configuration asks
for: its SHA-256, or, for a file kept without one, the size and time of its mirror copy (recorded beside
it when it was stored, so a rerun without the mirror reads what was stored).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path

from plmfair.errors import DataError
from plmfair.io.atomic import TMP_MARK, atomic_path, sha256_of, write_text

log = logging.getLogger(__name__)

_CHUNK = 1 << 20
# the shared store, relative to a run folder (whose resources/ links to the one every run shares)
STORE = Path("resources") / "downloads"


def find_in_mirror(mirror: str | os.PathLike | None, filename: str) -> Path | None:
    """The first file called ``filename`` under ``mirror`` (sorted walk, so the choice is stable)."""
    if not mirror:
        return None
    root = Path(mirror)
    if not root.is_dir():
        raise DataError(f"mirror folder {root} does not exist; fix `mirror` in the config or set it to null")
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        if filename in filenames:
            return Path(dirpath) / filename
    return None


def _stamp(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size} bytes, modified {stat.st_mtime_ns} ns"


def _source_note(stored: Path) -> Path:
    """Where the stamp of a stored file's mirror copy is kept, beside it."""
    return stored.parent / f".{stored.name}.source.json"


def mirror_copy_stamp(mirror: str | os.PathLike | None, filename: str, store: str | os.PathLike = STORE) -> str:
    """What identifies the mirror's copy of a file kept without a checksum: its size and modification
    time; without a mirror copy, the stamp of the copy the ``store`` holds the file from (``""`` when
    neither). A download rule has it as a parameter, so replacing the copy reruns the download; moving the
    mirror folder, or running without it once the file is stored, does not."""
    found = find_in_mirror(mirror, filename) if mirror and Path(mirror).is_dir() else None
    if found is not None:
        return _stamp(found)
    try:
        return json.loads(_source_note(Path(store) / filename).read_text(encoding="utf-8"))["stamp"]
    except (OSError, ValueError, KeyError):
        return ""


def _stored_is_wanted(stored: Path, sha256: str | None, source: Path | None) -> bool:
    """Whether the store's file is the one asked for: its SHA-256, or for a file without one, the same
    mirror copy it was stored from (any copy, when no mirror has one now)."""
    if not stored.is_file():
        return False
    if sha256 is not None:
        return sha256_of(stored).lower() == sha256.lower()
    if source is None:
        return True
    try:
        return json.loads(_source_note(stored).read_text(encoding="utf-8")).get("stamp") == _stamp(source)
    except (OSError, ValueError):
        return False


def _link(stored: Path, dest: Path) -> None:
    """``dest`` as a hard link to ``stored`` (a copy across file systems), put in place atomically."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}{TMP_MARK}link"
    tmp.unlink(missing_ok=True)
    try:
        os.link(stored, tmp)
    except OSError:
        shutil.copyfile(stored, tmp)
    os.replace(tmp, dest)


def fetch(
    *,
    filename: str,
    url: str | None,
    sha256: str | None,
    dest: str | os.PathLike,
    store: str | os.PathLike,
    mirror: str | os.PathLike | None = None,
    timeout: float = 60.0,
) -> Path:
    """Put the verified file ``filename`` at ``dest`` (the run's own link to the ``store``'s file), fetching
    it into the store from ``mirror`` if it has it, else from ``url``, unless the store already holds it
    (:func:`_stored_is_wanted`).

    ``sha256`` may be None only for sources whose checksum cannot be known yet; the
    file is then kept with a loud warning naming it.
    """
    dest, stored = Path(dest), Path(store) / filename
    # a mirror that is gone matters only when the store cannot serve the file
    source = find_in_mirror(mirror, filename) if mirror and Path(mirror).is_dir() else None
    if _stored_is_wanted(stored, sha256, source):
        log.info("%s: the stored %s (%s)", dest, stored, "verified" if sha256 else "kept UNVERIFIED")
        _link(stored, dest)
        return dest
    if source is None:
        find_in_mirror(mirror, filename)  # a mirror folder that does not exist is named
    with atomic_path(stored) as tmp:
        if source is not None:
            log.info("copying %s from mirror %s", filename, source)
            shutil.copyfile(source, tmp)
            origin = str(source)
        elif url:
            log.info("downloading %s from %s", filename, url)
            origin = url
            try:
                with urllib.request.urlopen(url, timeout=timeout) as resp, open(tmp, "wb") as out:
                    shutil.copyfileobj(resp, out, _CHUNK)
            except (urllib.error.URLError, OSError, ValueError) as exc:
                hint = (
                    f"put a copy named {filename} in a folder and set `mirror: /that/folder` "
                    f"in the config (or `--config mirror=/that/folder`)"
                )
                where = f"mirror {mirror} has no file of that name and " if mirror else ""
                raise DataError(f"could not fetch {filename}: {where}downloading {url} failed ({exc}); {hint}") from exc
        else:
            raise DataError(
                f"{filename} has no URL and was not found in the mirror {mirror!r}; "
                f"add it to the mirror folder or give its url in the config"
            )
        actual = sha256_of(tmp)
        if sha256 is None:
            log.warning(
                "UNVERIFIED: %s has no sha256 in the config; keeping it unverified (its sha256 is %s). "
                "Add that checksum to the config once you trust the file.",
                filename,
                actual,
            )
        elif actual.lower() != sha256.lower():
            raise DataError(
                f"checksum mismatch for {filename} from {origin}: expected sha256 {sha256}, got {actual}. "
                f"The file was not kept. Replace the source file or, if the upstream file changed on purpose, "
                f"update its sha256 in the config."
            )
    stamp = _stamp(source) if source is not None else ""
    write_text(json.dumps({"origin": origin, "stamp": stamp}), _source_note(stored))
    _link(stored, dest)
    log.info("%s %s (sha256 %s)", dest, "kept UNVERIFIED" if sha256 is None else "verified", actual)
    return dest


DOWNLOAD_KEYS = ("file", "url", "sha256")
