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
    "stereo_antistereo": "stereo or antistereo",
    "bias_type": "harmonised bias type",
    "origin": "native (first written in this language) or translated",
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
    rows = []
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
    if not rows:
        raise DataError(f"{source}: no annotations (the file is empty); check that the download is complete")
    texts: dict[str, str] = {}
    for r in rows:
        if r["text"] is None or r["s_id"] is None:
            raise DataError(f"{source}: s_id and text may not be null (s_id={r['s_id']!r})")
        if texts.setdefault(r["s_id"], r["text"]) != r["text"]:
            raise DataError(f"{source}: s_id {r['s_id']} has two different texts; each sentence id must have one text")
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


def _harmonise_bias_type(value, where: str) -> str:
    key = str(value).strip().lower().replace(" ", "-").replace("_", "-")
    if key not in BIAS_TYPE_NAMES:
        raise DataError(f"{where}: unknown bias_type {value!r}; known: {sorted(BIAS_TYPE_NAMES)}")
    return BIAS_TYPE_NAMES[key]


def read_crows_pairs(path: str | os.PathLike, *, fmt: str, lang: str) -> pd.DataFrame:
    """Read a CrowS-Pairs file: ``fmt`` is ``nyu`` (comma-separated, Nangia et al.) or
    ``inria`` (tab-separated despite the .csv name, Névéol et al.; ids LA0..LA209 mark
    pairs collected natively in French).

    Rows with a missing sentence are kept (sentences null) so that the scoring stage
    can count and report them; a missing label or bias type is an error.
    """
    path = Path(path)
    if fmt not in ("nyu", "inria"):
        raise DataError(f"{path}: unknown CrowS-Pairs format {fmt!r}; use 'nyu' or 'inria'")
    if not path.exists() or path.stat().st_size == 0:
        raise DataError(f"{path}: the file is missing or empty; download it again")
    sep = "," if fmt == "nyu" else "\t"
    try:
        raw = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot be parsed as {'comma' if fmt == 'nyu' else 'tab'}-separated text ({exc})") from exc
    id_col = raw.columns[0]
    required = ["sent_more", "sent_less", "stereo_antistereo", "bias_type"]
    missing = [c for c in required if c not in raw.columns]
    if missing:
        raise DataError(
            f"{path}: missing column(s) {missing} (found {list(raw.columns)}); "
            f"is the format right? ({fmt!r}: {'comma' if fmt == 'nyu' else 'tab'}-separated)"
        )
    if raw.empty:
        raise DataError(f"{path}: no pairs in the file")
    records = []
    for i, rec in enumerate(raw.to_dict("records"), start=2):
        pair_id = rec.get(id_col)
        where = f"{path} line {i} (pair {pair_id})"
        if pd.isna(pair_id) or str(pair_id).strip() == "":
            raise DataError(f"{where}: the pair id (first column) is empty")
        direction = rec["stereo_antistereo"]
        if pd.isna(direction) or direction.strip() not in ("stereo", "antistereo"):
            raise DataError(f"{where}: stereo_antistereo must be 'stereo' or 'antistereo', got {direction!r}")
        if pd.isna(rec["bias_type"]):
            raise DataError(f"{where}: bias_type is empty")
        pid = str(pair_id).strip()
        # LA ids were collected natively in French: native in the French file, translated
        # from French in the English one; every other pair was first written in English.
        collected_in_french = fmt == "inria" and bool(_NATIVE_FRENCH_ID.match(pid))
        native = collected_in_french == (lang == "fr")
        records.append(
            {
                "pair_id": pid,
                "lang": lang,
                "sent_more": None if pd.isna(rec["sent_more"]) else rec["sent_more"],
                "sent_less": None if pd.isna(rec["sent_less"]) else rec["sent_less"],
                "stereo_antistereo": direction.strip(),
                "bias_type": _harmonise_bias_type(rec["bias_type"], where),
                "origin": "native" if native else "translated",
            }
        )
    df = pd.DataFrame(records, columns=list(CROWS_SCHEMA)).astype("string")
    dup = df["pair_id"][df["pair_id"].duplicated()]
    if len(dup):
        raise DataError(f"{path}: duplicate pair ids {sorted(set(dup))[:5]}; each pair needs its own id")
    n_missing = int(df["sent_more"].isna().sum() + df["sent_less"].isna().sum())
    if n_missing:
        log.warning("%s: %d sentence(s) missing; kept as null, the scoring stage skips and counts them", path, n_missing)
    return df


def data_summary(mozart: pd.DataFrame | None, crows: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One long table: per MozArt language and per CrowS-Pairs dataset, what is in the data.

    Columns: dataset, subset, statistic, value. MozArt statistics: sentences, annotations,
    annotators, annotations_<group>, distinct_answers (after trimming and lower-casing,
    empty answers not counted). CrowS-Pairs statistics: pairs, pairs_<bias_type>,
    pairs_stereo, pairs_antistereo, pairs_native, pairs_translated.
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
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        lineno = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"{source} line {lineno}: not valid UTF-8 ({exc.reason}); convert the file to UTF-8") from exc
    lines = text.split("\n")
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
