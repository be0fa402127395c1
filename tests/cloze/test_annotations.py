"""MozArt-format answers: parsing, the zip, malformed lines named by file and line."""

import io
import json
import zipfile

import pandas as pd
import pytest

from plmfair.cloze.annotations import (
    MOZART_SCHEMA,
    parse_mozart_lines,
    read_mozart_jsonl,
    read_mozart_zip,
)
from plmfair.errors import DataError
from plmfair.runs.data_summary import data_summary

LANGS = ["en", "es", "de", "fr"]


def _record(**over):
    rec = {
        "s_id": "1",
        "text": "A [MASK] .",
        "true_mask": "cat",
        "tag": "NOUN",
        "mask": " Cat ",
        "u_id": "u1",
        "native": 1,
        "nonnative": 0,
        "male": 0,
        "female": 1,
        "age": 30,
        "country_of_birth": "X",
        "current_country_of_residence": "X",
        "first_language": "English",
        "fluent_languages": None,
        "nationality": "X",
        "time_taken": 12.5,
    }
    rec.update(over)
    return rec


def test_parse_mozart_lines_fields_and_groups():
    lines = [
        json.dumps(_record()),
        "",
        json.dumps(_record(u_id="u2", male=1, female=0, native=0, nonnative=1, mask=True, age=None)),
    ]
    rows = parse_mozart_lines(lines, lang="en", source="x.jsonl")
    assert [r["group"] for r in rows] == ["FN", "MNN"]
    assert rows[0]["answer_raw"] == " Cat " and rows[0]["answer"] == "Cat"
    assert rows[1]["answer_raw"] == "true" and rows[1]["answer"] == "true"
    assert rows[1]["age"] is None and rows[1]["gender"] == "M" and rows[1]["native"] is False


def mozart_zip(tmp_path, lines: list[str], lang: str = "en"):
    """A MozArt-shaped archive (folder "MozArt 2/", a __MACOSX/ fork) holding ``lines``."""
    path = tmp_path / "MozArt.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"MozArt 2/{lang}_data_with_annotations.jsonl", "\n".join(lines) + "\n")
        zf.writestr(f"__MACOSX/MozArt 2/._{lang}_data_with_annotations.jsonl", b"\x00\x05")
    return path


MEMBER = "MozArt.zip:MozArt 2/en_data_with_annotations.jsonl"
# Every malformed MozArt input: (lines of the member, or raw bytes of the archive; the one line expected)
MOZART_ERRORS = {
    "bad JSON": ([json.dumps(_record()), "{broken"], f"{MEMBER} line 2: not valid JSON"),
    "truncated JSON": (['{"s_id": "1", "text": '], f"{MEMBER} line 1: not valid JSON"),
    "not an object": (["[1, 2]"], f"{MEMBER} line 1: expected a JSON object, got list"),
    "missing field": ([json.dumps({"s_id": "1"})], f"{MEMBER} line 1: missing field(s) ['text', 'mask', 'u_id'"),
    "male and female": ([json.dumps(_record(male=1, female=1))], "line 1: exactly one of male/female must be 1"),
    "native not a flag": ([json.dumps(_record(native=2))], "line 1: field 'native' must be 0 or 1, got 2"),
    "duplicate annotation": (
        [json.dumps(_record()), json.dumps(_record(u_id="u2")), json.dumps(_record(mask="dog"))],
        "line 3: annotator u1 answered sentence 1 already on line 1; each annotator answers a sentence once",
    ),
    "two texts": (
        [json.dumps(_record()), json.dumps(_record(u_id="u2", text="Another [MASK] ."))],
        "s_id 1 has two different texts",
    ),
    "empty file": ([""], "no annotations (the file is empty)"),
    "age in words": (
        [json.dumps(_record(age="twenty"))],
        f"{MEMBER} line 1: age is 'twenty'; it must be a whole number",
    ),
    "time in words": (
        [json.dumps(_record()), json.dumps(_record(u_id="u2", time_taken="3 min"))],
        f"{MEMBER} line 2: time_taken is '3 min'; it must be a number or null",
    ),
    "no gap": ([json.dumps(_record(text="No gap here ."))], "s_id 1: its text holds 0 [MASK] gaps"),
    "two gaps": ([json.dumps(_record(text="A [MASK] [MASK] ."))], "s_id 1: its text holds 2 [MASK] gaps"),
    "no such language": ([json.dumps(_record())], "MozArt.zip: no member named de_data_with_annotations.jsonl"),
    "not a zip": (b"PK\x03\x04 not really a zip", "MozArt.zip: not a readable zip archive"),
}


@pytest.mark.parametrize("case", list(MOZART_ERRORS))
def test_malformed_mozart_input_is_one_line_naming_file_and_line(tmp_path, case):
    content, message = MOZART_ERRORS[case]
    if isinstance(content, bytes):
        path = tmp_path / "MozArt.zip"
        path.write_bytes(content)
    else:
        path = mozart_zip(tmp_path, content)
    with pytest.raises(DataError) as err:
        read_mozart_zip(path, ["de" if case == "no such language" else "en"])
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_a_member_that_is_not_utf8_is_one_line_naming_it(tmp_path):
    path = tmp_path / "MozArt.zip"
    with zipfile.ZipFile(path, "w") as zf:  # Latin-1 bytes where UTF-8 belongs
        zf.writestr(
            "MozArt 2/en_data_with_annotations.jsonl", json.dumps(_record()).replace("Cat", "Cät").encode("latin-1")
        )
    with pytest.raises(DataError) as err:
        read_mozart_zip(path, ["en"])
    assert (
        str(err.value)
        == f"{tmp_path / MEMBER} line 1: not valid UTF-8 (invalid continuation byte); convert the file to UTF-8"
    )


def test_read_mozart_zip_demo(demo_data):
    df = read_mozart_zip(demo_data / "MozArt.zip", LANGS)
    assert list(df.columns) == list(MOZART_SCHEMA)
    assert sorted(df["lang"].unique()) == sorted(LANGS)
    assert set(df["group"]) == {"MN", "FN", "MNN", "FNN"}
    assert df["native"].dtype == bool and str(df["age"].dtype) == "Int64"
    # the demo archive carries the real file's boolean answer
    assert (df.loc[df["lang"] == "en", "answer_raw"] == "true").sum() == 1
    assert (df.groupby("lang").size() == 48).all()


def test_read_mozart_jsonl(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps(_record()) + "\n", encoding="utf-8")
    df = read_mozart_jsonl(path, "fr")
    assert df.loc[0, "lang"] == "fr" and df.loc[0, "answer"] == "Cat"


def test_real_mozart(shared_data):
    df = read_mozart_zip(shared_data / "mozart" / "MozArt.zip", LANGS)
    sizes = df.groupby("lang").size().to_dict()
    assert sizes == {"en": 600, "es": 620, "de": 600, "fr": 600}
    summary = data_summary({"mozart": {"mozart": df}}).set_index(["subset", "statistic"])["value"]
    assert summary[("en", "distinct_answers")] == 374  # as the paper reports
    assert summary[("de", "annotations_MNN")] == 140 and summary[("de", "annotations_FNN")] == 160
    assert summary[("es", "annotators")] == 62
    # the zip and the loose JSONL files agree
    loose = read_mozart_jsonl(shared_data / "mozart" / "en_data_with_annotations.jsonl", "en")
    pd.testing.assert_frame_equal(loose, df[df["lang"] == "en"].reset_index(drop=True))


def test_zip_read_from_bytes_roundtrip(tmp_path):
    """A MozArt-shaped archive written in memory parses the same as its member file."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("MozArt 2/fr_data_with_annotations.jsonl", json.dumps(_record(mask="Enfants ")) + "\n")
    path = tmp_path / "z.zip"
    path.write_bytes(buf.getvalue())
    assert read_mozart_zip(path, ["fr"]).loc[0, "answer"] == "Enfants"


# --- CrowS-Pairs files described by their config entry (Multilingual CrowS-Pairs layouts) ----


def test_answers_and_texts_are_read_in_one_unicode_form(tmp_path):
    """The same answer typed with a decomposed accent (NFD) is the same answer (NFC), scored once."""
    import unicodedata

    lines = [
        json.dumps(_record(text="Un [MASK] café .", mask="café")),
        json.dumps(
            _record(
                u_id="u2",
                text=unicodedata.normalize("NFD", "Un [MASK] café ."),
                mask=unicodedata.normalize("NFD", "café"),
            )
        ),
    ]
    path = tmp_path / "en.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    df = read_mozart_jsonl(path, "en")
    assert df["answer"].tolist() == ["café", "café"] and df["answer"].nunique() == 1 and df["text"].nunique() == 1
