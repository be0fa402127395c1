"""Atomic writing of Parquet, CSV, text and JSON outputs.

Every writer writes to a temporary file in the destination folder and renames it
into place only when the write succeeded, so a failed job never leaves a file that
looks valid. Parquet files carry their column documentation in the schema metadata
(key ``plmfair.schema``) and optional run metadata (key ``plmfair.meta``).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from plmfair.errors import DataError

SCHEMA_KEY = b"plmfair.schema"
META_KEY = b"plmfair.meta"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _remove_leftovers(path: Path) -> None:
    """Temporary files or folders a killed writer left beside ``path`` (Snakemake's lock keeps
    two runs from writing the same output at once)."""
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*"):
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
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
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
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def write_parquet(
    df: pd.DataFrame,
    path: str | os.PathLike,
    *,
    schema_doc: Mapping[str, str] | None = None,
    meta: Mapping | None = None,
) -> None:
    """Write ``df`` to ``path`` atomically, with column docs and run metadata in the file.

    ``schema_doc`` maps every column to a one-line description; a column without one
    (or a description without a column) is a programming error caught here.
    """
    if schema_doc is not None:
        _check_schema_doc(df.columns, schema_doc, path)
    table = pa.Table.from_pandas(df.reset_index(drop=True), preserve_index=False)
    table = table.replace_schema_metadata(_with_metadata(table.schema, schema_doc, meta).metadata)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def _check_schema_doc(columns, schema_doc, path) -> None:
    missing = [c for c in columns if c not in schema_doc]
    extra = [c for c in schema_doc if c not in columns]
    if missing or extra:
        raise ValueError(
            f"schema documentation for {path} does not match its columns: "
            f"undocumented {missing}, documented but absent {extra}"
        )


def _with_metadata(schema: pa.Schema, schema_doc: Mapping[str, str] | None, meta: Mapping | None) -> pa.Schema:
    metadata = dict(schema.metadata or {})
    if schema_doc is not None:
        metadata[SCHEMA_KEY] = json.dumps(dict(schema_doc), ensure_ascii=False).encode()
    if meta is not None:
        metadata[META_KEY] = json.dumps(dict(meta), ensure_ascii=False, default=str).encode()
    return schema.with_metadata(metadata)


def write_parquet_chunks(frames: Iterable[pd.DataFrame], path: str | os.PathLike, *,
                         schema_doc: Mapping[str, str], meta: Mapping | None = None) -> int:
    """Write data frames of the same columns as successive row groups of one Parquet file, atomically,
    holding one frame in memory at a time (the first fixes the schema; at least one is needed).
    Returns the number of rows written."""
    rows = 0
    writer = None
    with atomic_path(path) as tmp:
        try:
            for df in frames:
                table = pa.Table.from_pandas(df.reset_index(drop=True), preserve_index=False)
                if writer is None:
                    _check_schema_doc(df.columns, schema_doc, path)
                    schema = _with_metadata(table.schema, schema_doc, meta)
                    writer = pq.ParquetWriter(tmp, schema)
                writer.write_table(table.cast(schema))
                rows += len(df)
            if writer is None:
                raise ValueError(f"no data frame to write to {path}")
        finally:
            if writer is not None:
                writer.close()
    return rows


def read_parquet(path: str | os.PathLike, *, columns: list[str] | None = None, filters=None) -> pd.DataFrame:
    """Read a Parquet output, naming the file and the missing columns when it is not as expected.
    ``filters``: pyarrow row filters (``[("line", "in", lines)]``), which skip row groups whose
    statistics rule them out."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found; run the workflow stage that writes it first")
    try:
        df = pq.read_table(path, filters=filters).to_pandas()
    except Exception as exc:  # pyarrow raises several types for corrupt files
        raise DataError(f"{path}: not a readable Parquet file ({exc}); delete it and rerun") from exc
    if columns is not None:
        absent = [c for c in columns if c not in df.columns]
        if absent:
            raise DataError(f"{path}: missing columns {absent}; it was written by another version, rerun its stage")
    return df


def read_parquet_meta(path: str | os.PathLike) -> dict:
    """The run metadata stored with :func:`write_parquet` (empty when none)."""
    md = pq.read_schema(path).metadata or {}
    return json.loads(md[META_KEY]) if META_KEY in md else {}


def read_schema_doc(path: str | os.PathLike) -> dict:
    """The column documentation stored with :func:`write_parquet` (empty when none)."""
    md = pq.read_schema(path).metadata or {}
    return json.loads(md[SCHEMA_KEY]) if SCHEMA_KEY in md else {}


def write_text(text: str, path: str | os.PathLike) -> None:
    """Write ``text`` (UTF-8) atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_csv(df: pd.DataFrame, path: str | os.PathLike, **kwargs) -> None:
    """Write a CSV table atomically (no index unless asked)."""
    kwargs.setdefault("index", False)
    with atomic_path(path) as tmp:
        df.to_csv(tmp, **kwargs)


def write_json(obj, path: str | os.PathLike) -> None:
    """Write JSON atomically, indented, UTF-8."""
    write_text(json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n", path)
