"""Word alignments: Pharaoh parsing and its errors, symmetrisation by hand, eflomal on synthetic text."""

from __future__ import annotations

import pandas as pd
import pytest

from plmfair.alignment import align_files, format_pharaoh, parse_pharaoh, run_eflomal, symmetrise
from plmfair.data import read_text_lines
from plmfair.errors import DataError
from plmfair.io import write_parquet


def test_parse_pharaoh_round_trip_and_empty_lines():
    links = parse_pharaoh(["0-0 1-2 2-1", "", "3-3"], source="x.align")
    assert links == [{(0, 0), (1, 2), (2, 1)}, set(), {(3, 3)}]
    assert format_pharaoh(links[0]) == "0-0 1-2 2-1"


@pytest.mark.parametrize("line", ["0-0 1_2", "0-0 1-", "a-1", "0-0 -1-2", "1p2"])
def test_malformed_alignment_line_names_file_and_line(line):
    with pytest.raises(DataError, match=r"en-de.align line 2: malformed link .*Pharaoh format"):
        parse_pharaoh(["0-0", line], source="en-de.align")


def test_alignment_index_out_of_range_names_file_and_line():
    with pytest.raises(DataError, match=r"en-de.align line 2: link 0-4 is out of range: .* 3 token\(s\) and the other 4"):
        parse_pharaoh(["0-0", "0-4"], source="en-de.align", src_lengths=[2, 3], tgt_lengths=[2, 4])


def test_alignment_line_count_must_match_corpus():
    with pytest.raises(DataError, match=r"en-de.align: 1 alignment line\(s\) for a corpus of 2 line\(s\)"):
        parse_pharaoh(["0-0"], source="en-de.align", src_lengths=[2, 3], tgt_lengths=[2, 4])


def test_intersection_and_union():
    fwd, rev = {(0, 0), (1, 1), (2, 1)}, {(0, 0), (1, 1), (2, 2)}
    assert symmetrise(fwd, rev) == {(0, 0), (1, 1)}
    assert symmetrise(fwd, rev, "union") == {(0, 0), (1, 1), (2, 1), (2, 2)}
    with pytest.raises(ValueError, match="unknown symmetrisation"):
        symmetrise(fwd, rev, "grow")


def test_grow_diag_final_by_hand():
    # Intersection {(0,0), (2,2)}. Growing: (1,1) is a diagonal neighbour of (0,0) in the union and
    # aligns unaligned words, so is (3,2) below (2,2). Final: (4,4) (forward only) touches no aligned
    # word and is added by both variants; (1,5) (reverse only) has an aligned pivot word 1 and a free
    # target word 5, so -final adds it (either word free) and -final-and does not (both free).
    fwd = {(0, 0), (1, 1), (2, 2), (4, 4)}
    rev = {(0, 0), (2, 2), (3, 2), (1, 5)}
    assert symmetrise(fwd, rev, "grow-diag-final") == {(0, 0), (1, 1), (2, 2), (3, 2), (4, 4), (1, 5)}
    assert symmetrise(fwd, rev, "grow-diag-final-and") == {(0, 0), (1, 1), (2, 2), (3, 2), (4, 4)}


def test_eflomal_aligns_the_synthetic_corpus_and_keeps_only_corpus_lines(demo_data):
    root = demo_data / "cloze"
    en, _ = read_text_lines(root / "cloze_demo.en")
    fr, _ = read_text_lines(root / "cloze_demo.fr")
    gold = parse_pharaoh(read_text_lines(root / "cloze_demo.en-fr.align")[0], source="gold")
    extra_en, _ = read_text_lines(root / "cloze_extra.en")
    extra_fr, _ = read_text_lines(root / "cloze_extra.fr")
    src = [s.split() for s in extra_en[:1500] + en]
    tgt = [s.split() for s in extra_fr[:1500] + fr]
    fwd, rev = run_eflomal(src, tgt, rel_iterations=0.5, n_samplers=2)
    assert len(fwd) == len(rev) == len(src)
    inter = [symmetrise(f, r) for f, r in zip(fwd[1500:], rev[1500:], strict=True)]
    hits = sum(len(a & g) for a, g in zip(inter, gold, strict=True))
    found = sum(len(a) for a in inter)
    truth = sum(len(g) for g in gold)
    precision, recall = hits / found, hits / truth
    # the templates make this an easy corpus: the intersection should be near perfect
    assert precision > 0.9 and recall > 0.7, (precision, recall)


def _tokens_file(path, lines, source):
    rows = [(i, j, w) for i, line in enumerate(lines, start=1) for j, w in enumerate(line.split())]
    df = pd.DataFrame(rows, columns=["line", "token", "text"])
    write_parquet(df, path, meta={"source": source, "n_lines": len(lines)})


def test_align_files_checks_line_counts_and_reads_pharaoh(tmp_path):
    _tokens_file(tmp_path / "en.parquet", ["a b", "c d e"], "corpus.en")
    _tokens_file(tmp_path / "de.parquet", ["x y", "z w"], "corpus.de")
    _tokens_file(tmp_path / "fr.parquet", ["x y"], "corpus.fr")
    (tmp_path / "en-de.align").write_text("0-0 1-1\n0-0 2-1\n")
    links, meta = align_files(tmp_path / "en.parquet", tmp_path / "de.parquet", pharaoh=tmp_path / "en-de.align",
                              langs=("en", "de"))
    assert links.values.tolist() == [[1, 0, 0], [1, 1, 1], [2, 0, 0], [2, 2, 1]]
    assert meta["alignment_source"].endswith("en-de.align")
    with pytest.raises(DataError, match=r"different line counts \(corpus.en: 2, corpus.fr: 1\)"):
        align_files(tmp_path / "en.parquet", tmp_path / "fr.parquet", pharaoh=tmp_path / "en-de.align")
    (tmp_path / "bad.align").write_text("0-0 1-1\n0-0 2-2\n")
    with pytest.raises(DataError, match=r"bad.align line 2: link 2-2 is out of range"):
        align_files(tmp_path / "en.parquet", tmp_path / "de.parquet", pharaoh=tmp_path / "bad.align")


def test_aer_by_hand():
    """Two sentences. Sure S = {(0,0),(1,1)} and {(0,0)}; possible P adds (2,1) to the first.
    Predicted A = {(0,0),(2,1),(2,2)} and {(0,0),(1,1)}: |A| = 5, |S| = 3, |P| = 4,
    |A∩S| = 1 + 1 = 2, |A∩P| = 2 + 1 = 3; precision 3/5, recall 2/3, AER = 1 - (2 + 3)/(5 + 3) = 3/8."""
    from plmfair.alignment import alignment_error

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
    from plmfair.alignment import gold_alignments

    # talp, German first, 1-based: "Haus 1-2 / das 2p1" -> (en, de) 0-based
    talp = gold_alignments("t", sentence_lines=["\ufeffdas Haus ||| the house"], link_lines=["1-1 2-2 2p1"], fmt="talp",
                           pivot_first=False)
    assert talp.pivot_sentences == [["the", "house"]] and talp.sentences == [["das", "Haus"]]
    assert talp.sure == [{(0, 0), (1, 1)}] and talp.possible == [{(0, 0), (1, 1), (0, 1)}]
    # pharaoh, pivot first, 0-based, separate files; a link past the end is dropped and counted
    ph = gold_alignments("p", sentence_lines=["la maison"], pivot_lines=["the house"], link_lines=["0-0 1-1 1-5"],
                         fmt="pharaoh", pivot_first=True, source="toy")
    assert ph.sure == ph.possible == [{(0, 0), (1, 1)}] and ph.dropped == 1
    with pytest.raises(DataError, match=r"toy line 1: malformed link '0-x'"):
        gold_alignments("p", sentence_lines=["a"], pivot_lines=["b"], link_lines=["0-x"], fmt="pharaoh",
                        pivot_first=True, source="toy")
    with pytest.raises(DataError, match=r"1 pivot sentence\(s\), 1 other sentence\(s\) and 2 alignment line\(s\)"):
        gold_alignments("p", sentence_lines=["a"], pivot_lines=["b"], link_lines=["", ""], fmt="pharaoh",
                        pivot_first=True)


def test_alignment_quality_on_the_real_vilar_gold_set_is_recomputed_from_its_links(shared_data):
    """eflomal on the 508 RWTH sentence pairs: the table's AER equals an independent count from the
    links the function returns and the gold file parsed here by hand."""
    from plmfair.alignment import alignment_quality_files

    root = shared_data / "wmt06" / "gold_alignments" / "vilar2006_de-en_via_Cross-Align"
    if not root.exists():
        pytest.skip("../shared/data/wmt06 is not there")
    gold = {"vilar2006": {"lang": "de", "format": "talp", "links_first": "de",
                          "sentences": {"path": root / "test.de-en"}, "links": {"path": root / "deen.talp"}}}
    quality, links = alignment_quality_files(gold, corpus="x", pivot="en", symmetrisations=["intersection", "union"],
                                             eflomal_options={"rel_iterations": 0.3, "n_samplers": 1})
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
