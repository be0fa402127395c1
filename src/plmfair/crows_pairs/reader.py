"""CrowS-Pairs files read into one row per pair, in a published layout (Nangia et al.'s, Névéol et
al.'s) or as the data set's config entry describes it (Multilingual CrowS-Pairs).

CrowS-Pairs (``results/data/crows_pairs/{dataset}.parquet``), one row per pair:

- pair_id (string): the id of the source file (numbers; LA0..LA209 for pairs collected natively in French).
- lang (string): language of the sentences.
- sent_more (string, nullable): the more stereotyping sentence.
- sent_less (string, nullable): the less stereotyping sentence.
- stereo_antistereo (string): stereo or antistereo.
- bias_type (string): harmonised bias type (race-color, gender, socioeconomic, nationality, religion,
  age, sexual-orientation, physical-appearance, disability, other).
- origin (string): native (first written in this language) or translated; in the Névéol et al.
  files ids LA0..LA209 were collected in French (native in fr, translated in en), the rest in English.
- cluster (string, nullable): pairs the source says are not independent draws (Nangia et al.'s
  ``anon_writer``: the pairs one person wrote); null when the file gives no grouping.
"""

from __future__ import annotations

import csv
import io
import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from plmfair.errors import DataError
from plmfair.io.text_files import decode_utf8

log = logging.getLogger(__name__)

CROWS_SCHEMA = {
    "pair_id": "id in the source file (LA0..LA209: collected natively in French)",
    "lang": "language of the sentences",
    "sent_more": "the more stereotyping sentence (nullable when missing in the source)",
    "sent_less": "the less stereotyping sentence (nullable when missing in the source)",
    "stereo_antistereo": "stereo or antistereo (null when the file gives none)",
    "bias_type": "harmonised bias type (null when the file gives none)",
    "origin": "native (first written in this language) or translated",
    "duplicate_of": "the id this pair repeats (its own id is then <id>#<n>); null for the first or only pair",
    "cluster": "the source's grouping of pairs that are not independent draws (Nangia et al.'s anon_writer: the "
    "pairs one person wrote); null when the file gives none",
}
BIAS_TYPE_NAMES = {
    "race-color": "race-color",
    "race": "race-color",
    "gender": "gender",
    "socioeconomic": "socioeconomic",
    "nationality": "nationality",
    "religion": "religion",
    "age": "age",
    "sexual-orientation": "sexual-orientation",
    "physical-appearance": "physical-appearance",
    "disability": "disability",
    "autre": "other",
    "other": "other",
}
BIAS_TYPES = (
    "race-color",
    "gender",
    "socioeconomic",
    "nationality",
    "religion",
    "age",
    "sexual-orientation",
    "physical-appearance",
    "disability",
    "other",
)
_NATIVE_FRENCH_ID = re.compile(r"^LA\d+$")

CROWS_COLUMNS = ("id", "sent_more", "sent_less", "stereo_antistereo", "bias_type", "cluster")
# roles a file may lack: no direction (given by a reference or a default), no grouping of its pairs
OPTIONAL_COLUMNS = ("stereo_antistereo", "cluster")
DIRECTIONS = ("stereo", "antistereo")
# The published layouts: Nangia et al. (comma-separated) and Névéol et al. (tab-separated
# despite the .csv name); the pair id is the first column in both.
CROWS_FORMATS: dict[str, dict[str, Any]] = {
    "nyu": {
        "delimiter": ",",
        "columns": {
            "id": 0,
            "sent_more": "sent_more",
            "sent_less": "sent_less",
            "stereo_antistereo": "stereo_antistereo",
            "bias_type": "bias_type",
            "cluster": "anon_writer",
        },
    },
    "inria": {
        "delimiter": "\t",
        "columns": {
            "id": 0,
            "sent_more": "sent_more",
            "sent_less": "sent_less",
            "stereo_antistereo": "stereo_antistereo",
            "bias_type": "bias_type",
        },
    },
}
ColumnSpec = str | int | Sequence[str | int] | None


def _label_key(value: str) -> str:
    """A label as compared: trimmed, lower-cased, spaces and underscores as hyphens ('race_color',
    'physical appearance', 'sexual- orientation' all become hyphenated)."""
    key = str(value).strip().lower()
    key = re.sub(r"[\s_]*-[\s_]*", "-", key)
    return re.sub(r"[\s_]+", "-", key)


def _resolve_columns(
    header: list[str], columns: Mapping[str, ColumnSpec], source: str, fmt_hint: str, *, configured: Mapping = {}
) -> dict:
    """Column role -> list of positions (first non-empty cell wins), [] for a role with no column; an
    optional role the format names and the config does not (``configured``) may be absent from the file."""
    out: dict[str, list[int]] = {}
    for role in CROWS_COLUMNS:
        spec = columns.get(role)
        specs = [] if spec is None else [spec] if isinstance(spec, str | int) else list(spec)
        if role in OPTIONAL_COLUMNS and role not in configured:
            names = {name.strip() for name in header}
            specs = [col for col in specs if col in names]
        if not specs and role not in OPTIONAL_COLUMNS:
            raise DataError(
                f"{source}: no column given for {role!r}; set columns.{role} of this data set in the config"
            )
        positions = []
        for col in specs:
            if isinstance(col, int):
                if not 0 <= col < len(header):
                    raise DataError(
                        f"{source}: column position {col} for {role!r} is outside the header "
                        f"({len(header)} columns: {header})"
                    )
                positions.append(col)
                continue
            found = [i for i, name in enumerate(header) if name.strip() == col]
            if not found:
                raise DataError(
                    f"{source}: missing column(s) [{col!r}] (found {header}); is the format right? "
                    f"({fmt_hint}) Name the columns under columns.{role} in the config"
                )
            if len(found) > 1:
                raise DataError(
                    f"{source}: the header names {col!r} {len(found)} times (positions {found}); give "
                    f"columns.{role} as the 0-based position of the one to read"
                )
            positions.append(found[0])
        out[role] = positions
    return out


def _first_label(
    cells: list[str], aliases: Mapping[str, str | None], known: Mapping[str, str], where: str, key: str, alias_key: str
) -> str | None:
    """The first usable label among the cells: compared as :func:`_label_key`, harmonised through
    ``known`` (spelling -> label) or ``aliases``; an alias to null marks a value as unusable (the
    next cell is tried). A value neither knows is an error."""
    for cell in cells:
        if not cell.strip():
            continue
        norm = _label_key(cell)
        if norm in aliases:
            label = aliases[norm]
        elif norm in known:
            label = known[norm]
        else:
            raise DataError(
                f"{where}: {key} must be one of {sorted(set(known.values()))} (got the unknown {key} {cell!r}); "
                f"map that spelling under {alias_key} of this data set in the config, to a known value or to null "
                f"to treat it as missing"
            )
        if label is not None:
            return label
    return None


def _swallowed(path: Path, text: str, sep: str, first: int, last: int, row: list[str]) -> None:
    """Warn of a record that a quote opening a field ran over line ends (``first`` to ``last``), naming the
    lines that look like pairs of their own (as many fields as the record) and their ids: pairs the file lost
    unless the quote is meant (a sentence with a line break, as a few translations have)."""
    lines = text.splitlines()[first:last]  # the lines after the record's first (line numbers are 1-based)
    lost = [
        (first + 1 + i, line.split(sep)[0].strip('" '))
        for i, line in enumerate(lines)
        if line.count(sep) >= len(row) - 1
    ]
    if lost:
        log.warning(
            '%s line %d: a quote (") opens a field that closes only on line %d, so the %d line(s) after it, which '
            "look like pairs (ids %s), were read as part of that field; if they are pairs, remove the stray quote "
            "or quote the field whole",
            path,
            first,
            last,
            len(lost),
            ", ".join(pid or "?" for _, pid in lost[:10]) + (" ..." if len(lost) > 10 else ""),
        )


def read_crows_pairs(
    path: str | os.PathLike,
    *,
    lang: str,
    fmt: str = "nyu",
    delimiter: str | None = None,
    columns: Mapping[str, ColumnSpec] | None = None,
    bias_type_aliases: Mapping[str, str | None] | None = None,
    direction_aliases: Mapping[str, str | None] | None = None,
    default_direction: str | None = None,
    id_prefix_aliases: Mapping[str, str] | None = None,
    duplicate_ids: str = "error",
    reference: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Read a CrowS-Pairs file (:data:`CROWS_SCHEMA`), in a published layout or as a config describes it.

    ``fmt`` (``nyu`` or ``inria``) gives the delimiter and the column names; ``delimiter``
    and ``columns`` (role -> column name, 0-based position, or a list of them of which the
    first non-empty cell wins; ``stereo_antistereo: null`` for a file without directions)
    override them. Labels are trimmed, lower-cased and hyphenated before they are compared;
    ``bias_type_aliases`` and ``direction_aliases`` map further spellings (to null: treat as
    missing). A pair without a usable direction takes its direction from ``reference`` (an
    ingested data set, joined on pair id) or ``default_direction``; one still without a
    direction or bias type is kept unlabelled (the scoring stage skips and counts it).
    Pair ids are trimmed (a stray byte-order mark included) and ``id_prefix_aliases``
    rewrites a prefix (``fr_FR12`` -> ``LA12``) so that a pair can be followed across
    languages. A repeated id is an error, or with ``duplicate_ids: keep_first`` is kept as
    ``<id>#<n>`` with ``duplicate_of`` set (skipped by the scoring stage). Missing
    sentences are kept as null; records with every cell empty are dropped and counted.
    """

    path = Path(path)
    preset = _preset(path, fmt)
    sep = delimiter or preset["delimiter"]
    fmt_hint = f"{fmt!r}: {'tab' if sep == chr(9) else repr(sep)}-separated"
    text = decode_utf8(path.read_bytes(), str(path))
    header, records, spans = _records(path, text, sep, fmt_hint)
    cols = _resolve_columns(
        header, {**preset["columns"], **(columns or {})}, str(path), fmt_hint, configured=columns or {}
    )
    bt_aliases = {_label_key(k): v for k, v in (bias_type_aliases or {}).items()}
    dir_aliases = {_label_key(k): v for k, v in (direction_aliases or {}).items()}
    prefixes = sorted((id_prefix_aliases or {}).items(), key=lambda kv: -len(kv[0]))
    ref_direction = (
        {} if reference is None else dict(zip(reference["pair_id"], reference["stereo_antistereo"], strict=True))
    )
    blank: list[int] = []
    records_out: list[dict] = []
    seen: dict[str, list[int]] = {}
    for lineno, row in records:
        if not any(cell.strip() for cell in row):
            blank.append(lineno)
            continue
        row = row + [""] * (len(header) - len(row))

        def cells(role: str, row: list[str] = row) -> list[str]:
            return [row[i] for i in cols[role]]

        pid = next((c for c in cells("id") if c.strip()), "").replace("\ufeff", "").strip()
        where = f"{path} line {lineno} (pair {pid or '?'})"
        pid, duplicate_of = _pair_id(
            pid, path, lineno, where=where, prefixes=prefixes, seen=seen, duplicate_ids=duplicate_ids
        )
        direction = _first_label(
            cells("stereo_antistereo"), dir_aliases, DIRECTION_NAMES, where, "stereo_antistereo", "direction_aliases"
        )
        if direction is None:
            direction = ref_direction.get(duplicate_of or pid)
            direction = default_direction if pd.isna(direction) else direction
        bias_type = _first_label(
            cells("bias_type"), bt_aliases, BIAS_TYPE_NAMES, where, "bias_type", "bias_type_aliases"
        )
        records_out.append(_pair(pid, duplicate_of, lang, cells, stereo_antistereo=direction, bias_type=bias_type))
    if not records_out:
        raise DataError(f"{path}: no pairs in the file")
    for first, last, row in spans:
        _swallowed(path, text, sep, first, last, row)
    df = pd.DataFrame(records_out, columns=list(CROWS_SCHEMA)).astype("string")
    _warn_of_gaps(path, df, blank)
    return df


def _preset(path: Path, fmt: str) -> dict:
    """The delimiter and column names of a published layout, refused for an unknown one or a file that is
    missing or empty."""
    if fmt not in CROWS_FORMATS:
        raise DataError(f"{path}: unknown CrowS-Pairs format {fmt!r}; use one of {sorted(CROWS_FORMATS)}")
    if not path.exists() or path.stat().st_size == 0:
        raise DataError(f"{path}: the file is missing or empty; download it again")
    return CROWS_FORMATS[fmt]


# a direction's spellings once trimmed, lower-cased and hyphenated
DIRECTION_NAMES = {d: d for d in DIRECTIONS}


def _pair(
    pid: str, duplicate_of: str | None, lang: str, cells: Callable[[str], list[str]], **labels: str | None
) -> dict:
    """One pair of :data:`CROWS_SCHEMA` from its record's ``cells`` (role -> the cells it may take, the first
    non-empty one wins) and its labels; its origin from its id (LA ids were collected natively in French, every
    other pair was first written in English)."""
    first_lang = "fr" if _NATIVE_FRENCH_ID.match(duplicate_of or pid) else "en"
    return {
        "pair_id": pid,
        "lang": lang,
        "sent_more": next((c for c in cells("sent_more") if c != ""), None),
        "sent_less": next((c for c in cells("sent_less") if c != ""), None),
        **labels,
        "origin": "native" if first_lang == lang else "translated",
        "duplicate_of": duplicate_of,
        "cluster": next((c.strip() for c in cells("cluster") if c.strip()), None),
    }


def _records(path: Path, text: str, sep: str, fmt_hint: str) -> tuple[list[str], list, list]:
    """The header, every record with its line number, and the records a quoted field spread over several lines
    (first line, last line, record) of a delimited ``text``."""
    csv.field_size_limit(max(csv.field_size_limit(), len(text)))
    try:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
        header = next(reader, None)
        records, spans, start = [], [], reader.line_num + 1
        for row in reader:
            records.append((reader.line_num, row))
            if reader.line_num > start:  # a quoted field ran over line ends: the lines it took in
                spans.append((start, reader.line_num, row))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise DataError(f"{path}: cannot be parsed as {fmt_hint} text ({exc})") from exc
    if header is None:
        raise DataError(f"{path}: the file is missing or empty; download it again")
    return header, records, spans


def _pair_id(
    pid: str,
    path: Path,
    lineno: int,
    *,
    where: str,
    prefixes: Iterable[tuple[str, str]],
    seen: dict[str, list[int]],
    duplicate_ids: str,
) -> tuple[str, str | None]:
    """A record's pair id with its prefix rewritten (``id_prefix_aliases``), and the id it repeats (None when
    it is the first): a repeat is an error, or with ``duplicate_ids: keep_first`` kept as ``<id>#<n>``.
    ``seen`` (id -> the lines that gave it) is updated."""
    if not pid:
        raise DataError(f"{where}: the pair id is empty")
    for old, new in prefixes:
        if pid.startswith(old):
            pid = new + pid[len(old) :]
            break
    if pid not in seen:
        seen[pid] = [lineno]
        return pid, None
    if duplicate_ids != "keep_first":
        raise DataError(
            f"{path}: duplicate pair ids ['{pid}'] (lines {seen[pid][0]} and {lineno}); each pair "
            f"needs its own id (or set duplicate_ids: keep_first for this data set)"
        )
    seen[pid].append(lineno)
    renamed = f"{pid}#{len(seen[pid])}"
    log.warning(
        "%s: id %s repeats line %d; kept as %s and skipped by the scoring stage", where, pid, seen[pid][0], renamed
    )
    return renamed, pid


def _warn_of_gaps(path: Path, df: pd.DataFrame, blank: list[int]) -> None:
    """Log the records with every cell empty (dropped, at lines ``blank``), the sentences missing and the pairs
    without a direction or bias type (kept: the scoring stage skips and counts them)."""
    if blank:
        log.warning("%s: %d record(s) with every cell empty dropped (lines %s)", path, len(blank), blank[:10])
    n_missing = int(df["sent_more"].isna().sum() + df["sent_less"].isna().sum())
    if n_missing:
        log.warning(
            "%s: %d sentence(s) missing; kept as null, the scoring stage skips and counts them", path, n_missing
        )
    unlabelled = int((df["stereo_antistereo"].isna() | df["bias_type"].isna()).sum())
    if unlabelled:
        log.warning(
            "%s: %d pair(s) without a direction or bias type; kept, the scoring stage skips and counts them",
            path,
            unlabelled,
        )
