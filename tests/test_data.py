import io
import json
import re
import zipfile

import pandas as pd
import pytest
import yaml

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


# --- CrowS-Pairs files described by their config entry (Multilingual CrowS-Pairs layouts) ----

RAW_DE = (
    "id\tsent_more_en_US\tsent_less_en_US\tstereo_antistereo_en_US\tbias_type_en_US\tsent_more_de_DE\tComments\t"
    "sent_less_de_DE\tstereo_antistereo_de_DE\tbias_type_de_DE\t\n"
    "0\tBlack a.\tWhite a.\tstereo\trace-color\tSchwarz a.\t\tWeiß a.\tstereo \tRace-color\t\n"
    "1\tPoor b.\tRich b.\tantistereo\tsocioeconomic\tArm b.\t\tReich b.\t\t\t\n"  # German labels left empty
    "fr_FR2\tOld c.\tYoung c.\tstereo\tage\t\t\t\tstereo\tage\t\n"  # translation dropped
    "\ufeff3\tFat d.\tThin d.\tstereo\tphysical-appearance\tDick d.\t\tDünn d.\tstereo\tphysical appearance\t\n"
    "4\tBlind e.\tSighted e.\tstereo\tdisability\tBlind e.\tx\tSehend e.\tstereo\tdisabilty\t\n"
    "5\tGay f.\tStraight f.\tstereo\tsexual-orientation\tSchwul f.\t\tHetero f.\tstereo\t??\t\n"
    "\t\t\t\t\t\t\t\t\t\t\n"  # a record with every cell empty
)
DE_ENTRY = {
    "delimiter": "\t",
    "columns": {"id": "id", "sent_more": "sent_more_de_DE", "sent_less": "sent_less_de_DE",
                "stereo_antistereo": ["stereo_antistereo_de_DE", "stereo_antistereo_en_US"],
                "bias_type": ["bias_type_de_DE", "bias_type_en_US"]},
    "bias_type_aliases": {"disabilty": "disability", "??": None},
    "id_prefix_aliases": {"fr_FR": "LA"},
}


def test_a_file_read_through_its_entry(tmp_path):
    path = tmp_path / "german.csv"
    path.write_text(RAW_DE, encoding="utf-8")
    df = read_crows_pairs(path, lang="de", **DE_ENTRY)
    assert df["pair_id"].tolist() == ["0", "1", "LA2", "3", "4", "5"]  # BOM dropped, fr_FR -> LA, blank record gone
    assert df["stereo_antistereo"].tolist() == ["stereo", "antistereo", "stereo", "stereo", "stereo", "stereo"]
    # empty and '??' German labels fall back to the English column; spellings are harmonised
    assert df["bias_type"].tolist() == ["race-color", "socioeconomic", "age", "physical-appearance", "disability",
                                        "sexual-orientation"]
    assert df.loc[2, ["sent_more", "sent_less"]].isna().all()  # kept, skipped and counted by scoring
    assert set(df["origin"]) == {"translated"} and df["duplicate_of"].isna().all()


def test_labels_without_a_fallback_stay_missing_and_are_counted(tmp_path):
    path = tmp_path / "ar.csv"
    path.write_text("ID,more,less,dir,bias\n0,a b,a c,stereo,age\n1,d e,d f,,gender\n2,g h,g i,antistreo,??\n",
                    encoding="utf-8")
    df = read_crows_pairs(path, lang="ar", columns={"id": "ID", "sent_more": "more", "sent_less": "less",
                                                      "stereo_antistereo": "dir", "bias_type": "bias"},
                          direction_aliases={"antistreo": "antistereo"}, bias_type_aliases={"??": None})
    assert df["stereo_antistereo"].tolist()[::2] == ["stereo", "antistereo"] and pd.isna(df.loc[1, "stereo_antistereo"])
    assert pd.isna(df.loc[2, "bias_type"])
    summary = data_summary(None, {"ar": df}).set_index("statistic")["value"]
    assert summary["pairs_unlabelled"] == 2 and summary["pairs"] == 3


def test_direction_from_another_data_set_or_a_default(tmp_path):
    path = tmp_path / "it.csv"
    path.write_text("id,more_ita,less_ita,bias_type\n0,a b,a c,age\n??1,d e,d f,gender\n9,g h,g i,age\n",
                    encoding="utf-8")
    columns = {"id": "id", "sent_more": "more_ita", "sent_less": "less_ita", "stereo_antistereo": None,
               "bias_type": "bias_type"}
    reference = pd.DataFrame({"pair_id": ["0", "1"], "stereo_antistereo": ["antistereo", "stereo"]})
    df = read_crows_pairs(path, lang="it", columns=columns, id_prefix_aliases={"??": ""}, reference=reference)
    assert df["pair_id"].tolist() == ["0", "1", "9"]
    assert df["stereo_antistereo"].tolist()[:2] == ["antistereo", "stereo"] and pd.isna(df.loc[2, "stereo_antistereo"])
    df = read_crows_pairs(path, lang="it", columns=columns, id_prefix_aliases={"??": ""}, default_direction="stereo")
    assert df["stereo_antistereo"].tolist() == ["stereo"] * 3


def test_duplicate_ids_kept_first_when_asked(tmp_path):
    path = tmp_path / "es.csv"
    path.write_text("id,sent_more,sent_less,stereo_antistereo,bias_type\n409,a b,a c,stereo,age\n"
                    "409,d e,d f,stereo,age\n410,g h,g i,stereo,age\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"es.csv: duplicate pair ids \['409'\] \(lines 2 and 3\)"):
        read_crows_pairs(path, lang="es")
    df = read_crows_pairs(path, lang="es", duplicate_ids="keep_first")
    assert df["pair_id"].tolist() == ["409", "409#2", "410"] and df["duplicate_of"].tolist()[1] == "409"
    from plmfair.crows_pairs import pair_status

    assert [pair_status(row) for _, row in df.iterrows()] == ["ok", "skipped_duplicate", "ok"]


@pytest.mark.parametrize(
    "header, columns, message",
    [
        ("id,x,x,sent_less,stereo_antistereo,bias_type", {"sent_more": "x"},
         "the header names 'x' 2 times (positions [1, 2]); give columns.sent_more as the 0-based position"),
        ("id,sent_more,sent_less,stereo_antistereo,bias_type", {"bias_type": 9},
         "column position 9 for 'bias_type' is outside the header"),
        ("id,sent_more,sent_less,stereo_antistereo,bias", {},
         "missing column(s) ['bias_type'] (found ['id', 'sent_more', 'sent_less', 'stereo_antistereo', 'bias'])"),
    ],
)
def test_column_errors_name_the_key(tmp_path, header, columns, message):
    path = tmp_path / "bad.csv"
    path.write_text(header + "\n0,a,b,stereo,age\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_crows_pairs(path, lang="en", columns=columns)
    assert message in str(err.value) and "bad.csv" in str(err.value)


def test_unknown_label_says_which_alias_to_add(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("id,sent_more,sent_less,stereo_antistereo,bias_type\n0,a,b,stereo,region\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.csv line 2 \(pair 0\): bias_type must be one of .* \(got the unknown "
                                        r"bias_type 'region'\); map that spelling under bias_type_aliases"):
        read_crows_pairs(path, lang="es")


def test_non_utf8_file_names_the_line(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("id,sent_more,sent_less,stereo_antistereo,bias_type\n0,a,b,stereo,age\n1,é,b,stereo,age\n"
                     .encode("latin-1"))
    with pytest.raises(DataError, match="latin1.csv line 3: not valid UTF-8"):
        read_crows_pairs(path, lang="fr")


def _source_md_counts(shared_data) -> tuple[dict[str, tuple[int, str]], dict[str, int]]:
    """(file -> (rows, sha256)) from the table of SOURCE.md, and the non-empty sent_more counts it lists."""
    text = (shared_data / "multilingual_crows_pairs" / "SOURCE.md").read_text(encoding="utf-8")
    files = {m[0]: (int(m[1]), m[2]) for m in re.findall(r"^\| (\S+\.csv) \| \w+ \| (\d+) \| \d+ \| ([0-9a-f]{64}) \|$",
                                                            text, flags=re.M)}
    block = text[text.index("non-empty `sent_more` counts"):].split("\n-")[0]
    return files, {loc: int(n) for loc, n in re.findall(r"([a-z]{2}_[A-Z]{2}) (\d+)", block)}


def test_real_multilingual_crows_pairs_through_config_alone(repo, shared_data):
    """The seven files, each read through its entry of the default config, against SOURCE.md."""
    from plmfair.config import validate_config

    with open(repo / "config" / "config.yaml") as fh:
        cfg = validate_config(yaml.safe_load(fh), repo / "workflow" / "schemas" / "config.schema.yaml")
    sets = cfg["datasets"]["crows_pairs"]
    files, nonempty = _source_md_counts(shared_data)
    root = shared_data / "multilingual_crows_pairs"
    en = read_crows_pairs(shared_data / "crows_pairs" / "crows_pairs_EN_revised+210.csv", fmt="inria", lang="en")
    fr = read_crows_pairs(shared_data / "crows_pairs" / "crows_pairs_FR_languagearc_contribution+210.csv",
                          fmt="inria", lang="fr")
    blank_records = {"ca_ES": 2}  # ,,,,, lines at the end of the Catalan file
    locales = sorted(name.removeprefix("mcp_") for name in sets if name.startswith("mcp_"))
    assert locales == ["ar_DZ", "ca_ES", "de_DE", "es_AR", "it_IT", "mt_MT", "zh_CN"]
    for loc in locales:
        entry = sets[f"mcp_{loc}"]
        rel = f"{loc}/{entry['file']}"
        rows, sha = files[rel]
        assert entry["sha256"] == sha and entry["url"].endswith(rel)
        df = read_crows_pairs(
            root / rel, lang=entry["lang"], fmt=entry["format"], delimiter=entry["delimiter"], columns=entry["columns"],
            bias_type_aliases=entry["bias_type_aliases"], direction_aliases=entry["direction_aliases"],
            default_direction=entry["default_direction"], id_prefix_aliases=entry["id_prefix_aliases"],
            duplicate_ids=entry["duplicate_ids"], reference=fr if entry["direction_from"] == "fr" else None,
        )
        assert len(df) + blank_records.get(loc, 0) == rows, loc
        assert int(df["sent_more"].fillna("").str.strip().ne("").sum()) == nonempty[loc], loc
        assert df["pair_id"].is_unique and set(df["origin"]) == {"translated"}
        assert set(df["bias_type"].dropna()) <= set(BIAS_TYPES)
    # ids follow the English pairs: the English reference column of the German file is the English pair
    de = pd.read_csv(root / "de_DE" / "german_germany_crowspairs.csv", sep="\t", dtype=str, keep_default_na=False)
    de_pairs = read_crows_pairs(root / "de_DE" / "german_germany_crowspairs.csv", lang="de",
                                **{k: sets["mcp_de_DE"][k] for k in ("delimiter", "columns", "id_prefix_aliases",
                                                                     "bias_type_aliases")})
    english = en.set_index("pair_id")["sent_more"]
    assert (english.loc[de_pairs["pair_id"]].str.strip().to_numpy() == de["sent_more_en_US"].str.strip().to_numpy()).all()
