"""Fetch a declared file from a local mirror or its URL, verified by SHA-256.

A mirror is a local folder searched first, recursively, by file name. Whatever the
source, the bytes go to a temporary file that is checked against the declared
SHA-256 and only then renamed into place, so a wrong or partial file is never
left where the workflow would take it as valid.
"""

from __future__ import annotations

import logging
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path

from plmfair.errors import DataError
from plmfair.io.atomic import atomic_path, sha256_of

log = logging.getLogger(__name__)

_CHUNK = 1 << 20


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


def mirror_copy_stamp(mirror: str | os.PathLike | None, filename: str) -> str:
    """What identifies the mirror's copy of a file kept without a checksum: its size and modification
    time (``""`` without one). A download rule has it as a parameter, so replacing the copy reruns
    the download; moving the mirror folder (which keeps both) does not."""
    found = find_in_mirror(mirror, filename) if mirror and Path(mirror).is_dir() else None
    if found is None:
        return ""
    stat = found.stat()
    return f"{stat.st_size} bytes, modified {stat.st_mtime_ns} ns"


def fetch(
    *,
    filename: str,
    url: str | None,
    sha256: str | None,
    dest: str | os.PathLike,
    mirror: str | os.PathLike | None = None,
    timeout: float = 60.0,
) -> Path:
    """Put the verified file ``filename`` at ``dest``, from ``mirror`` if it has it, else from ``url``.

    ``sha256`` may be None only for sources whose checksum cannot be known yet; the
    file is then kept with a loud warning naming it.
    """
    dest = Path(dest)
    source = find_in_mirror(mirror, filename)
    with atomic_path(dest) as tmp:
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
    log.info("%s %s (sha256 %s)", dest, "kept UNVERIFIED" if sha256 is None else "verified", actual)
    return dest


DOWNLOAD_KEYS = ("file", "url", "sha256")
