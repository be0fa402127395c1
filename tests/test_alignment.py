"""Word alignments: Pharaoh parsing and its errors, symmetrisation by hand, eflomal on synthetic text."""

from __future__ import annotations

import pandas as pd
import pytest

from plmfair.alignment import align_files, format_pharaoh, parse_pharaoh, run_eflomal, symmetrise
from plmfair.corpus_text import read_text_lines
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


@pytest.mark.parametrize("link", ["²-0", "0-٣", "1-１"])
def test_a_link_with_a_digit_that_is_not_ascii_is_malformed(link):
    """str.isdigit() takes '²', Arabic-Indic and full-width digits, which int() then fails on or reads."""
    with pytest.raises(DataError, match=rf"a.align line 1: malformed link '{link}'"):
        parse_pharaoh([link], source="a.align")
