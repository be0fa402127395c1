"""Word alignments: Pharaoh parsing and its errors, symmetrisation by hand, eflomal on synthetic text."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from plmfair.cloze.construction.alignment import (
    SYMMETRISATIONS,
    align_files,
    eflomal_links,
    format_pharaoh,
    link_chunks,
    links_frame,
    parse_pharaoh,
    symmetrise,
    write_sentences,
    write_token_lines,
)
from plmfair.errors import DataError
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.io.text_files import read_text_lines


def test_parse_pharaoh_round_trip_and_empty_lines():
    links = parse_pharaoh(["0-0 1-2 2-1", "", "3-3"], source="x.align")
    assert links == [{(0, 0), (1, 2), (2, 1)}, set(), {(3, 3)}]
    assert format_pharaoh(links[0]) == "0-0 1-2 2-1"


@pytest.mark.parametrize("line", ["0-0 1_2", "0-0 1-", "a-1", "0-0 -1-2", "1p2"])
def test_malformed_alignment_line_names_file_and_line(line):
    with pytest.raises(DataError, match=r"en-de.align line 2: malformed link .*Pharaoh format"):
        parse_pharaoh(["0-0", line], source="en-de.align")


def test_alignment_index_out_of_range_names_file_and_line():
    with pytest.raises(
        DataError, match=r"en-de.align line 2: link 0-4 is out of range: .* 3 token\(s\) and the other 4"
    ):
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


@pytest.fixture(scope="module")
def demo_eflomal(demo_data, tmp_path_factory):
    """One eflomal run on the demo's English-French corpus after 1,500 extra lines: its input files,
    its two link files, and the corpus lines."""
    root = demo_data / "cloze"
    en, _ = read_text_lines(root / "cloze_demo.en")
    fr, _ = read_text_lines(root / "cloze_demo.fr")
    extra_en, _ = read_text_lines(root / "cloze_extra.en")
    extra_fr, _ = read_text_lines(root / "cloze_extra.fr")
    tmp = tmp_path_factory.mktemp("eflomal")
    for name, lines in (("src", extra_en[:1500] + en), ("tgt", extra_fr[:1500] + fr)):
        with open(tmp / name, "w", encoding="utf-8") as fh:
            write_sentences((s.split() for s in lines), fh)
    fwd, rev = eflomal_links(tmp / "src", tmp / "tgt", tmp, rel_iterations=0.5, n_samplers=2)
    return {"fwd": fwd, "rev": rev, "en": en, "fr": fr, "extra": 1500}


def test_eflomal_aligns_the_synthetic_corpus_and_keeps_only_corpus_lines(demo_data, demo_eflomal):
    root = demo_data / "cloze"
    gold = parse_pharaoh(read_text_lines(root / "cloze_demo.en-fr.align")[0], source="gold")
    en, fr = demo_eflomal["en"], demo_eflomal["fr"]
    links = pd.concat(
        link_chunks(
            demo_eflomal["fwd"],
            demo_eflomal["rev"],
            skip=1500,
            n_lines=len(en),
            method="intersection",
            src_len=np.array([len(s.split()) for s in en]),
            tgt_len=np.array([len(s.split()) for s in fr]),
            source="demo",
        )
    )
    inter = [set() for _ in en]
    for line, i, j in links.itertuples(index=False):
        inter[line - 1].add((i, j))
    hits = sum(len(a & g) for a, g in zip(inter, gold, strict=True))
    found = sum(len(a) for a in inter)
    truth = sum(len(g) for g in gold)
    precision, recall = hits / found, hits / truth
    # the templates make this an easy corpus: the intersection should be near perfect
    assert precision > 0.9 and recall > 0.7, (precision, recall)


@pytest.mark.parametrize("method", SYMMETRISATIONS)
@pytest.mark.parametrize("chunk_lines", [7, 50_000])
def test_streamed_links_equal_the_whole_corpus_parsed_at_once(demo_eflomal, method, chunk_lines):
    """The links parsed a chunk at a time into arrays and symmetrised there are exactly those of the
    whole link files parsed into sets and symmetrised sentence by sentence (the code before streaming)."""
    en, fr, skip = demo_eflomal["en"], demo_eflomal["fr"], demo_eflomal["extra"]
    n = len(en) + 3  # three trailing empty sentences eflomal writes no line for
    with open(demo_eflomal["fwd"]) as f, open(demo_eflomal["rev"]) as r:
        fwd, rev = (parse_pharaoh(fh.read().splitlines(), source="x") for fh in (f, r))
    fwd, rev = (d[skip:] + [set()] * (n - len(d[skip:])) for d in (fwd, rev))
    expected = links_frame([symmetrise(a, b, method) for a, b in zip(fwd, rev, strict=True)])
    lengths = [np.array([len(s.split()) for s in side] + [0] * 3) for side in (en, fr)]
    got = pd.concat(
        link_chunks(
            demo_eflomal["fwd"],
            demo_eflomal["rev"],
            skip=skip,
            n_lines=n,
            method=method,
            src_len=lengths[0],
            tgt_len=lengths[1],
            source="demo",
            chunk_lines=chunk_lines,
        ),
        ignore_index=True,
    )
    assert len(expected) > 300  # about 6 links a line on the 81 demo lines (eflomal varies run to run)
    pd.testing.assert_frame_equal(got, expected)
    short = lengths[1].copy()
    short[int(got["line"].iloc[0]) - 1] = 0
    with pytest.raises(DataError, match=rf"link out of range at line {got['line'].iloc[0]} of demo"):
        list(
            link_chunks(
                demo_eflomal["fwd"],
                demo_eflomal["rev"],
                skip=skip,
                n_lines=n,
                method=method,
                src_len=lengths[0],
                tgt_len=short,
                source="demo",
                chunk_lines=chunk_lines,
            )
        )


def test_token_lines_stream_across_batches_with_empty_lines(tmp_path):
    """eflomal's text written from a tokens file a few rows at a time: lines split across batches,
    lines without tokens, white-space tokens; equal to the sentences built from the whole table."""
    lines = ["a b c", "", "Dd  e", "f", "", ""]
    rows = [(k, j, w) for k, text in enumerate(lines, start=1) for j, w in enumerate(text.split(" ")) if text]
    write_parquet(pd.DataFrame(rows, columns=["line", "token", "text"]), tmp_path / "t.parquet")
    for batch_rows in (1, 2, 3, 1000):
        with open(tmp_path / "out.txt", "w") as fh:
            lengths = write_token_lines(tmp_path / "t.parquet", fh, n_lines=len(lines), batch_rows=batch_rows)
        assert (tmp_path / "out.txt").read_text().split("\n") == ["a b c", "", "Dd <sp> e", "f", "", "", ""]
        assert lengths.tolist() == [3, 0, 3, 1, 0, 0]
    with open(tmp_path / "out.txt", "w") as fh:
        write_token_lines(tmp_path / "t.parquet", fh, n_lines=len(lines), lowercase=True)
    assert (tmp_path / "out.txt").read_text().splitlines()[2] == "dd <sp> e"
    shuffled = pd.DataFrame(rows, columns=["line", "token", "text"]).iloc[[1, 0, 2, 3, 4, 5, 6]]
    write_parquet(shuffled, tmp_path / "s.parquet")
    out = tmp_path / "out.txt"
    with (
        out.open("w") as lines_out,
        pytest.raises(DataError, match=r"s.parquet: not in line and token order .* \(rm .*s.parquet\)"),
    ):
        write_token_lines(tmp_path / "s.parquet", lines_out, n_lines=len(lines))


def _tokens_file(path, lines, source):
    rows = [(i, j, w) for i, line in enumerate(lines, start=1) for j, w in enumerate(line.split())]
    df = pd.DataFrame(rows, columns=["line", "token", "text"])
    write_parquet(df, path, meta={"source": source, "n_lines": len(lines)})


def test_align_files_checks_line_counts_and_reads_pharaoh(tmp_path):
    _tokens_file(tmp_path / "en.parquet", ["a b", "c d e"], "corpus.en")
    _tokens_file(tmp_path / "de.parquet", ["x y", "z w"], "corpus.de")
    _tokens_file(tmp_path / "fr.parquet", ["x y"], "corpus.fr")
    (tmp_path / "en-de.align").write_text("0-0 1-1\n0-0 2-1\n")
    meta = align_files(
        tmp_path / "en.parquet",
        tmp_path / "de.parquet",
        tmp_path / "out.parquet",
        pharaoh=tmp_path / "en-de.align",
        langs=("en", "de"),
    )
    links = read_parquet(tmp_path / "out.parquet")
    assert links.values.tolist() == [[1, 0, 0], [1, 1, 1], [2, 0, 0], [2, 2, 1]]
    assert meta["alignment_source"].endswith("en-de.align")
    with pytest.raises(DataError, match=r"different line counts \(corpus.en: 2, corpus.fr: 1\)"):
        align_files(
            tmp_path / "en.parquet", tmp_path / "fr.parquet", tmp_path / "o.parquet", pharaoh=tmp_path / "en-de.align"
        )
    (tmp_path / "bad.align").write_text("0-0 1-1\n0-0 2-2\n")
    with pytest.raises(DataError, match=r"bad.align line 2: link 2-2 is out of range"):
        align_files(
            tmp_path / "en.parquet", tmp_path / "de.parquet", tmp_path / "o.parquet", pharaoh=tmp_path / "bad.align"
        )
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.parametrize("link", ["²-0", "0-٣", "1-１"])
def test_a_link_with_a_digit_that_is_not_ascii_is_malformed(link):
    """str.isdigit() takes '²', Arabic-Indic and full-width digits, which int() then fails on or reads."""
    with pytest.raises(DataError, match=rf"a.align line 1: malformed link '{link}'"):
        parse_pharaoh([link], source="a.align")
