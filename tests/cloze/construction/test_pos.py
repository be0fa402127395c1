"""Tokens and POS with spaCy pipelines built here (no downloads), corpus files and their errors."""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
import tarfile
import zipfile

import pytest

from plmfair.cloze.construction.pos import (
    TAGS_SCHEMA,
    TOKENS_SCHEMA,
    build_lexicon_pipeline,
    load_pipeline,
    read_lexicon,
    tag_lines,
    tag_tokens,
    tokenize_corpus_file,
)
from plmfair.errors import ConfigError, DataError
from plmfair.io.parquet import read_parquet, read_parquet_meta
from plmfair.io.text_files import read_text_lines


@pytest.fixture(scope="module")
def fr_pipeline(tmp_path_factory):
    path = tmp_path_factory.mktemp("spacy") / "fr"
    entries = [
        {"word": "chien", "upos": "NOUN"},
        {"word": "dort", "upos": "VERB"},
        {"word": "le", "upos": "DET"},
        {"word": "aujourd'hui", "upos": "ADV", "dep": "advmod"},
    ]
    build_lexicon_pipeline("fr", entries, path)
    return path


def test_missing_pipeline_stops_with_the_download_command():
    with pytest.raises(ConfigError, match=r"python -m spacy download xx_notthere_sm"):
        load_pipeline("xx_notthere_sm", "xx")


def test_raw_text_is_tokenized_by_the_language_rules(fr_pipeline):
    nlp = load_pipeline(fr_pipeline, "fr")
    tokens, empties = tag_lines(nlp, ["Le chien dort aujourd'hui."])
    assert empties == []
    assert tokens["text"].tolist() == ["Le", "chien", "dort", "aujourd'hui", "."]
    assert tokens["upos"].tolist() == ["DET", "NOUN", "VERB", "ADV", ""]
    assert tokens["dep"].tolist()[3] == "advmod"
    assert tokens["whitespace"].tolist() == [" ", " ", " ", "", ""]
    assert tokens["is_alpha"].tolist() == [True, True, True, False, False]
    assert list(tokens.columns) == list(TOKENS_SCHEMA) + list(TAGS_SCHEMA)[2:]


def test_pretokenized_lines_keep_their_tokens(fr_pipeline):
    nlp = load_pipeline(fr_pipeline, "fr")
    tokens, _ = tag_lines(nlp, ["le chien dort aujourd ' hui ."], tokenized=True)
    assert tokens["text"].tolist() == ["le", "chien", "dort", "aujourd", "'", "hui", "."]
    assert tokens["token"].tolist() == list(range(7))


def test_empty_line_error_or_counted_skip(fr_pipeline):
    nlp = load_pipeline(fr_pipeline, "fr")
    with pytest.raises(DataError, match=r"corpus.fr line 2: empty sentence \(2 empty line\(s\) in all\)"):
        tag_lines(nlp, ["le chien", "  ", "dort", ""], source="corpus.fr")
    tokens, empties = tag_lines(nlp, ["le chien", "  ", "dort", ""], source="corpus.fr", empty="skip")
    assert empties == [2, 4] and sorted(set(tokens["line"])) == [1, 3]


def test_read_lexicon_rejects_malformed_rows(tmp_path):
    path = tmp_path / "lex.tsv"
    path.write_text("chien\tNOUN\ndort\n")
    with pytest.raises(DataError, match=r"lex.tsv line 2: expected `word<TAB>UPOS\[<TAB>dep\]`"):
        read_lexicon(path)


def _tar(path, members):
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


def test_corpus_lines_from_plain_gzip_tar_and_zip(tmp_path):
    body = b"eins\nzwei\x0bmit Steuerzeichen\r\ndrei\n"
    (tmp_path / "c.de").write_bytes(body)
    with gzip.open(tmp_path / "c.de.gz", "wb") as fh:
        fh.write(body)
    _tar(tmp_path / "dev.tgz", {"dev/test2006.de": body})
    with zipfile.ZipFile(tmp_path / "dev.zip", "w") as zf:
        zf.writestr("dev/test2006.de", body)
    expected = ["eins", "zwei\x0bmit Steuerzeichen", "drei"]  # a vertical tab does not split a line
    assert read_text_lines(tmp_path / "c.de")[0] == expected
    assert read_text_lines(tmp_path / "c.de.gz")[0] == expected
    lines, source = read_text_lines(tmp_path / "dev.tgz", "dev/test2006.de")
    assert lines == expected and source.endswith("dev.tgz:dev/test2006.de")
    assert read_text_lines(tmp_path / "dev.zip", "dev/test2006.de")[0] == expected


def test_missing_member_and_bad_encoding_are_named(tmp_path):
    _tar(tmp_path / "dev.tgz", {"dev/test2006.de": b"x\n", "other/test2006.en": b"y\n"})
    with pytest.raises(
        DataError, match=r"no member 'test2006.en'; members with that file name: \['other/test2006.en'\]"
    ):
        read_text_lines(tmp_path / "dev.tgz", "test2006.en")
    (tmp_path / "latin1.fr").write_bytes("ligne un\nl'\xe9t\xe9\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"latin1.fr line 2: not valid UTF-8"):
        read_text_lines(tmp_path / "latin1.fr")


def test_tokenize_corpus_file_writes_row_groups_and_records_lines(fr_pipeline, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    import plmfair.cloze.construction.pos

    monkeypatch.setattr(plmfair.cloze.construction.pos, "ROW_GROUP_LINES", 2)
    (tmp_path / "c.fr").write_text("le chien dort\n\nle chien\nchien\ndort le chien\n")
    meta = tokenize_corpus_file(
        tmp_path / "c.fr", tmp_path / "t.parquet", lang="fr", pipeline=fr_pipeline, empty="skip"
    )
    assert meta["n_lines"] == 5 and meta["n_empty"] == 1 and meta["empty_lines"] == [2]
    assert read_parquet_meta(tmp_path / "t.parquet")["source"].endswith("c.fr")
    tokens = read_parquet(tmp_path / "t.parquet")
    assert list(tokens.columns) == list(TOKENS_SCHEMA) and tokens["line"].tolist() == [1, 1, 1, 3, 3, 4, 5, 5, 5]
    assert pq.ParquetFile(tmp_path / "t.parquet").num_row_groups == 3  # lines 1-2, 3-4, 5
    (tmp_path / "empty.fr").write_text("")
    with pytest.raises(DataError, match="empty.fr: the corpus file is empty"):
        tokenize_corpus_file(tmp_path / "empty.fr", tmp_path / "e.parquet", lang="fr", pipeline=fr_pipeline)
    assert not (tmp_path / "e.parquet").exists()


def test_tagging_a_subset_of_lines_gives_the_tags_of_tagging_everything(fr_pipeline):
    """The workflow tags only the lines it examines, from their tokens: the same tags as one full pass."""
    nlp = load_pipeline(fr_pipeline, "fr")
    lines = ["Le chien dort aujourd'hui.", "le chien", "Aujourd'hui le chien dort."]
    full, _ = tag_lines(nlp, lines)
    tokens = full[list(TOKENS_SCHEMA)]
    part = tag_tokens(nlp, tokens[tokens["line"] == 3])
    expected = full.loc[full["line"] == 3, list(TAGS_SCHEMA)].reset_index(drop=True)
    assert part.equals(expected)
    # tokens from another tokenizer: "chien dort" as one token
    changed = tokens[tokens["line"] == 1].assign(text=lambda t: t["text"].replace({"chien": "chien dort"}))
    with pytest.raises(DataError, match="line 1: the pipeline tokenizes the line differently"):
        tag_tokens(nlp, changed)


def test_missing_spacy_pipeline_says_how_to_install_it():
    from plmfair.cloze.construction.pos import load_pipeline
    from plmfair.errors import ConfigError

    with pytest.raises(ConfigError, match="spaCy pipeline 'xx_core_news_xl' .* is not installed. Install it with"):
        load_pipeline("xx_core_news_xl", "fr")


def test_a_tagging_job_does_not_load_torch_and_torch_still_loads_after(fr_pipeline, tmp_path):
    """In a process of its own, as a tokenize or tag job is: spaCy comes without torch (thinc only
    asks whether it is there; the cloze environment has none), the pipeline tags as it does here, and
    the process can still import torch afterwards."""
    code = (
        "import sys\n"
        "from plmfair.cloze.construction.pos import load_pipeline, tag_lines\n"
        f"tokens, _ = tag_lines(load_pipeline({str(fr_pipeline)!r}, 'fr'), ['Le chat dort.'])\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "print(' '.join(tokens['text']))\n"
        "import torch\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["Le", "chat", "dort", "."]
