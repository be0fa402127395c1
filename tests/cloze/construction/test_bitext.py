"""Multi-way corpora from bitexts: the join on the pivot side, duplicates, missing lines, traceability."""

from __future__ import annotations

import pandas as pd
import pytest

from plmfair.cloze.construction.bitext import Bitext, join_bitext_files, join_bitexts
from plmfair.cloze.construction.pos import corpus_lines
from plmfair.errors import ConfigError, DataError
from plmfair.io.parquet import read_parquet

# de-en: "Good morning ." twice (two translations), "Thank you ." missing from es-en;
# es-en: extra white space around one pivot sentence, an empty translation, "Yes ." twice.
DE = [
    ("Good morning .", "Guten Morgen ."),
    ("The  debate is closed .", "Die Aussprache ist geschlossen ."),
    ("Thank you .", "Danke ."),
    ("Good morning .", "Morgen !"),
    ("Yes .", "Ja ."),
]
ES = [
    ("Yes .", "Sí ."),
    (" The debate is closed. ", "Se cierra el debate."),
    ("The debate is closed .", "Debate cerrado ."),
    ("Good morning .", ""),
    ("Good morning .", "Buenos días ."),
    ("Yes .", "Vale ."),
]


def _bitexts():
    return [
        Bitext("de", *zip(*DE, strict=True), "de-en.en", "de-en.de"),
        Bitext("es", *zip(*ES, strict=True), "es-en.en", "es-en.es"),
    ]


def _wide(joined):
    return joined.pivot(index="line", columns="lang", values="text"), joined.pivot(
        index=["line"], columns="lang", values="source_line"
    )


def test_join_keeps_pivot_sentences_in_every_bitext_with_their_source_lines():
    joined, counts = join_bitexts(_bitexts(), pivot="en", corpus="toy")
    text, source_line = _wide(joined)
    # order of the first bitext; "Thank you ." is missing from es-en; "The debate is closed." (no space
    # before the full stop) is another sentence than "The debate is closed ." after normalisation
    assert text["en"].tolist() == ["Good morning .", "The  debate is closed .", "Yes ."]
    assert text["de"].tolist() == ["Guten Morgen .", "Die Aussprache ist geschlossen .", "Ja ."]
    # es: the first occurrence *with a translation* (line 4 is empty), and the first "Yes ."
    assert text["es"].tolist() == ["Buenos días .", "Debate cerrado .", "Sí ."]
    assert source_line.to_dict("list") == {"de": [1, 2, 5], "en": [1, 2, 5], "es": [5, 3, 1]}
    assert set(joined.loc[joined["lang"] == "es", "source"]) == {"es-en.es"}
    c = counts.set_index(["step", "lang"])["count"]
    assert c[("bitext_lines", "de")] == 5 and c[("bitext_lines", "es")] == 6
    assert c[("bitext_empty", "es")] == 1 and c[("bitext_empty", "de")] == 0
    assert c[("bitext_duplicated", "de")] == 1 and c[("bitext_repeats", "de")] == 1  # Good morning
    assert c[("bitext_duplicated", "es")] == 1 and c[("bitext_repeats", "es")] == 1  # Yes (Good morning once non-empty)
    assert c[("bitext_distinct", "es")] == 4 and c[("joined", "all")] == 3
    # one row per step in the construction table, the pivot's column first and empty for bitext steps
    from plmfair.cloze.tables import construction_table

    table = construction_table(counts)
    assert table["step"].tolist() == [
        "bitext_lines",
        "bitext_empty",
        "bitext_distinct",
        "bitext_duplicated",
        "bitext_repeats",
        "joined",
    ]
    assert table.columns.tolist()[3:] == ["en", "de", "es", "all"] and table["en"].isna().sum() == 5


def test_drop_policy_leaves_out_repeated_pivot_sentences():
    joined, counts = join_bitexts(_bitexts(), pivot="en", corpus="toy", duplicates="drop")
    assert _wide(joined)[0]["en"].tolist() == ["The  debate is closed ."]
    assert counts.set_index(["step", "lang"]).loc[("joined", "all"), "count"] == 1
    assert "repeated sentences dropped" in counts["description"].iloc[-1]


def test_join_errors_name_the_files_and_the_key():
    bad = Bitext("de", ["a", "b"], ["x"], "de-en.en", "de-en.de")
    with pytest.raises(DataError, match=r"bitext de: de-en.en has 2 line\(s\) and de-en.de 1"):
        join_bitexts([bad], pivot="en", corpus="toy")
    with pytest.raises(ConfigError, match=r"cloze.corpora.toy.duplicates: 'last'"):
        join_bitexts(_bitexts(), pivot="en", corpus="toy", duplicates="last")
    disjoint = [Bitext("de", ["a"], ["x"], "p1", "s1"), Bitext("es", ["b"], ["y"], "p2", "s2")]
    with pytest.raises(DataError, match="no en sentence occurs in every bitext"):
        join_bitexts(disjoint, pivot="en", corpus="toy")


def test_joined_file_feeds_the_tokenizer_line_by_line(tmp_path):
    from plmfair.cloze.construction.bitext import JOINED_SCHEMA
    from plmfair.io.parquet import write_parquet

    for name, lines in {
        "de-en.en": [p for p, _ in DE],
        "de-en.de": [t for _, t in DE],
        "es-en.en": [p for p, _ in ES],
        "es-en.es": [t for _, t in ES],
    }.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    joined, counts, meta = join_bitext_files(
        {
            "de": ((tmp_path / "de-en.en", None), (tmp_path / "de-en.de", None)),
            "es": ((tmp_path / "es-en.en", None), (tmp_path / "es-en.es", None)),
        },
        pivot="en",
        corpus="toy",
    )
    assert meta["n_lines"] == 3 and meta["sources"]["es"][1].endswith("es-en.es")
    write_parquet(joined, tmp_path / "joined.parquet", schema_doc=JOINED_SCHEMA, meta=meta)
    lines, source = corpus_lines(tmp_path / "joined.parquet", lang="es")
    assert lines == ["Buenos días .", "Debate cerrado .", "Sí ."] and source.endswith("joined.parquet[es]")
    pd.testing.assert_frame_equal(read_parquet(tmp_path / "joined.parquet"), joined)
    with pytest.raises(DataError, match=r"no 'fr' sentences in the joined corpus"):
        corpus_lines(tmp_path / "joined.parquet", lang="fr")
