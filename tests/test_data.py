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
    "duplicate annotation": ([json.dumps(_record()), json.dumps(_record(u_id="u2")), json.dumps(_record(mask="dog"))],
                             "line 3: annotator u1 answered sentence 1 already on line 1; each annotator answers a "
                             "sentence once"),
    "two texts": ([json.dumps(_record()), json.dumps(_record(u_id="u2", text="Another [MASK] ."))],
                  "s_id 1 has two different texts"),
    "empty file": ([""], "no annotations (the file is empty)"),
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


HEADER = "id,sent_more,sent_less,stereo_antistereo,bias_type\n"
# Every malformed CrowS-Pairs input: (file bytes, reading arguments, the one line expected)
CROWS_ERRORS = {
    "empty file": (b"", {}, "bad.csv: the file is missing or empty"),
    "not utf-8": ((HEADER + "0,a b,a c,stereo,age\n1,é d,é e,stereo,age\n").encode("latin-1"), {},
                  "bad.csv line 3: not valid UTF-8"),
    "unknown bias type": ((HEADER + "0,a,b,stereo,region\n").encode(), {},
                          "bad.csv line 2 (pair 0): bias_type must be one of"),
    "unknown bias type names the alias key": ((HEADER + "0,a,b,stereo,region\n").encode(), {},
                                              "(got the unknown bias_type 'region'); map that spelling under "
                                              "bias_type_aliases"),
    "unknown direction": ((HEADER + "0,a b,a c,maybe,age\n").encode(), {},
                          "bad.csv line 2 (pair 0): stereo_antistereo must be one of ['antistereo', 'stereo']"),
    "missing column": (b"id,sent_more,stereo_antistereo,bias_type\n0,a,stereo,age\n", {},
                       "bad.csv: missing column(s) ['sent_less']"),
    "missing column, listed": (b"id,sent_more,sent_less,stereo_antistereo,bias\n0,a,b,stereo,age\n", {},
                               "missing column(s) ['bias_type'] (found ['id', 'sent_more', 'sent_less', "
                               "'stereo_antistereo', 'bias'])"),
    "wrong delimiter": (HEADER.replace(",", "\t").encode() + b"0\ta b\ta c\tstereo\tage\n", {},
                        "bad.csv: missing column(s) ['sent_more']"),
    "duplicate id": ((HEADER + "0,a b,a c,stereo,age\n0,d e,d f,stereo,age\n").encode(), {},
                     "bad.csv: duplicate pair ids ['0'] (lines 2 and 3)"),
    "empty id": ((HEADER + ",a b,a c,stereo,age\n").encode(), {}, "bad.csv line 2 (pair ?): the pair id is empty"),
    "a header naming a column twice": (b"id,x,x,sent_less,stereo_antistereo,bias_type\n0,a,b,c,stereo,age\n",
                                       {"columns": {"sent_more": "x"}},
                                       "the header names 'x' 2 times (positions [1, 2]); give columns.sent_more as the "
                                       "0-based position"),
    "a position outside the header": ((HEADER + "0,a,b,stereo,age\n").encode(), {"columns": {"bias_type": 9}},
                                      "column position 9 for 'bias_type' is outside the header"),
}


@pytest.mark.parametrize("case", list(CROWS_ERRORS))
def test_malformed_crows_pairs_input_is_one_line_naming_file_and_line(tmp_path, case):
    content, kwargs, message = CROWS_ERRORS[case]
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(DataError) as err:
        read_crows_pairs(path, lang="en", **kwargs)
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


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
