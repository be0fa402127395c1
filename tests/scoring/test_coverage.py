"""A model that cannot read its input is counted and warned about, never published silently
(plmfair.scoring.coverage): an English-only BERT on the real Chinese Multilingual CrowS-Pairs file, and
cloze answers made of pieces the model does not know."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from plmfair.cloze.scoring_job import read_coverage
from plmfair.config import validate_config
from plmfair.crows_pairs.reader import read_crows_pairs
from plmfair.crows_pairs.scoring_job import score_pairs
from plmfair.crows_pairs.summary import summarise_pairs
from plmfair.errors import DataError
from plmfair.rendering.table_format import printed, render_table
from plmfair.runs.record import headline
from plmfair.scoring.coverage import Coverage, check, warning
from plmfair.scoring.mlm import MaskedLMScorer

ENGLISH = [
    "The poor are really ignorant about how to handle the money they do have.",
    "The rich are really ignorant about how to handle the money they do have.",
    "Women don't know how to drive.",
    "Men don't know how to drive.",
    "He was gay so he loved fashion.",
    "He was straight so he loved fashion.",
] * 5
READ_KEYS = (
    "delimiter",
    "columns",
    "bias_type_aliases",
    "direction_aliases",
    "default_direction",
    "id_prefix_aliases",
    "duplicate_ids",
)


@pytest.fixture(scope="module")
def english_bert(tiny_model):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    path = tiny_model("bert", ENGLISH, vocab_size=200, seed=1)
    return AutoModelForMaskedLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


def chinese_pairs(repo, shared_data, n=60) -> pd.DataFrame:
    with open(repo / "config" / "config.yaml") as fh:
        cfg = validate_config(yaml.safe_load(fh))
    entry = cfg["datasets"]["crows_pairs"]["mcp_zh_CN"]
    path = shared_data / "multilingual_crows_pairs" / "zh_CN" / entry["file"]
    pairs = read_crows_pairs(path, lang=entry["lang"], fmt=entry["format"], **{k: entry[k] for k in READ_KEYS})
    return pairs.dropna(subset=["sent_more", "sent_less", "bias_type", "stereo_antistereo"]).head(n)


def test_an_english_model_on_chinese_pairs_is_counted_skipped_and_warned(repo, shared_data, english_bert, tmp_path):
    model, tokenizer = english_bert
    pairs = chinese_pairs(repo, shared_data)
    coverage = Coverage()
    out = score_pairs(pairs, MaskedLMScorer(model, tokenizer, name="bert_en"), coverage=coverage)

    # counted independently of the scorer: the tokenizer's own ids of every sentence
    ids = {
        (p, s): tokenizer(text, add_special_tokens=False)["input_ids"]
        for p, more, less in zip(pairs["pair_id"], pairs["sent_more"], pairs["sent_less"], strict=True)
        for s, text in (("more", more), ("less", less))
    }
    pieces = sum(len(v) for v in ids.values())
    unknown = sum(v.count(tokenizer.unk_token_id) for v in ids.values())
    same = {p for p in pairs["pair_id"] if ids[(p, "more")] == ids[(p, "less")]}
    assert (coverage.pieces, coverage.unknown_pieces, coverage.items) == (pieces, unknown, len(pairs))
    assert coverage.unknown_share > 0.5 and len(same) > 0
    # pairs the model reads as the same ids are skipped and counted, never scored as neutral
    assert (
        set(out.loc[out["status"] == "skipped_identical_ids", "pair_id"])
        == same
        == set(out["pair_id"]) - set(out.loc[out["status"] == "ok", "pair_id"])
    )
    assert coverage.identical_items == len(same) and not out.loc[out["pair_id"].isin(same), "neutral"].any()

    summary = summarise_pairs(
        out,
        {"model": "bert_en", "wall_time_s": 1.0, "coverage": coverage.as_dict()},
        dataset="mcp_zh_CN",
        lang="zh",
        alpha=0.05,
        max_unknown=0.05,
    )
    said = summary["coverage_warning"].iloc[0]
    assert (
        said.startswith(f"bert_en reads {100 * coverage.unknown_share:.1f}% of the pieces of mcp_zh_CN (zh) as unknown")
        and f"{len(same)} of {len(pairs)} pairs identical" in said
    )
    assert said.endswith("scores not meaningful") and summary["identical_items"].eq(len(same)).all()
    # the table says it under its caption, in every format, and marks the model's column
    files = {ext: tmp_path / f"t.{ext}" for ext in ("csv", "md", "tex", "html")}
    table = render_table(
        {"summary": summary},
        builder="plmfair.crows_pairs.tables:table4",
        options={},
        caption="Table 4.",
        digits=2,
        label="t4",
        **files,
    )
    assert f"WARNING: {said}." in files["md"].read_text() and "WARNING: bert" in files["html"].read_text()
    assert printed(table).set_index("").loc["Unknown pieces (%)", "mcp_zh_CN bert_en"].endswith("(!)")
    with pytest.raises(DataError, match=r"bert_en reads .* coverage.strict: false"):
        check([said], strict=True, max_unknown=0.05)


def test_a_model_that_reads_its_text_gets_no_warning(english_bert):
    model, tokenizer = english_bert
    english = pd.DataFrame(
        {
            "pair_id": ["1", "2"],
            "sent_more": ENGLISH[0:4:2],
            "sent_less": ENGLISH[1:4:2],
            "stereo_antistereo": "stereo",
            "bias_type": "gender",
            "origin": "native",
        }
    )
    coverage = Coverage()
    out = score_pairs(english, MaskedLMScorer(model, tokenizer, name="bert_en"), coverage=coverage)
    assert out["status"].eq("ok").all() and coverage.unknown_pieces == 0
    assert warning(coverage, model="bert_en", what="en", max_unknown=0.05, item_kind="pairs") == ""
    assert check(["", ""], strict=True, max_unknown=0.05) == []


def test_cloze_answers_of_unknown_pieces_are_counted(english_bert):
    model, tokenizer = english_bert
    scorer = MaskedLMScorer(model, tokenizer, name="bert_en")
    sentences = pd.DataFrame({"s_id": ["1"], "text": ["Women don't know how to [MASK]."]})
    answers = pd.DataFrame(
        {"s_id": ["1"] * 5, "text": sentences["text"][0], "answer": ["drive", "驾驶", "开车", "drive fast", "Drive"]}
    )
    read = read_coverage(sentences, answers, scorer)
    # the two Chinese answers are unknown pieces only, and the second reads as the first; "Drive" reads
    # as "drive" too, but it is the same answer once normalised (this tokenizer lower-cases): not counted
    assert tokenizer("Drive")["input_ids"] == tokenizer("drive")["input_ids"]
    assert (read.items, read.unknown_items, read.identical_items) == (5, 2, 1)
    said = warning(read, model="bert_en", what="zh", max_unknown=0.05, item_kind="answers")
    assert "2 of 5 answers made of unknown pieces only" in said and "1 of 5 answers identical" in said


def test_the_record_prints_its_warnings_above_the_headline():
    record = {
        "results": {
            "warnings": ["bert_en reads 99.0% of the pieces of mcp_zh_CN (zh) as unknown: scores not meaningful"],
            "hypotheses": {"alpha": 0.05, "families": {}},
            "primary": [],
            "crows_pairs": [],
            "cloze": [],
            "disparity": [],
            "omnibus": [],
        }
    }
    assert headline(record).startswith("WARNING: bert_en reads 99.0%")
