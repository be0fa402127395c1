"""Annotation sheets of a constructed set, and the answers to them read back and checked."""

import json

import pandas as pd
import pytest
from conftest import construct_in_memory

from plmfair.cloze.construction.answers import ingest_answers, write_annotation_sheets
from plmfair.errors import DataError


def test_annotation_sheets_in_batches(demo_corpus, tmp_path):
    sentences, _ = construct_in_memory(demo_corpus, n=24)
    paths = write_annotation_sheets(sentences, out_dir=tmp_path / "sheets", batch_size=10)
    assert len(paths) == 4 * 3 and {p.parent.name for p in paths} == {"en", "de", "es", "fr"}
    paths = [p for p in paths if p.parent.name == "de"]
    assert [p.name for p in paths] == ["batch_001.csv", "batch_002.csv", "batch_003.csv"]
    sheets = [pd.read_csv(p, keep_default_na=False) for p in paths]
    assert [len(s) for s in sheets] == [10, 10, 4]
    assert sheets[0].columns.tolist() == ["batch", "s_id", "lang", "text", "mask"]
    assert set(pd.concat(sheets)["s_id"]) == set(sentences.loc[sentences["lang"] == "de", "s_id"])
    assert (pd.concat(sheets)["mask"] == "").all()


def _answer(s_id, text, mask, **kw):
    return json.dumps(
        {
            "s_id": s_id,
            "text": text,
            "mask": mask,
            "u_id": kw.get("u", "u1"),
            "male": 1,
            "female": 0,
            "native": 1,
            "nonnative": 0,
        }
    )


def test_answers_in_mozart_jsonl_are_ingested_and_checked(demo_corpus, tmp_path):
    sentences, _ = construct_in_memory(demo_corpus)
    fr = sentences[sentences["lang"] == "fr"].iloc[0]
    good = tmp_path / "fr.jsonl"
    good.write_text(
        _answer(fr["s_id"], fr["text"], " chien ") + "\n" + _answer(fr["s_id"], fr["text"], "chat", u="u2") + "\n"
    )
    ann = ingest_answers(sentences, {"fr": good})
    assert ann["answer"].tolist() == ["chien", "chat"] and set(ann["group"]) == {"MN"}
    assert ann["true_mask"].tolist() == [fr["true_mask"]] * 2 and ann["tag"].tolist() == [fr["tag"]] * 2
    bad_id = tmp_path / "bad_id.jsonl"
    bad_id.write_text(_answer("demo-999", fr["text"], "x") + "\n")
    with pytest.raises(DataError, match="bad_id.jsonl: s_id demo-999 is not a constructed fr sentence"):
        ingest_answers(sentences, {"fr": bad_id})
    bad_text = tmp_path / "bad_text.jsonl"
    bad_text.write_text(_answer(fr["s_id"], "autre [MASK] .", "x") + "\n")
    with pytest.raises(DataError, match=f"s_id {fr['s_id']} has text 'autre"):
        ingest_answers(sentences, {"fr": bad_text})
