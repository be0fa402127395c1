"""CrowS-Pairs files: the published layouts, layouts described by config, malformed rows named."""

import re

import pandas as pd
import pytest
import yaml

from plmfair.crows_pairs.reader import BIAS_TYPES, read_crows_pairs
from plmfair.errors import DataError
from plmfair.runs.data_summary import data_summary


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
    path.write_text(
        "\tsent_more\tsent_less\tstereo_antistereo\tbias_type\n0\tA b\tA c\tstereo\tage\nLA3\tD e\tD "
        "f\tantistereo\tautre\n"
    )
    df = read_crows_pairs(path, fmt="inria", lang="en")
    assert df["origin"].tolist() == ["native", "translated"]
    assert df["bias_type"].tolist() == ["age", "other"]


def test_a_stray_quote_that_swallows_pairs_is_named_with_the_pairs_it_took(tmp_path, caplog):
    path = tmp_path / "fr.tsv"
    path.write_text(
        "\tsent_more\tsent_less\tstereo_antistereo\tbias_type\n"
        '0\t"A b\tA c\tstereo\tage\n'  # the quote opens a field that runs on...
        "1\tD e\tD f\tantistereo\tgender\n"
        "2\tG h\tG i\tstereo\tage\n"
        'LA3\tJ" k\tJ l\tstereo\tage\n'  # ... to here
        "4\tM n\tM o\tstereo\tage\n"
    )
    with caplog.at_level("WARNING"):
        df = read_crows_pairs(path, fmt="inria", lang="fr")
    assert df["pair_id"].tolist() == ["0", "4"]  # what the file holds as written
    (said,) = [r.getMessage() for r in caplog.records if "quote" in r.getMessage()]
    assert said.startswith(f"{path} line 2: a quote") and "closes only on line 5" in said
    assert "the 3 line(s) after it, which look like pairs (ids 1, 2, LA3)" in said


HEADER = "id,sent_more,sent_less,stereo_antistereo,bias_type\n"
# Every malformed CrowS-Pairs input: (file bytes, reading arguments, the one line expected)
CROWS_ERRORS = {
    "empty file": (b"", {}, "bad.csv: the file is missing or empty"),
    "not utf-8": (
        (HEADER + "0,a b,a c,stereo,age\n1,é d,é e,stereo,age\n").encode("latin-1"),
        {},
        "bad.csv line 3: not valid UTF-8",
    ),
    "unknown bias type": (
        (HEADER + "0,a,b,stereo,region\n").encode(),
        {},
        "bad.csv line 2 (pair 0): bias_type must be one of",
    ),
    "unknown bias type names the alias key": (
        (HEADER + "0,a,b,stereo,region\n").encode(),
        {},
        "(got the unknown bias_type 'region'); map that spelling under bias_type_aliases",
    ),
    "unknown direction": (
        (HEADER + "0,a b,a c,maybe,age\n").encode(),
        {},
        "bad.csv line 2 (pair 0): stereo_antistereo must be one of ['antistereo', 'stereo']",
    ),
    "missing column": (
        b"id,sent_more,stereo_antistereo,bias_type\n0,a,stereo,age\n",
        {},
        "bad.csv: missing column(s) ['sent_less']",
    ),
    "missing column, listed": (
        b"id,sent_more,sent_less,stereo_antistereo,bias\n0,a,b,stereo,age\n",
        {},
        "missing column(s) ['bias_type'] (found ['id', 'sent_more', 'sent_less', 'stereo_antistereo', 'bias'])",
    ),
    "wrong delimiter": (
        HEADER.replace(",", "\t").encode() + b"0\ta b\ta c\tstereo\tage\n",
        {},
        "bad.csv: missing column(s) ['sent_more']",
    ),
    "duplicate id": (
        (HEADER + "0,a b,a c,stereo,age\n0,d e,d f,stereo,age\n").encode(),
        {},
        "bad.csv: duplicate pair ids ['0'] (lines 2 and 3)",
    ),
    "empty id": ((HEADER + ",a b,a c,stereo,age\n").encode(), {}, "bad.csv line 2 (pair ?): the pair id is empty"),
    "a header naming a column twice": (
        b"id,x,x,sent_less,stereo_antistereo,bias_type\n0,a,b,c,stereo,age\n",
        {"columns": {"sent_more": "x"}},
        "the header names 'x' 2 times (positions [1, 2]); give columns.sent_more as the 0-based position",
    ),
    "a position outside the header": (
        (HEADER + "0,a,b,stereo,age\n").encode(),
        {"columns": {"bias_type": 9}},
        "column position 9 for 'bias_type' is outside the header",
    ),
}


@pytest.mark.parametrize("case", list(CROWS_ERRORS))
def test_malformed_crows_pairs_input_is_one_line_naming_file_and_line(tmp_path, case):
    content, kwargs, message = CROWS_ERRORS[case]
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(DataError) as err:
        read_crows_pairs(path, lang="en", **kwargs)
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_real_french_crows_pairs_table4_counts(shared_data):
    fr = read_crows_pairs(
        shared_data / "crows_pairs" / "crows_pairs_FR_languagearc_contribution+210.csv", fmt="inria", lang="fr"
    )
    expected = {
        "race-color": 460,
        "gender": 321,
        "socioeconomic": 196,
        "nationality": 253,
        "religion": 115,
        "age": 90,
        "sexual-orientation": 91,
        "physical-appearance": 72,
        "disability": 66,
        "other": 13,
    }
    assert fr["bias_type"].value_counts().to_dict() == expected
    assert len(fr) == 1677 and (fr["origin"] == "native").sum() == 210


def test_real_english_crows_pairs(shared_data):
    orig = read_crows_pairs(shared_data / "crows_pairs" / "crows_pairs_anonymized.csv", fmt="nyu", lang="en")
    rev = read_crows_pairs(shared_data / "crows_pairs" / "crows_pairs_EN_revised+210.csv", fmt="inria", lang="en")
    assert len(orig) == 1508 and len(rev) == 1677
    assert (rev["origin"] == "translated").sum() == 210


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
    "columns": {
        "id": "id",
        "sent_more": "sent_more_de_DE",
        "sent_less": "sent_less_de_DE",
        "stereo_antistereo": ["stereo_antistereo_de_DE", "stereo_antistereo_en_US"],
        "bias_type": ["bias_type_de_DE", "bias_type_en_US"],
    },
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
    assert df["bias_type"].tolist() == [
        "race-color",
        "socioeconomic",
        "age",
        "physical-appearance",
        "disability",
        "sexual-orientation",
    ]
    assert df.loc[2, ["sent_more", "sent_less"]].isna().all()  # kept, skipped and counted by scoring
    assert set(df["origin"]) == {"translated"} and df["duplicate_of"].isna().all()


def test_labels_without_a_fallback_stay_missing_and_are_counted(tmp_path):
    path = tmp_path / "ar.csv"
    path.write_text(
        "ID,more,less,dir,bias\n0,a b,a c,stereo,age\n1,d e,d f,,gender\n2,g h,g i,antistreo,??\n", encoding="utf-8"
    )
    df = read_crows_pairs(
        path,
        lang="ar",
        columns={"id": "ID", "sent_more": "more", "sent_less": "less", "stereo_antistereo": "dir", "bias_type": "bias"},
        direction_aliases={"antistreo": "antistereo"},
        bias_type_aliases={"??": None},
    )
    assert df["stereo_antistereo"].tolist()[::2] == ["stereo", "antistereo"] and pd.isna(df.loc[1, "stereo_antistereo"])
    assert pd.isna(df.loc[2, "bias_type"])
    summary = data_summary({"crows_pairs": {"ar": df}}).set_index("statistic")["value"]
    assert summary["pairs_unlabelled"] == 2 and summary["pairs"] == 3


def test_direction_from_another_data_set_or_a_default(tmp_path):
    path = tmp_path / "it.csv"
    path.write_text(
        "id,more_ita,less_ita,bias_type\n0,a b,a c,age\n??1,d e,d f,gender\n9,g h,g i,age\n", encoding="utf-8"
    )
    columns = {
        "id": "id",
        "sent_more": "more_ita",
        "sent_less": "less_ita",
        "stereo_antistereo": None,
        "bias_type": "bias_type",
    }
    reference = pd.DataFrame({"pair_id": ["0", "1"], "stereo_antistereo": ["antistereo", "stereo"]})
    df = read_crows_pairs(path, lang="it", columns=columns, id_prefix_aliases={"??": ""}, reference=reference)
    assert df["pair_id"].tolist() == ["0", "1", "9"]
    assert df["stereo_antistereo"].tolist()[:2] == ["antistereo", "stereo"] and pd.isna(df.loc[2, "stereo_antistereo"])
    df = read_crows_pairs(path, lang="it", columns=columns, id_prefix_aliases={"??": ""}, default_direction="stereo")
    assert df["stereo_antistereo"].tolist() == ["stereo"] * 3


def test_duplicate_ids_kept_first_when_asked(tmp_path):
    path = tmp_path / "es.csv"
    path.write_text(
        "id,sent_more,sent_less,stereo_antistereo,bias_type\n409,a b,a c,stereo,age\n"
        "409,d e,d f,stereo,age\n410,g h,g i,stereo,age\n",
        encoding="utf-8",
    )
    with pytest.raises(DataError, match=r"es.csv: duplicate pair ids \['409'\] \(lines 2 and 3\)"):
        read_crows_pairs(path, lang="es")
    df = read_crows_pairs(path, lang="es", duplicate_ids="keep_first")
    assert df["pair_id"].tolist() == ["409", "409#2", "410"] and df["duplicate_of"].tolist()[1] == "409"
    from plmfair.crows_pairs.scoring_job import pair_status

    assert [pair_status(row) for _, row in df.iterrows()] == ["ok", "skipped_duplicate", "ok"]


def _source_md_counts(shared_data) -> tuple[dict[str, tuple[int, str]], dict[str, int]]:
    """(file -> (rows, sha256)) from the table of SOURCE.md, and the non-empty sent_more counts it lists."""
    text = (shared_data / "multilingual_crows_pairs" / "SOURCE.md").read_text(encoding="utf-8")
    files = {
        m[0]: (int(m[1]), m[2])
        for m in re.findall(r"^\| (\S+\.csv) \| \w+ \| (\d+) \| \d+ \| ([0-9a-f]{64}) \|$", text, flags=re.M)
    }
    block = text[text.index("non-empty `sent_more` counts") :].split("\n-")[0]
    return files, {loc: int(n) for loc, n in re.findall(r"([a-z]{2}_[A-Z]{2}) (\d+)", block)}


def test_real_multilingual_crows_pairs_through_config_alone(repo, shared_data):
    """The seven files, each read through its entry of the default config, against SOURCE.md."""
    from plmfair.config import validate_config

    with open(repo / "config" / "config.yaml") as fh:
        cfg = validate_config(yaml.safe_load(fh))
    sets = cfg["datasets"]["crows_pairs"]
    files, nonempty = _source_md_counts(shared_data)
    root = shared_data / "multilingual_crows_pairs"
    en = read_crows_pairs(shared_data / "crows_pairs" / "crows_pairs_EN_revised+210.csv", fmt="inria", lang="en")
    fr = read_crows_pairs(
        shared_data / "crows_pairs" / "crows_pairs_FR_languagearc_contribution+210.csv", fmt="inria", lang="fr"
    )
    blank_records = {"ca_ES": 2}  # ,,,,, lines at the end of the Catalan file
    locales = sorted(name.removeprefix("mcp_") for name in sets if name.startswith("mcp_"))
    assert locales == ["ar_DZ", "ca_ES", "de_DE", "es_AR", "it_IT", "mt_MT", "zh_CN"]
    for loc in locales:
        entry = sets[f"mcp_{loc}"]
        rel = f"{loc}/{entry['file']}"
        rows, sha = files[rel]
        assert entry["sha256"] == sha and entry["url"].endswith(rel)
        df = read_crows_pairs(
            root / rel,
            lang=entry["lang"],
            fmt=entry["format"],
            delimiter=entry["delimiter"],
            columns=entry["columns"],
            bias_type_aliases=entry["bias_type_aliases"],
            direction_aliases=entry["direction_aliases"],
            default_direction=entry["default_direction"],
            id_prefix_aliases=entry["id_prefix_aliases"],
            duplicate_ids=entry["duplicate_ids"],
            reference=fr if entry["direction_from"] == "fr" else None,
        )
        assert len(df) + blank_records.get(loc, 0) == rows, loc
        assert int(df["sent_more"].fillna("").str.strip().ne("").sum()) == nonempty[loc], loc
        assert df["pair_id"].is_unique and set(df["origin"]) == {"translated"}
        assert set(df["bias_type"].dropna()) <= set(BIAS_TYPES)
    # ids follow the English pairs: the English reference column of the German file is the English pair
    de = pd.read_csv(root / "de_DE" / "german_germany_crowspairs.csv", sep="\t", dtype=str, keep_default_na=False)
    de_pairs = read_crows_pairs(
        root / "de_DE" / "german_germany_crowspairs.csv",
        lang="de",
        **{k: sets["mcp_de_DE"][k] for k in ("delimiter", "columns", "id_prefix_aliases", "bias_type_aliases")},
    )
    english = en.set_index("pair_id")["sent_more"]
    assert (
        english.loc[de_pairs["pair_id"]].str.strip().to_numpy() == de["sent_more_en_US"].str.strip().to_numpy()
    ).all()
