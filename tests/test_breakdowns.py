"""Fine-grained breakdowns: buckets, hand-computed cells, and the real MozArt answers recomputed independently."""

from __future__ import annotations

import pandas as pd
import pytest
from oracles import oracle_mozart_scores

from plmfair.cloze.breakdowns import CLOZE_BREAKDOWN_SCHEMA, cloze_breakdowns, equal_size_buckets
from plmfair.crows_pairs.breakdowns import (
    CROWS_BREAKDOWN_SCHEMA,
    crows_breakdowns,
    differing_tokens,
)


def test_equal_size_buckets_cut_at_quartiles_and_label_with_their_values():
    b = equal_size_buckets(pd.Series([1, 2, 3, 4, 5, 6, 7, 8]))
    assert b["bucket"].tolist() == ["1-2", "1-2", "3-4", "3-4", "5-6", "5-6", "7-8", "7-8"]
    assert b["bucket_order"].tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    # ties leave fewer buckets, never a value in two of them
    tied = equal_size_buckets(pd.Series([0.25, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]))
    assert tied["bucket"].tolist() == ["0.25-0.50"] * 2 + ["1"] * 6


def test_differing_tokens_outside_the_shared_blocks():
    assert differing_tokens("Poor people are lazy .", "Rich people are lazy .") == 1
    assert differing_tokens("He is a lazy old man", "She is a man") == 3  # He, lazy, old
    assert differing_tokens("same words", "same words") == 0


def _toy():
    annotations = pd.DataFrame(
        {
            "lang": "fr",
            "s_id": ["1"] * 4 + ["2"] * 4,
            "text": ["Le [MASK] dort ."] * 4 + ["Nous [MASK] la commission européenne ici ."] * 4,
            "tag": ["NOUN"] * 4 + ["VERB"] * 4,
            "u_id": ["a", "b", "c", "d"] * 2,
            "group": ["MN", "FN", "MNN", "FNN"] * 2,
            "answer": ["chat", "Chat", "chien", "chat", "aimons", "soutenons", "aimons", "pomme de terre"],
        }
    )
    scores = pd.DataFrame(
        {
            "model": "m",
            "lang": "fr",
            "s_id": annotations["s_id"],
            "u_id": annotations["u_id"],
            "group": annotations["group"],
            "answer": annotations["answer"],
            "hit1": [1, 1, 0, 1, 1, 0, 1, 0],
            "hit5": [1, 1, 1, 1, 1, 1, 1, 0],
            "rr": [1, 1, 0.5, 1, 1, 0.25, 1, 0],
            "n_pieces": [1, 1, 2, 1, 3, 4, 3, 5],
        }
    )
    return scores, annotations


def test_cloze_breakdown_cells_hand_computed():
    scores, annotations = _toy()
    out = cloze_breakdowns(scores, annotations)
    assert list(out.columns) == list(CLOZE_BREAKDOWN_SCHEMA)
    assert set(out["lang"]) == {"fr", "all"}
    cell = out[out["lang"] == "fr"].set_index(["group", "attribute", "bucket"])
    # pos: NOUN holds sentence 1 (hits 1, 1, 0, 1), VERB sentence 2 (1, 0, 1, 0)
    assert cell.loc[("all", "pos", "NOUN"), "p_at_1"] == 75.0
    assert cell.loc[("all", "pos", "VERB"), "mrr"] == pytest.approx(100 * 2.25 / 4)
    assert cell.loc[("all", "pos", "VERB"), "n"] == 4 and cell.loc[("all", "pos", "VERB"), "n_sentences"] == 1
    # agreement: sentence 1 answers chat x3 (case folded), chien -> 0.75; sentence 2 aimons x2 of 4 -> 0.5
    assert cell.loc[("all", "agreement", "0.75"), "p_at_1"] == 75.0  # 2 sentences: 2 buckets
    assert cell.loc[("all", "agreement", "0.50"), "p_at_5"] == 75.0
    # length: 4 and 7 tokens, the gap counted as one
    assert set(out.loc[out["attribute"] == "length", "bucket"]) == {"4", "7"}
    # answer pieces 1, 2, 3+ and multi-word answers, per group
    assert cell.loc[("all", "answer_pieces", "3+"), "n"] == 4
    assert cell.loc[("all", "answer_pieces", "2"), "mrr"] == 50.0
    assert cell.loc[("FNN", "multiword", "yes"), "n"] == 1 and cell.loc[("FNN", "multiword", "yes"), "p_at_5"] == 0.0
    assert cell.loc[("MN", "pos", "NOUN"), "n"] == 1
    # every attribute partitions the annotations of every group
    sums = out[out["lang"] == "all"].groupby(["group", "attribute"])["n"].sum()
    assert (sums.xs("all", level="group") == 8).all() and (sums.drop("all", level="group") == 2).all()


def test_crows_breakdown_scores_and_wilson_intervals():
    pairs = pd.DataFrame(
        {
            "pair_id": ["0", "1", "2", "3"],
            "sent_more": ["Poor people are lazy .", "Old men drive badly", "He is a lazy old man", None],
            "sent_less": ["Rich people are lazy .", "Young men drive badly", "She is a man", "x"],
        }
    )
    scores = pd.DataFrame(
        {
            "pair_id": ["0", "1", "2", "3"],
            "bias_type": ["socioeconomic", "age", "age", "age"],
            "origin": ["native", "native", "translated", "native"],
            "biased": [True, False, True, False],
            "neutral": False,
            "status": ["ok", "ok", "ok", "skipped_missing"],
        }
    )
    out = crows_breakdowns(scores, pairs, dataset="d", lang="en", model="m")
    assert list(out.columns) == list(CROWS_BREAKDOWN_SCHEMA)
    cell = out.set_index(["attribute", "bucket"])
    age = cell.loc[("bias_type", "age")]
    assert age["n_pairs"] == 3 and age["n"] == 2 and age["n_biased"] == 1 and age["score"] == 50.0
    from scipy.stats import binomtest

    ci = binomtest(1, 2).proportion_ci(method="wilson")
    assert age["ci_low"] == pytest.approx(100 * ci.low) and age["ci_high"] == pytest.approx(100 * ci.high)
    assert cell.loc[("differing_tokens", "1"), "n"] == 2 and cell.loc[("differing_tokens", "3"), "n_biased"] == 1
    assert cell.loc[("origin", "native"), "n_pairs"] == 3 and cell.loc[("origin", "native"), "n"] == 2
    # the pair without both sentences has no length or differing-token bucket
    assert out.loc[out["attribute"] == "length", "n_pairs"].sum() == 3


def test_real_mozart_pos_and_agreement_recomputed_independently(shared_data):
    """A ranking known in advance (each sentence's top 5: the five answers native speakers gave
    most often) on the real answers; the POS and agreement cells are recomputed from the data."""
    ann, scores = oracle_mozart_scores(shared_data, ["en", "es", "de", "fr"])
    out = cloze_breakdowns(scores, ann).set_index(["lang", "group", "attribute", "bucket"])

    # by hand: join each scored annotation to its sentence's tag and agreement
    answered = ann[ann["answer"] != ""]
    counts = answered.groupby(["lang", "s_id", "norm"]).size()
    agree = (counts.groupby(level=[0, 1]).max() / counts.groupby(level=[0, 1]).sum()).rename("agreement")
    tags = ann.drop_duplicates(["lang", "s_id"]).set_index(["lang", "s_id"])["tag"]
    joined = scores.join(tags, on=["lang", "s_id"]).join(agree, on=["lang", "s_id"])
    for (lang, tag, group), g in [((la, t, "all"), g) for (la, t), g in joined.groupby(["lang", "tag"])] + [
        ((la, t, gr), g) for (la, t, gr), g in joined.groupby(["lang", "tag", "group"])
    ]:
        row = out.loc[(lang, group, "pos", tag)]
        assert row["n"] == len(g)
        assert row["p_at_1"] == pytest.approx(100 * g["hit1"].mean())
        assert row["mrr"] == pytest.approx(100 * g["rr"].mean())
    # agreement quartiles over all sentences of the four languages
    per_sentence = agree.reset_index()
    cuts = per_sentence["agreement"].quantile([0, 0.25, 0.5, 0.75, 1]).unique()
    bucket = pd.cut(per_sentence["agreement"], cuts, include_lowest=True, labels=False)
    per_sentence["code"] = bucket
    joined = joined.merge(per_sentence[["lang", "s_id", "code"]], on=["lang", "s_id"])
    mine = out.xs("agreement", level="attribute").reset_index()
    for (lang, code), g in joined.groupby(["lang", "code"]):
        members = per_sentence.loc[per_sentence["code"] == code, "agreement"]
        lo, hi = members.min(), members.max()
        fmt = "{:.0f}" if float(lo).is_integer() and float(hi).is_integer() else "{:.2f}"
        label = f"{fmt.format(lo)}-{fmt.format(hi)}" if lo != hi else fmt.format(lo)
        row = mine[(mine["lang"] == lang) & (mine["group"] == "all") & (mine["bucket_order"] == code)]
        assert len(row) == 1 and row["n"].item() == len(g), (lang, code)
        assert row["p_at_5"].item() == pytest.approx(100 * g["hit5"].mean())
        assert row["bucket"].item() == label
