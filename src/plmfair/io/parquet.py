"""Parquet and CSV outputs, written atomically (:mod:`plmfair.io.atomic`), and Parquet inputs read
with messages that name the file.

Parquet files carry their column documentation in the schema metadata (key
``plmfair.schema``) and optional run metadata (key ``plmfair.meta``).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from plmfair.errors import DataError
from plmfair.io.atomic import atomic_path

SCHEMA_KEY = b"plmfair.schema"
META_KEY = b"plmfair.meta"


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


def _check_schema_doc(columns: Iterable[str], schema_doc: Mapping[str, str], path: str | os.PathLike) -> None:
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


def write_parquet_chunks(
    frames: Iterable[pd.DataFrame],
    path: str | os.PathLike,
    *,
    schema_doc: Mapping[str, str],
    meta: Mapping | None = None,
) -> int:
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


# what a column of an intermediate file must hold, by the name a reader gives it
KINDS = {
    "bool": pd.api.types.is_bool_dtype,
    "string": lambda s: pd.api.types.is_string_dtype(s) or s.dtype == object,
    "number": lambda s: pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s),
}


def read_parquet(
    path: str | os.PathLike,
    *,
    columns: list[str] | None = None,
    filters: list[tuple[str, str, object]] | None = None,
    kinds: Mapping[str, str] | None = None,
    values: Mapping[str, Iterable] | None = None,
) -> pd.DataFrame:
    """Read a Parquet output, refusing one that is not as this version writes it: missing ``columns``,
    a column not of its ``kinds`` (bool, number, string), or a value outside ``values``; the message
    names the file, the column, what was expected and the command that rebuilds it (Snakemake sees
    the old file as up to date, so a plain rerun would read it again). ``filters``: pyarrow row
    filters (``[("line", "in", lines)]``), which skip row groups whose statistics rule them out."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found; run the workflow stage that writes it first")
    try:
        df = pq.read_table(path, filters=filters).to_pandas()
    except Exception as exc:  # pyarrow raises several types for corrupt files
        raise DataError(f"{path}: not a readable Parquet file ({exc}); delete it and rerun") from exc
    rebuild = (
        f"it was written by another version of plmfair: delete it (rm {shlex.quote(str(path))}) and run the "
        f"workflow again, which rebuilds it"
    )
    absent = [c for c in columns or [] if c not in df.columns]
    if absent:
        raise DataError(f"{path}: missing columns {absent}; {rebuild}")
    for column, kind in (kinds or {}).items():
        if column in df.columns and len(df) and not KINDS[kind](df[column]):
            raise DataError(
                f"{path}: column {column!r} holds {df[column].dtype} values ({df[column].iloc[0]!r}), "
                f"expected {kind}; {rebuild}"
            )
    for column, allowed in (values or {}).items():
        allowed = list(allowed)
        if column not in df.columns:
            continue
        bad = df.loc[df[column].notna() & ~df[column].isin(allowed), column]
        if len(bad):
            raise DataError(
                f"{path}: column {column!r} holds {bad.iloc[0]!r} (row {bad.index[0]}), expected one of "
                f"{', '.join(map(str, allowed))}; {rebuild}"
            )
    return df


def read_parquet_meta(path: str | os.PathLike) -> dict:
    """The run metadata stored with :func:`write_parquet` (empty when none)."""
    md = pq.read_schema(path).metadata or {}
    return json.loads(md[META_KEY]) if META_KEY in md else {}


def read_schema_doc(path: str | os.PathLike) -> dict:
    """The column documentation stored with :func:`write_parquet` (empty when none)."""
    md = pq.read_schema(path).metadata or {}
    return json.loads(md[SCHEMA_KEY]) if SCHEMA_KEY in md else {}


def write_csv(df: pd.DataFrame, path: str | os.PathLike, **kwargs: Any) -> None:
    """Write a CSV table atomically (no index unless asked)."""
    kwargs.setdefault("index", False)
    with atomic_path(path) as tmp:
        df.to_csv(tmp, **kwargs)
