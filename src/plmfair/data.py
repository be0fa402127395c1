"""Parsers that turn the raw MozArt and CrowS-Pairs files into tidy tables.

MozArt annotations (``results/data/mozart/annotations.parquet``), one row per annotation:

- lang (string): ISO 639-1 code of the cloze sentence (en, es, de, fr).
- s_id (string): sentence id, shared by the parallel sentences of a quadruple.
- text (string): the cloze sentence with the literal token ``[MASK]``.
- true_mask (string, nullable): the word masked in the source (unreliable outside English).
- tag (string, nullable): universal POS of the masked word.
- answer_raw (string, nullable): the annotator's answer as given; non-string JSON values as their JSON text.
- answer (string): ``answer_raw`` with surrounding white space trimmed ("" when missing).
- u_id (string): anonymised annotator id.
- gender (string): M or F.
- native (bool): True for native speakers of ``lang``.
- group (string): MN, FN, MNN or FNN (gender x native).
- age (Int64, nullable), country_of_birth, current_country_of_residence, first_language,
  fluent_languages, nationality (string, nullable), time_taken (float64, nullable): the other
  demographic and timing attributes as given.

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
"""

from __future__ import annotations

import io
import json
import logging
import math
import os
import re
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from plmfair.errors import DataError

log = logging.getLogger(__name__)

MOZART_SCHEMA = {
    "lang": "ISO 639-1 code of the cloze sentence",
    "s_id": "sentence id, shared by the parallel sentences of a quadruple",
    "text": "cloze sentence with the literal token [MASK]",
    "true_mask": "word masked in the source (unreliable outside English)",
    "tag": "universal POS of the masked word",
    "answer_raw": "annotator's answer as given (non-string JSON values as their JSON text)",
    "answer": "answer_raw trimmed of surrounding white space ('' when missing)",
    "u_id": "anonymised annotator id",
    "gender": "M or F",
    "native": "True for native speakers of lang",
    "group": "MN, FN, MNN or FNN (gender x native)",
    "age": "age in years (nullable)",
    "country_of_birth": "as given (nullable)",
    "current_country_of_residence": "as given (nullable)",
    "first_language": "as given (nullable)",
    "fluent_languages": "as given (nullable)",
    "nationality": "as given (nullable)",
    "time_taken": "seconds the annotator took (nullable)",
}

CROWS_SCHEMA = {
    "pair_id": "id in the source file (LA0..LA209: collected natively in French)",
    "lang": "language of the sentences",
    "sent_more": "the more stereotyping sentence (nullable when missing in the source)",
    "sent_less": "the less stereotyping sentence (nullable when missing in the source)",
    "stereo_antistereo": "stereo or antistereo (null when the file gives none)",
    "bias_type": "harmonised bias type (null when the file gives none)",
    "origin": "native (first written in this language) or translated",
    "duplicate_of": "the id this pair repeats (its own id is then <id>#<n>); null for the first or only pair",
}

# The annotator groups of MozArt: gender (M/F) x native (N) / non-native (NN) speaker.
GROUPS = ("MN", "FN", "MNN", "FNN")
# The literal gap of a cloze sentence, in MozArt's files and in constructed sets.
MASK = "[MASK]"
MOZART_REQUIRED = ("s_id", "text", "mask", "u_id", "male", "female", "native", "nonnative")
_DEMOGRAPHIC_STR = (
    "country_of_birth",
    "current_country_of_residence",
    "first_language",
    "fluent_languages",
    "nationality",
)

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


def _as_text(value) -> str | None:
    """Strings as they are; other JSON values (true, 3) as their JSON text; null/NaN as None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _flag(record: dict, key: str, where: str) -> bool:
    value = record.get(key)
    if value in (0, 1, True, False):
        return bool(value)
    raise DataError(f"{where}: field {key!r} must be 0 or 1, got {value!r}")


def parse_mozart_lines(lines: Iterable[str], *, lang: str, source: str) -> list[dict]:
    """Parse MozArt JSON lines (one annotation each) into annotation rows.

    ``source`` names the file in error messages; blank lines are skipped.
    """
    rows, row_lines = [], []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source} line {lineno}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno}); fix or remove the line") from exc
        if not isinstance(rec, dict):
            raise DataError(f"{where}: expected a JSON object, got {type(rec).__name__}")
        missing = [k for k in MOZART_REQUIRED if k not in rec]
        if missing:
            raise DataError(f"{where}: missing field(s) {missing}; every line needs {list(MOZART_REQUIRED)}")
        male, female = _flag(rec, "male", where), _flag(rec, "female", where)
        native, nonnative = _flag(rec, "native", where), _flag(rec, "nonnative", where)
        if male == female:
            raise DataError(f"{where}: exactly one of male/female must be 1 (got male={rec['male']}, female={rec['female']})")
        if native == nonnative:
            raise DataError(
                f"{where}: exactly one of native/nonnative must be 1 (got native={rec['native']}, nonnative={rec['nonnative']})"
            )
        gender = "M" if male else "F"
        answer_raw = _as_text(rec["mask"])
        age = rec.get("age")
        time_taken = rec.get("time_taken")
        rows.append(
            {
                "lang": lang,
                "s_id": _as_text(rec["s_id"]),
                "text": _as_text(rec["text"]),
                "true_mask": _as_text(rec.get("true_mask")),
                "tag": _as_text(rec.get("tag")),
                "answer_raw": answer_raw,
                "answer": (answer_raw or "").strip(),
                "u_id": _as_text(rec["u_id"]),
                "gender": gender,
                "native": native,
                "group": gender + ("N" if native else "NN"),
                "age": None if age is None or (isinstance(age, float) and math.isnan(age)) else int(age),
                **{k: _as_text(rec.get(k)) for k in _DEMOGRAPHIC_STR},
                "time_taken": None if time_taken is None else float(time_taken),
            }
        )
        row_lines.append(lineno)
    if not rows:
        raise DataError(f"{source}: no annotations (the file is empty); check that the download is complete")
    texts: dict[str, str] = {}
    for r in rows:
        if r["text"] is None or r["s_id"] is None:
            raise DataError(f"{source}: s_id and text may not be null (s_id={r['s_id']!r})")
        if texts.setdefault(r["s_id"], r["text"]) != r["text"]:
            raise DataError(f"{source}: s_id {r['s_id']} has two different texts; each sentence id must have one text")
    seen: dict[tuple[str, str], int] = {}
    for lineno, r in zip(row_lines, rows, strict=True):
        key = (r["u_id"], r["s_id"])
        if key in seen:
            raise DataError(f"{source} line {lineno}: annotator {r['u_id']} answered sentence {r['s_id']} already on "
                            f"line {seen[key]}; each annotator answers a sentence once: remove one of the two lines")
        seen[key] = lineno
    return rows


def mozart_frame(rows: list[dict]) -> pd.DataFrame:
    """Annotation rows as a DataFrame with the documented dtypes and column order."""
    df = pd.DataFrame(rows, columns=list(MOZART_SCHEMA))
    for col in MOZART_SCHEMA:
        if col == "native":
            df[col] = df[col].astype(bool)
        elif col == "age":
            df[col] = df[col].astype("Int64")
        elif col == "time_taken":
            df[col] = df[col].astype("float64")
        else:
            df[col] = df[col].astype("string")
    return df


def read_mozart_zip(path: str | os.PathLike, languages: Sequence[str]) -> pd.DataFrame:
    """Read ``{lang}_data_with_annotations.jsonl`` for each language straight from the MozArt zip.

    The zip's ``__MACOSX/`` resource forks and ``.DS_Store`` files are ignored.
    """
    path = Path(path)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataError(f"{path}: not a readable zip archive ({exc}); delete it and download it again") from exc
    rows: list[dict] = []
    with zf:
        members = [
            n for n in zf.namelist() if not n.startswith("__MACOSX/") and not n.endswith("/")
        ]
        for lang in languages:
            wanted = f"{lang}_data_with_annotations.jsonl"
            found = [n for n in members if n.rsplit("/", 1)[-1] == wanted]
            if not found:
                raise DataError(
                    f"{path}: no member named {wanted} (members: {sorted(members)}); "
                    f"check `datasets.mozart.languages` in the config"
                )
            try:
                raw = zf.read(found[0])
            except (zipfile.BadZipFile, OSError, EOFError, zipfile.LargeZipFile) as exc:
                raise DataError(f"{path}: member {found[0]} cannot be read ({exc}); the archive is damaged, download it again") from exc
            text = raw.decode("utf-8-sig")
            rows.extend(parse_mozart_lines(io.StringIO(text), lang=lang, source=f"{path}:{found[0]}"))
    return mozart_frame(rows)


def read_mozart_jsonl(path: str | os.PathLike, lang: str) -> pd.DataFrame:
    """Read one MozArt-format JSONL file (for example human answers to a newly built cloze set)."""
    path = Path(path)
    with open(path, encoding="utf-8-sig") as fh:
        return mozart_frame(parse_mozart_lines(fh, lang=lang, source=str(path)))


CROWS_COLUMNS = ("id", "sent_more", "sent_less", "stereo_antistereo", "bias_type")
DIRECTIONS = ("stereo", "antistereo")
# The published layouts: Nangia et al. (comma-separated) and Névéol et al. (tab-separated
# despite the .csv name); the pair id is the first column in both.
CROWS_FORMATS = {
    "nyu": {"delimiter": ",", "columns": {"id": 0, "sent_more": "sent_more", "sent_less": "sent_less",
                                          "stereo_antistereo": "stereo_antistereo", "bias_type": "bias_type"}},
    "inria": {"delimiter": "\t", "columns": {"id": 0, "sent_more": "sent_more", "sent_less": "sent_less",
                                            "stereo_antistereo": "stereo_antistereo", "bias_type": "bias_type"}},
}
ColumnSpec = str | int | Sequence[str | int] | None


def decode_utf8(raw: bytes, source: str) -> str:
    """UTF-8 text (a byte-order mark dropped); invalid bytes stop with the line they are on."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        lineno = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"{source} line {lineno}: not valid UTF-8 ({exc.reason}); convert the file to UTF-8") from exc


def _label_key(value: str) -> str:
    """A label as compared: trimmed, lower-cased, spaces and underscores as hyphens ('race_color',
    'physical appearance', 'sexual- orientation' all become hyphenated)."""
    key = str(value).strip().lower()
    key = re.sub(r"[\s_]*-[\s_]*", "-", key)
    return re.sub(r"[\s_]+", "-", key)


def _resolve_columns(header: list[str], columns: Mapping[str, ColumnSpec], source: str, fmt_hint: str) -> dict:
    """Column role -> list of positions (first non-empty cell wins), [] for a role with no column."""
    out: dict[str, list[int]] = {}
    for role in CROWS_COLUMNS:
        spec = columns.get(role)
        specs = [] if spec is None else [spec] if isinstance(spec, str | int) else list(spec)
        if not specs and role not in ("stereo_antistereo",):
            raise DataError(f"{source}: no column given for {role!r}; set columns.{role} of this data set in the config")
        positions = []
        for col in specs:
            if isinstance(col, int):
                if not 0 <= col < len(header):
                    raise DataError(f"{source}: column position {col} for {role!r} is outside the header "
                                    f"({len(header)} columns: {header})")
                positions.append(col)
                continue
            found = [i for i, name in enumerate(header) if name.strip() == col]
            if not found:
                raise DataError(f"{source}: missing column(s) [{col!r}] (found {header}); is the format right? "
                                f"({fmt_hint}) Name the columns under columns.{role} in the config")
            if len(found) > 1:
                raise DataError(f"{source}: the header names {col!r} {len(found)} times (positions {found}); give "
                                f"columns.{role} as the 0-based position of the one to read")
            positions.append(found[0])
        out[role] = positions
    return out


def _first_label(cells: list[str], aliases: Mapping[str, str | None], known: Mapping[str, str], where: str,
                 key: str, alias_key: str) -> str | None:
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
    import csv

    path = Path(path)
    if fmt not in CROWS_FORMATS:
        raise DataError(f"{path}: unknown CrowS-Pairs format {fmt!r}; use one of {sorted(CROWS_FORMATS)}")
    if not path.exists() or path.stat().st_size == 0:
        raise DataError(f"{path}: the file is missing or empty; download it again")
    preset = CROWS_FORMATS[fmt]
    sep = delimiter or preset["delimiter"]
    fmt_hint = f"{fmt!r}: {'tab' if sep == chr(9) else repr(sep)}-separated"
    text = decode_utf8(path.read_bytes(), str(path))
    csv.field_size_limit(max(csv.field_size_limit(), len(text)))
    try:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
        header = next(reader, None)
        records = [(reader.line_num, row) for row in reader]
    except csv.Error as exc:
        raise DataError(f"{path}: cannot be parsed as {fmt_hint} text ({exc})") from exc
    if header is None:
        raise DataError(f"{path}: the file is missing or empty; download it again")
    cols = _resolve_columns(header, {**preset["columns"], **(columns or {})}, str(path), fmt_hint)
    bt_aliases = {_label_key(k): v for k, v in (bias_type_aliases or {}).items()}
    dir_aliases = {_label_key(k): v for k, v in (direction_aliases or {}).items()}
    prefixes = sorted((id_prefix_aliases or {}).items(), key=lambda kv: -len(kv[0]))
    ref_direction = {} if reference is None else dict(zip(reference["pair_id"], reference["stereo_antistereo"],
                                                           strict=True))
    blank, records_out, seen = [], [], {}
    for lineno, row in records:
        if not any(cell.strip() for cell in row):
            blank.append(lineno)
            continue
        row = row + [""] * (len(header) - len(row))

        def cells(role, row=row):
            return [row[i] for i in cols[role]]

        pid = next((c for c in cells("id") if c.strip()), "").replace("\ufeff", "").strip()
        where = f"{path} line {lineno} (pair {pid or '?'})"
        if not pid:
            raise DataError(f"{where}: the pair id is empty")
        for old, new in prefixes:
            if pid.startswith(old):
                pid = new + pid[len(old):]
                break
        duplicate_of = None
        if pid in seen:
            if duplicate_ids != "keep_first":
                raise DataError(f"{path}: duplicate pair ids ['{pid}'] (lines {seen[pid][0]} and {lineno}); each pair "
                                f"needs its own id (or set duplicate_ids: keep_first for this data set)")
            seen[pid].append(lineno)
            duplicate_of, pid = pid, f"{pid}#{len(seen[pid])}"
            log.warning("%s: id %s repeats line %d; kept as %s and skipped by the scoring stage", where,
                        duplicate_of, seen[duplicate_of][0], pid)
        else:
            seen[pid] = [lineno]
        direction = _first_label(cells("stereo_antistereo"), dir_aliases, {d: d for d in DIRECTIONS}, where,
                                 "stereo_antistereo", "direction_aliases")
        if direction is None:
            direction = ref_direction.get(duplicate_of or pid)
            direction = default_direction if pd.isna(direction) else direction
        bias_type = _first_label(cells("bias_type"), bt_aliases, BIAS_TYPE_NAMES, where, "bias_type",
                                 "bias_type_aliases")
        more = next((c for c in cells("sent_more") if c != ""), None)
        less = next((c for c in cells("sent_less") if c != ""), None)
        # LA ids were collected natively in French; every other pair was first written in English.
        first_lang = "fr" if _NATIVE_FRENCH_ID.match(duplicate_of or pid) else "en"
        records_out.append({
            "pair_id": pid, "lang": lang, "sent_more": more, "sent_less": less, "stereo_antistereo": direction,
            "bias_type": bias_type, "origin": "native" if first_lang == lang else "translated",
            "duplicate_of": duplicate_of,
        })
    if not records_out:
        raise DataError(f"{path}: no pairs in the file")
    if blank:
        log.warning("%s: %d record(s) with every cell empty dropped (lines %s)", path, len(blank), blank[:10])
    df = pd.DataFrame(records_out, columns=list(CROWS_SCHEMA)).astype("string")
    n_missing = int(df["sent_more"].isna().sum() + df["sent_less"].isna().sum())
    if n_missing:
        log.warning("%s: %d sentence(s) missing; kept as null, the scoring stage skips and counts them", path, n_missing)
    unlabelled = int((df["stereo_antistereo"].isna() | df["bias_type"].isna()).sum())
    if unlabelled:
        log.warning("%s: %d pair(s) without a direction or bias type; kept, the scoring stage skips and counts them",
                    path, unlabelled)
    return df


DATA_SUMMARY_SCHEMA = {
    "dataset": "mozart, or crows_pairs/<data set>",
    "subset": "language (of a MozArt subset or of the data set)",
    "statistic": "what is counted (see plmfair.data.data_summary)",
    "value": "the count",
}


def data_summary(mozart: pd.DataFrame | None, crows: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One long table: per MozArt language and per CrowS-Pairs dataset, what is in the data.

    Columns: dataset, subset, statistic, value. MozArt statistics: sentences, annotations,
    annotators, annotations_<group>, distinct_answers (after trimming and lower-casing,
    empty answers not counted). CrowS-Pairs statistics: pairs, pairs_<bias_type>,
    pairs_stereo, pairs_antistereo, pairs_native, pairs_translated, pairs_missing_sentence,
    pairs_unlabelled, pairs_duplicate (the last three are skipped by the scoring stage).
    """
    out = []
    if mozart is not None:
        for lang, g in mozart.groupby("lang", sort=False):
            answers = g["answer"].str.lower()
            stats = {
                "sentences": g["s_id"].nunique(),
                "annotations": len(g),
                "annotators": g["u_id"].nunique(),
                **{f"annotations_{grp}": int((g["group"] == grp).sum()) for grp in GROUPS},
                "distinct_answers": answers[answers != ""].nunique(),
            }
            out += [("mozart", lang, k, int(v)) for k, v in stats.items()]
    for name, df in crows.items():
        stats = {"pairs": len(df)}
        for bt in BIAS_TYPES:
            n = int((df["bias_type"] == bt).sum())
            if n:
                stats[f"pairs_{bt}"] = n
        for d in ("stereo", "antistereo"):
            stats[f"pairs_{d}"] = int((df["stereo_antistereo"] == d).sum())
        for o in ("native", "translated"):
            stats[f"pairs_{o}"] = int((df["origin"] == o).sum())
        stats["pairs_missing_sentence"] = int((df["sent_more"].isna() | df["sent_less"].isna()).sum())
        stats["pairs_unlabelled"] = int((df["stereo_antistereo"].isna() | df["bias_type"].isna()).sum())
        if "duplicate_of" in df.columns:
            stats["pairs_duplicate"] = int(df["duplicate_of"].notna().sum())
        out += [(f"crows_pairs/{name}", str(df["lang"].iloc[0]), k, int(v)) for k, v in stats.items()]
    return pd.DataFrame(out, columns=["dataset", "subset", "statistic", "value"])


def read_text_lines(path: str | os.PathLike, member: str | None = None) -> tuple[list[str], str]:
    """The lines of a UTF-8 text file (plain, .gz, or ``member`` of a tar or zip archive) and a
    name for messages (``archive:member``). Lines split on newline only, so stray control
    characters cannot shift a parallel corpus; a final newline adds no line."""
    import gzip
    import tarfile

    path = Path(path)
    source = f"{path}:{member}" if member else str(path)
    if member:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
                if member not in names:
                    raise DataError(_no_member(path, member, names))
                raw = zf.read(member)
        else:
            try:
                with tarfile.open(path) as tf:
                    try:
                        fh = tf.extractfile(member)
                    except KeyError:
                        raise DataError(_no_member(path, member, tf.getnames())) from None
                    if fh is None:
                        raise DataError(f"{source}: not a regular file in the archive")
                    raw = fh.read()
            except tarfile.TarError as exc:
                raise DataError(f"{path}: not a readable tar or zip archive ({exc}); delete it and download it again") from exc
    elif path.suffix == ".gz":
        with gzip.open(path, "rb") as fh:
            raw = fh.read()
    else:
        raw = path.read_bytes()
    lines = decode_utf8(raw, source).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln.rstrip("\r") for ln in lines], source


def _no_member(path, member, names) -> str:
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
