"""Text files of parallel corpora: lines read from plain, gzip, tar or zip files as UTF-8, and the
check that every language has as many lines."""

from __future__ import annotations

import gzip
import os
import tarfile
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from plmfair.errors import DataError


def decode_utf8(raw: bytes, source: str) -> str:
    """UTF-8 text (a byte-order mark dropped); invalid bytes stop with the line they are on."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        lineno = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"{source} line {lineno}: not valid UTF-8 ({exc.reason}); convert the file to UTF-8") from exc


def read_text_lines(path: str | os.PathLike, member: str | None = None) -> tuple[list[str], str]:
    """The lines of a UTF-8 text file (plain, .gz, or ``member`` of a tar or zip archive) and a
    name for messages (``archive:member``). Lines split on newline only, so stray control
    characters cannot shift a parallel corpus; a final newline adds no line."""

    path = Path(path)
    source = f"{path}:{member}" if member else str(path)
    again = "delete it and download it again"
    if member:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
                if member not in names:
                    raise DataError(_no_member(path, member, names))
                if names.count(member) > 1:
                    raise DataError(
                        f"{source}: the archive holds {names.count(member)} members of that name; "
                        f"which one is meant cannot be told, so none is read"
                    )
                try:
                    raw = zf.read(member)
                except (zipfile.BadZipFile, EOFError, OSError) as exc:
                    raise DataError(
                        f"{source}: the member cannot be read ({exc}): a truncated archive? {again}"
                    ) from None
        else:
            try:
                with tarfile.open(path) as tf:
                    try:
                        info = tf.getmember(member)
                    except KeyError:
                        raise DataError(_no_member(path, member, tf.getnames())) from None
                    if not info.isfile():
                        kind = (
                            "a symbolic link"
                            if info.issym()
                            else "a hard link"
                            if info.islnk()
                            else "a folder"
                            if info.isdir()
                            else "not a regular file"
                        )
                        raise DataError(
                            f"{source}: the member is {kind}, not a file; links in archives are not "
                            f"followed: give the member that holds the text"
                        )
                    extracted = tf.extractfile(info)
                    assert extracted is not None  # a regular file, checked above
                    raw = extracted.read()
            except (EOFError, zlib.error) as exc:
                raise DataError(
                    f"{path}: the archive ends early ({type(exc).__name__}): a truncated download? {again}"
                ) from None
            except (tarfile.TarError, OSError) as exc:
                raise DataError(f"{path}: not a readable tar or zip archive ({exc}); {again}") from None
    elif path.suffix == ".gz":
        try:
            with gzip.open(path, "rb") as fh:
                raw = fh.read()
        except gzip.BadGzipFile:
            raise DataError(
                f"{path}: named .gz but not gzip-compressed; rename it without .gz if it is plain text, or {again}"
            ) from None
        except (EOFError, zlib.error) as exc:
            raise DataError(
                f"{path}: the gzip file ends early ({type(exc).__name__}): a truncated download? {again}"
            ) from None
    else:
        raw = path.read_bytes()
    lines = decode_utf8(raw, source).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln.rstrip("\r") for ln in lines], source


def _no_member(path: str | os.PathLike, member: str, names: Iterable[str]) -> str:
    base = member.rsplit("/", 1)[-1]
    near = [n for n in names if n.rsplit("/", 1)[-1] == base][:5]
    hint = f"; members with that file name: {near}" if near else ""
    return f"{path}: the archive has no member {member!r}{hint}; fix the `member` key in the config"


def check_parallel(n_lines: Mapping[str, int], sources: Mapping[str, str]) -> int:
    """All languages must have the same number of lines; the common count."""
    counts = set(n_lines.values())
    if len(counts) != 1:
        detail = ", ".join(f"{sources[lang]}: {n}" for lang, n in n_lines.items())
        raise DataError(
            f"the parallel corpus files have different line counts ({detail}); line i must be the same sentence in "
            f"every language, so fix or re-extract the files"
        )
    return counts.pop()
