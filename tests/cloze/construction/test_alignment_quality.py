"""Alignment quality against gold alignments: AER by hand, the gold formats, a real gold set."""

from __future__ import annotations

import pytest

from plmfair.errors import DataError


def test_aer_by_hand():
    """Two sentences. Sure S = {(0,0),(1,1)} and {(0,0)}; possible P adds (2,1) to the first.
    Predicted A = {(0,0),(2,1),(2,2)} and {(0,0),(1,1)}: |A| = 5, |S| = 3, |P| = 4,
    |A∩S| = 1 + 1 = 2, |A∩P| = 2 + 1 = 3; precision 3/5, recall 2/3, AER = 1 - (2 + 3)/(5 + 3) = 3/8."""
    from plmfair.cloze.construction.alignment_quality import alignment_error

    sure = [{(0, 0), (1, 1)}, {(0, 0)}]
    possible = [{(0, 0), (1, 1), (2, 1)}, {(0, 0)}]
    predicted = [{(0, 0), (2, 1), (2, 2)}, {(0, 0), (1, 1)}]
    out = alignment_error(predicted, sure, possible)
    assert (out["predicted"], out["sure"], out["possible"], out["hit_sure"], out["hit_possible"]) == (5, 3, 4, 2, 3)
    assert out["precision"] == pytest.approx(3 / 5) and out["recall"] == pytest.approx(2 / 3)
    assert out["aer"] == pytest.approx(3 / 8)
    perfect = alignment_error(sure, sure, possible)
    assert perfect["aer"] == 0.0 and perfect["recall"] == 1.0


def test_gold_formats_talp_and_pharaoh_reversed_and_out_of_range():
    from plmfair.cloze.construction.alignment_quality import gold_alignments

    # talp, German first, 1-based: "Haus 1-2 / das 2p1" -> (en, de) 0-based
    talp = gold_alignments(
        "t", sentence_lines=["\ufeffdas Haus ||| the house"], link_lines=["1-1 2-2 2p1"], fmt="talp", pivot_first=False
    )
    assert talp.pivot_sentences == [["the", "house"]] and talp.sentences == [["das", "Haus"]]
    assert talp.sure == [{(0, 0), (1, 1)}] and talp.possible == [{(0, 0), (1, 1), (0, 1)}]
    # pharaoh, pivot first, 0-based, separate files; a link past the end is dropped and counted
    ph = gold_alignments(
        "p",
        sentence_lines=["la maison"],
        pivot_lines=["the house"],
        link_lines=["0-0 1-1 1-5"],
        fmt="pharaoh",
        pivot_first=True,
        source="toy",
    )
    assert ph.sure == ph.possible == [{(0, 0), (1, 1)}] and ph.dropped == 1
    with pytest.raises(DataError, match=r"toy line 1: malformed link '0-x'"):
        gold_alignments(
            "p",
            sentence_lines=["a"],
            pivot_lines=["b"],
            link_lines=["0-x"],
            fmt="pharaoh",
            pivot_first=True,
            source="toy",
        )
    with pytest.raises(DataError, match=r"1 pivot sentence\(s\), 1 other sentence\(s\) and 2 alignment line\(s\)"):
        gold_alignments(
            "p", sentence_lines=["a"], pivot_lines=["b"], link_lines=["", ""], fmt="pharaoh", pivot_first=True
        )


def test_alignment_quality_on_the_real_vilar_gold_set_is_recomputed_from_its_links(shared_data):
    """eflomal on the 508 RWTH sentence pairs: the table's AER equals an independent count from the
    links the function returns and the gold file parsed here by hand."""
    from plmfair.cloze.construction.alignment_quality import alignment_quality_files

    root = shared_data / "wmt06" / "gold_alignments" / "vilar2006_de-en_via_Cross-Align"
    if not root.exists():
        pytest.skip("../shared/data/wmt06 is not there")
    gold = {
        "vilar2006": {
            "lang": "de",
            "format": "talp",
            "links_first": "de",
            "sentences": {"path": root / "test.de-en"},
            "links": {"path": root / "deen.talp"},
        }
    }
    quality, links = alignment_quality_files(
        gold,
        corpus="x",
        pivot="en",
        symmetrisations=["intersection", "union"],
        eflomal_options={"rel_iterations": 0.3, "n_samplers": 1},
    )
    sure, possible = {}, {}
    for n, line in enumerate((root / "deen.talp").read_text().splitlines(), start=1):
        for item in line.split():
            de, en = item.replace("p", "-").split("-")
            link = (n, int(en) - 1, int(de) - 1)
            possible[link] = True
            if "p" not in item:
                sure[link] = True
    assert len(sure) == 9613 and len(possible) == 10534
    for row in quality.itertuples():
        pred = links[links["symmetrisation"] == row.symmetrisation]
        a = set(zip(pred["sentence"], pred["pivot_token"], pred["token"], strict=True))
        a_s, a_p = len(a & sure.keys()), len(a & possible.keys())
        assert row.aer == pytest.approx(1 - (a_s + a_p) / (len(a) + len(sure)))
        assert row.sentences == 508 and row.extra == "none"
    assert 0.1 < quality["aer"].min() < 0.6
