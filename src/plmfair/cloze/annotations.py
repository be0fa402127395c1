"""Human answers to cloze sentences in MozArt's JSONL format: MozArt's own (the zip of its
repository) and answers collected for a constructed set, read into one row per annotation.

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
"""

from __future__ import annotations

import io
import json
import logging
import math
import os
import unicodedata
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from plmfair.errors import DataError
from plmfair.io.parquet import write_parquet
from plmfair.io.text_files import decode_utf8
from plmfair.text import MASK

log = logging.getLogger(__name__)

# The annotator groups of MozArt: gender (M/F) x native (N) / non-native (NN) speaker.
GROUPS = ("MN", "FN", "MNN", "FNN")

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
MOZART_REQUIRED = ("s_id", "text", "mask", "u_id", "male", "female", "native", "nonnative")
_DEMOGRAPHIC_STR = (
    "country_of_birth",
    "current_country_of_residence",
    "first_language",
    "fluent_languages",
    "nationality",
)


def _nfc(text: str | None) -> str | None:
    return None if text is None else unicodedata.normalize("NFC", text)


def _number(value: object, field: str, where: str, *, whole: bool = False) -> int | float | None:
    """A numeric field (``age``, ``time_taken``): a number or missing; anything else stops naming the line."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (whole and value != int(value)):
        raise DataError(f"{where}: {field} is {value!r}; it must be a {'whole ' if whole else ''}number or null")
    return int(value) if whole else float(value)


def _as_text(value: object) -> str | None:
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
            raise DataError(
                f"{where}: not valid JSON ({exc.msg} at column {exc.colno}); fix or remove the line"
            ) from exc
        if not isinstance(rec, dict):
            raise DataError(f"{where}: expected a JSON object, got {type(rec).__name__}")
        missing = [k for k in MOZART_REQUIRED if k not in rec]
        if missing:
            raise DataError(f"{where}: missing field(s) {missing}; every line needs {list(MOZART_REQUIRED)}")
        male, female = _flag(rec, "male", where), _flag(rec, "female", where)
        native, nonnative = _flag(rec, "native", where), _flag(rec, "nonnative", where)
        if male == female:
            raise DataError(
                f"{where}: exactly one of male/female must be 1 (got male={rec['male']}, female={rec['female']})"
            )
        if native == nonnative:
            raise DataError(
                f"{where}: exactly one of native/nonnative must be 1 (got native={rec['native']}, "
                f"nonnative={rec['nonnative']})"
            )
        gender = "M" if male else "F"
        answer_raw = _as_text(rec["mask"])
        age = _number(rec.get("age"), "age", where, whole=True)
        time_taken = _number(rec.get("time_taken"), "time_taken", where)
        rows.append(
            {
                "lang": lang,
                "s_id": _as_text(rec["s_id"]),
                # one Unicode form (NFC) for texts and answers: the same answer typed with composed or
                # decomposed accents is one answer, scored once
                "text": _nfc(_as_text(rec["text"])),
                "true_mask": _as_text(rec.get("true_mask")),
                "tag": _as_text(rec.get("tag")),
                "answer_raw": answer_raw,
                "answer": _nfc((answer_raw or "").strip()),
                "u_id": _as_text(rec["u_id"]),
                "gender": gender,
                "native": native,
                "group": gender + ("N" if native else "NN"),
                "age": age,
                **{k: _as_text(rec.get(k)) for k in _DEMOGRAPHIC_STR},
                "time_taken": time_taken,
            }
        )
        row_lines.append(lineno)
    if not rows:
        raise DataError(f"{source}: no annotations (the file is empty); check that the download is complete")
    texts: dict[object, object] = {}
    for r in rows:
        if r["text"] is None or r["s_id"] is None:
            raise DataError(f"{source}: s_id and text may not be null (s_id={r['s_id']!r})")
        if str(r["text"]).count(MASK) != 1:
            raise DataError(
                f"{source}: s_id {r['s_id']}: its text holds {str(r['text']).count(MASK)} {MASK} gaps "
                f"({str(r['text'])[:80]!r}); a cloze sentence has exactly one"
            )
        if texts.setdefault(r["s_id"], r["text"]) != r["text"]:
            raise DataError(f"{source}: s_id {r['s_id']} has two different texts; each sentence id must have one text")
    seen: dict[tuple[object, object], int] = {}
    for lineno, r in zip(row_lines, rows, strict=True):
        key = (r["u_id"], r["s_id"])
        if key in seen:
            raise DataError(
                f"{source} line {lineno}: annotator {r['u_id']} answered sentence {r['s_id']} already on "
                f"line {seen[key]}; each annotator answers a sentence once: remove one of the two lines"
            )
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
        members = [n for n in zf.namelist() if not n.startswith("__MACOSX/") and not n.endswith("/")]
        for lang in languages:
            wanted = f"{lang}_data_with_annotations.jsonl"
            found = [n for n in members if n.rsplit("/", 1)[-1] == wanted]
            if not found:
                raise DataError(
                    f"{path}: no member named {wanted} (members: {sorted(members)}); "
                    f"check `datasets.cloze_tests.<name>.languages` in the config"
                )
            try:
                raw = zf.read(found[0])
            except (zipfile.BadZipFile, OSError, EOFError, zipfile.LargeZipFile) as exc:
                raise DataError(
                    f"{path}: member {found[0]} cannot be read ({exc}); the archive is damaged, download it again"
                ) from exc
            source = f"{path}:{found[0]}"
            rows.extend(parse_mozart_lines(io.StringIO(decode_utf8(raw, source)), lang=lang, source=source))
    return mozart_frame(rows)


def ingest_cloze_test(*, archive: str | os.PathLike, annotations: str | os.PathLike, languages: Sequence[str]) -> None:
    """The ``ingest_cloze_test`` job: a ready-made cloze test's archive to one Parquet row per
    annotation (:data:`MOZART_SCHEMA`)."""
    write_parquet(df=read_mozart_zip(archive, languages), path=annotations, schema_doc=MOZART_SCHEMA)


def read_mozart_jsonl(path: str | os.PathLike, lang: str) -> pd.DataFrame:
    """Read one MozArt-format JSONL file (for example human answers to a newly built cloze set)."""
    path = Path(path)
    text = decode_utf8(path.read_bytes(), str(path))
    return mozart_frame(parse_mozart_lines(io.StringIO(text), lang=lang, source=str(path)))
