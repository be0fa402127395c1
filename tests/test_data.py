import io
import json
import zipfile

import pandas as pd
import pytest

from plmfair.data import (
    BIAS_TYPES,
    MOZART_SCHEMA,
    data_summary,
    parse_mozart_lines,
    read_crows_pairs,
    read_mozart_jsonl,
    read_mozart_zip,
)
from plmfair.errors import DataError

LANGS = ["en", "es", "de", "fr"]


def _record(**over):
    rec = {
        "s_id": "1", "text": "A [MASK] .", "true_mask": "cat", "tag": "NOUN", "mask": " Cat ", "u_id": "u1",
        "native": 1, "nonnative": 0, "male": 0, "female": 1, "age": 30, "country_of_birth": "X",
        "current_country_of_residence": "X", "first_language": "English", "fluent_languages": None,
        "nationality": "X", "time_taken": 12.5,
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


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"s_id": "1", "text": ', "x.jsonl line 1: not valid JSON"),
        (json.dumps({k: v for k, v in _record().items() if k != "u_id"}), "missing field(s) ['u_id']"),
        (json.dumps(_record(male=1, female=1)), "exactly one of male/female"),
        (json.dumps(_record(native=2)), "'native' must be 0 or 1"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_parse_mozart_lines_errors_name_file_and_line(line, message):
    with pytest.raises(DataError) as err:
        parse_mozart_lines([line], lang="en", source="x.jsonl")
    assert message in str(err.value)
    assert "x.jsonl line 1" in str(err.value)


def test_parse_mozart_empty_file_and_conflicting_text():
    with pytest.raises(DataError, match="no annotations"):
        parse_mozart_lines(["", "  "], lang="en", source="e.jsonl")
    lines = [json.dumps(_record()), json.dumps(_record(text="Another [MASK] ."))]
    with pytest.raises(DataError, match="s_id 1 has two different texts"):
        parse_mozart_lines(lines, lang="en", source="e.jsonl")


def test_read_mozart_zip_demo(demo_data):
    df = read_mozart_zip(demo_data / "MozArt.zip", LANGS)
    assert list(df.columns) == list(MOZART_SCHEMA)
    assert sorted(df["lang"].unique()) == sorted(LANGS)
    assert set(df["group"]) == {"MN", "FN", "MNN", "FNN"}
    assert df["native"].dtype == bool and str(df["age"].dtype) == "Int64"
    # the demo archive carries the real file's boolean answer
    assert (df.loc[df["lang"] == "en", "answer_raw"] == "true").sum() == 1
    assert (df.groupby("lang").size() == 48).all()


def test_read_mozart_zip_missing_member_and_truncated(tmp_path, demo_data):
    with pytest.raises(DataError, match="no member named xx_data_with_annotations.jsonl"):
        read_mozart_zip(demo_data / "MozArt.zip", ["xx"])
    data = (demo_data / "MozArt.zip").read_bytes()
    cut = tmp_path / "cut.zip"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match="cut.zip: not a readable zip archive"):
        read_mozart_zip(cut, ["en"])


def test_read_mozart_zip_bad_json_names_member_and_line(tmp_path):
    path = tmp_path / "m.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("MozArt 2/en_data_with_annotations.jsonl", json.dumps(_record()) + "\n{broken\n")
        zf.writestr("__MACOSX/MozArt 2/._en_data_with_annotations.jsonl", b"\x00\x05")
    with pytest.raises(DataError, match=r"m.zip:MozArt 2/en_data_with_annotations.jsonl line 2: not valid JSON"):
        read_mozart_zip(path, ["en"])


def test_read_mozart_jsonl(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps(_record()) + "\n", encoding="utf-8")
    df = read_mozart_jsonl(path, "fr")
    assert df.loc[0, "lang"] == "fr" and df.loc[0, "answer"] == "Cat"


def test_read_crows_pairs_nyu_and_inria(demo_data):
    en = read_crows_pairs(demo_data / "crows_pairs_demo_en.csv", fmt="nyu", lang="en")
    fr = read_crows_pairs(demo_data / "crows_pairs_demo_fr.csv", fmt="inria", lang="fr")
    assert set(en["origin"]) == {"native"}
    assert set(fr.loc[fr["pair_id"].str.startswith("LA"), "origin"]) == {"native"}
    assert set(fr.loc[~fr["pair_id"].str.startswith("LA"), "origin"]) == {"translated"}
    assert "other" in set(fr["bias_type"]) and "autre" not in set(fr["bias_type"])
    assert set(fr["bias_type"]) <= set(BIAS_TYPES)
    assert fr["sent_less"].isna().sum() == 1  # kept for the scoring stage to count


def test_read_crows_pairs_english_revised_origin(tmp_path):
    path = tmp_path / "en_rev.csv"
    path.write_text("\tsent_more\tsent_less\tstereo_antistereo\tbias_type\n0\tA b\tA c\tstereo\tage\nLA3\tD e\tD f\tantistereo\tautre\n")
    df = read_crows_pairs(path, fmt="inria", lang="en")
    assert df["origin"].tolist() == ["native", "translated"]
    assert df["bias_type"].tolist() == ["age", "other"]


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "missing or empty"),
        ("\tsent_more\tstereo_antistereo\tbias_type\n0\ta\tstereo\tage\n", "missing column(s) ['sent_less']"),
        ("\tsent_more\tsent_less\tstereo_antistereo\tbias_type\n0\ta\tb\tmaybe\tage\n", "line 2 (pair 0): stereo_antistereo"),
        ("\tsent_more\tsent_less\tstereo_antistereo\tbias_type\n0\ta\tb\tstereo\tcolour\n", "unknown bias_type 'colour'"),
        ("\tsent_more\tsent_less\tstereo_antistereo\tbias_type\n0\ta\tb\tstereo\tage\n0\tc\td\tstereo\tage\n", "duplicate pair ids"),
    ],
)
def test_read_crows_pairs_errors(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(DataError) as err:
        read_crows_pairs(path, fmt="inria", lang="fr")
    assert message in str(err.value) and "bad.csv" in str(err.value)


def test_data_summary_counts(demo_data):
    moz = read_mozart_zip(demo_data / "MozArt.zip", LANGS)
    fr = read_crows_pairs(demo_data / "crows_pairs_demo_fr.csv", fmt="inria", lang="fr")
    s = data_summary(moz, {"demo_fr": fr})
    get = s.set_index(["dataset", "subset", "statistic"])["value"]
    assert get[("mozart", "en", "annotations")] == 48
    assert get[("mozart", "en", "annotators")] == 8
    assert get[("mozart", "en", "annotations_MN")] == 12
    en = moz[moz["lang"] == "en"]
    assert get[("mozart", "en", "distinct_answers")] == en["answer"].str.lower().nunique()
    assert get[("crows_pairs/demo_fr", "fr", "pairs")] == len(fr)
    assert get[("crows_pairs/demo_fr", "fr", "pairs_stereo")] + get[("crows_pairs/demo_fr", "fr", "pairs_antistereo")] == len(fr)


# --- the real files, when ../shared/data is there ---------------------------------------


def test_real_mozart(shared_data):
    df = read_mozart_zip(shared_data / "mozart" / "MozArt.zip", LANGS)
    sizes = df.groupby("lang").size().to_dict()
    assert sizes == {"en": 600, "es": 620, "de": 600, "fr": 600}
    summary = data_summary(df, {}).set_index(["subset", "statistic"])["value"]
    assert summary[("en", "distinct_answers")] == 374  # as the paper reports
    assert summary[("de", "annotations_MNN")] == 140 and summary[("de", "annotations_FNN")] == 160
    assert summary[("es", "annotators")] == 62
    # the zip and the loose JSONL files agree
    loose = read_mozart_jsonl(shared_data / "mozart" / "en_data_with_annotations.jsonl", "en")
    pd.testing.assert_frame_equal(loose, df[df["lang"] == "en"].reset_index(drop=True))


def test_real_french_crows_pairs_table4_counts(shared_data):
    fr = read_crows_pairs(
        shared_data / "crows_pairs" / "crows_pairs_FR_languagearc_contribution+210.csv", fmt="inria", lang="fr"
    )
    expected = {
        "race-color": 460, "gender": 321, "socioeconomic": 196, "nationality": 253, "religion": 115,
        "age": 90, "sexual-orientation": 91, "physical-appearance": 72, "disability": 66, "other": 13,
    }
    assert fr["bias_type"].value_counts().to_dict() == expected
    assert len(fr) == 1677 and (fr["origin"] == "native").sum() == 210


def test_real_english_crows_pairs(shared_data):
    orig = read_crows_pairs(shared_data / "crows_pairs" / "crows_pairs_anonymized.csv", fmt="nyu", lang="en")
    rev = read_crows_pairs(shared_data / "crows_pairs" / "crows_pairs_EN_revised+210.csv", fmt="inria", lang="en")
    assert len(orig) == 1508 and len(rev) == 1677
    assert (rev["origin"] == "translated").sum() == 210


def test_zip_read_from_bytes_roundtrip(tmp_path):
    """A MozArt-shaped archive written in memory parses the same as its member file."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("MozArt 2/fr_data_with_annotations.jsonl", json.dumps(_record(mask="Enfants ")) + "\n")
    path = tmp_path / "z.zip"
    path.write_bytes(buf.getvalue())
    assert read_mozart_zip(path, ["fr"]).loc[0, "answer"] == "Enfants"
