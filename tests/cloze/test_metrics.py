"""Golden tests: every MozArt metric on a small table computed by hand."""

import math

import pandas as pd
import pytest

from plmfair.cloze.metrics import (
    annotation_scores,
    answer_ranks,
    compute_metrics,
    group_metrics,
)
from plmfair.cloze.tables import paper_table, sigma_gd
from plmfair.rendering.table_format import printed
from plmfair.text import normalise, normalise_whitespace


def test_normalise_nfc_trim_lower_and_tokenizer_norm():
    decomposed = "E\u0301lan "  # E + combining acute
    assert normalise(decomposed) == "élan"
    strip_accents = lambda s: s.replace("é", "e")  # noqa: E731 - stands in for mBERT's normalizer
    assert normalise(" Élan", strip_accents) == "elan"
    assert normalise_whitespace(" The  house\t is\u00a0red ") == "The house is red"


def test_answer_ranks_first_match():
    assert answer_ranks(["b", "z", "a"], ["a", "b", "b", "c"]) == [2, None, 1]


def test_group_metrics_hand_computed():
    # 5 annotations; ranks 1, 2, None, 6 (outside top 5), 1
    ann = pd.DataFrame(
        {
            "rank": [1, 2, None, 6, 1],
            "count": [2, 1, 1, 1, 2],
            "logprob": [-1.0, -2.0, -5.0, -4.0, -1.0],
        }
    )
    m = group_metrics(ann)
    assert m["n"] == 5
    assert m["p_at_1"] == pytest.approx(40.0)  # 2 of 5
    assert m["p_at_5"] == pytest.approx(60.0)  # 3 of 5
    assert m["mrr"] == pytest.approx(100 * (1 + 0.5 + 0 + 0 + 1) / 5)  # 50.0
    # Spearman by hand: count ranks (2,1,1,1,2) -> (4.5,2,2,2,4.5); logprob ranks (4.5,3,1,2,4.5)
    x = [4.5, 2, 2, 2, 4.5]
    y = [4.5, 3, 1, 2, 4.5]
    mx, my = sum(x) / 5, sum(y) / 5
    cov = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    rho = cov / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))
    assert m["spearman_rho"] == pytest.approx(rho)
    # Kendall tau-b by hand: pairs of the 5 items
    xs, ys = [2, 1, 1, 1, 2], [-1.0, -2.0, -5.0, -4.0, -1.0]
    conc = disc = tx = ty = 0
    for i in range(5):
        for j in range(i + 1, 5):
            dx, dy = xs[i] - xs[j], ys[i] - ys[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif dx * dy > 0:
                conc += 1
            else:
                disc += 1
    tau_b = (conc - disc) / math.sqrt((conc + disc + tx) * (conc + disc + ty))
    assert m["kendall_tau"] == pytest.approx(tau_b)


def test_paper_denominator_example():
    # 20 hits of 150 annotations is the paper's 13.3
    ann = pd.DataFrame({"rank": [1] * 20 + [None] * 130, "count": 1, "logprob": -1.0})
    assert round(group_metrics(ann)["p_at_1"], 1) == 13.3


def test_sigma_gd_population():
    assert sigma_gd([10, 20, 30, 40]) == pytest.approx(math.sqrt(125))  # ddof = 0
    assert sigma_gd([5, float("nan"), 5]) == 0.0


def test_compute_metrics_end_to_end_small():
    ann = pd.DataFrame(
        {
            "lang": "fr",
            "s_id": ["1", "1", "1", "2", "2", "2"],
            "answer": ["Élan", "élan", "bond", "chat", "chien", ""],
            "group": ["MN", "MN", "FN", "MN", "FN", "FN"],
        }
    )
    preds = pd.DataFrame(
        {
            "s_id": ["1", "1", "2", "2"],
            "rank": [1, 2, 1, 2],
            "candidate": ["elan", "saut", "chien", "chat"],
            "candidate_norm": ["elan", "saut", "chien", "chat"],
            "logprob": [-1.0, -2.0, -1.0, -2.0],
        }
    )
    scores = pd.DataFrame(
        {
            "s_id": ["1", "1", "1", "2", "2"],
            "answer": ["Élan", "élan", "bond", "chat", "chien"],
            "answer_norm": ["elan", "elan", "bond", "chat", "chien"],
            "logprob": [-1.0, -1.1, -6.0, -2.0, -1.0],
            "n_pieces": [1, 1, 1, 1, 2],
        }
    )
    m = compute_metrics(ann, preds, scores, model="m", lang="fr").set_index("group")
    # MN: Élan (rank 1), élan (rank 1), chat (rank 2) -> P@1 2/3, MRR (1 + 1 + .5)/3
    assert m.loc["MN", "p_at_1"] == pytest.approx(200 / 3)
    assert m.loc["MN", "mrr"] == pytest.approx(100 * 2.5 / 3)
    # FN: bond (absent), chien (rank 1); the empty answer is excluded and counted
    assert m.loc["FN", "n"] == 2 and m.loc["FN", "n_empty"] == 1 and m.loc["FN", "p_at_5"] == 50.0
    assert m.loc["all", "n"] == 5 and m.loc["all", "n_empty"] == 1


def test_paper_table_layout_and_sigma():
    rows = []
    for lang, vals in {"en": [10, 20, 30, 40], "es": [5, 5, 5, 5], "de": [0, 10, 0, 10], "fr": [1, 2, 3, 4]}.items():
        for g, v in zip(["MN", "FN", "MNN", "FNN"], vals, strict=True):
            rows.append({"model": "m", "lang": lang, "group": g, "p_at_1": float(v)})
        # the language average is every annotation pooled, not the mean of the four groups
        rows.append({"model": "m", "lang": lang, "group": "all", "p_at_1": float(sum(vals)) / 4 + 1})
    other = pd.DataFrame(rows).assign(model="n", p_at_1=lambda d: d["p_at_1"] / 2)
    numbers = paper_table(pd.concat([pd.DataFrame(rows), other], ignore_index=True), metric="p_at_1", alpha=0.05)
    t = printed(numbers)
    assert t["model"].tolist() == ["m"] * 5 + ["n"] * 5  # a block per model
    # the CSV: a row per cell, each one number (FNN's mean across languages, English's sigma_gd across groups)
    cells = numbers[numbers["model"] == "m"].set_index(["group", "column"])["value"]
    assert cells[("FNN", "en")] == 40.0 and cells[("FNN", "mean")] == pytest.approx(14.75)
    assert cells[("σ_gd across groups", "en")] == pytest.approx(math.sqrt(125))
    t = t[t["model"] == "m"].reset_index(drop=True)
    # FNN varies most across languages (40, 5, 10, 4): the paper's red row
    assert t["group"].tolist() == ["MN", "FN", "MNN", "FNN§", "All"]
    assert list(t.columns) == ["model", "group", "EN", "ES", "DE", "FR", "mean (σ_gd)"]
    assert t.loc[0, "EN"] == "10.0†"  # worst-off group in English
    # pooled value, sigma_gd across the groups; English has the highest (‡)
    assert t.loc[4, "EN"] == f"26.0 ({math.sqrt(125):.1f})‡"
    # MN row: values 10, 5, 0, 1 -> mean 4.0, population sd over languages
    assert t.loc[0, "mean (σ_gd)"] == f"4.0 ({sigma_gd([10, 5, 0, 1]):.1f})"
    assert t.loc[4, "mean (σ_gd)"] == f"{(26 + 6 + 6 + 3.5) / 4:.1f} ({sigma_gd([26, 6, 6, 3.5]):.1f})"


def test_paper_correlation_tables_carry_p_values():
    rows = [
        {"model": "m", "lang": "en", "group": g, "spearman_rho": r, "spearman_p": p}
        for g, r, p in (
            ("MN", 0.30, 0.001),
            ("FN", 0.10, 0.2),
            ("MNN", 0.25, 0.04),
            ("FNN", 0.05, 0.6),
            ("all", 0.2, 0.0001),
        )
    ]
    numbers = paper_table(pd.DataFrame(rows), metric="spearman_rho", alpha=0.05)
    t = printed(numbers).set_index("group")
    # one language: no disparity across languages to mark
    assert list(t.index) == ["MN", "FN", "MNN", "FNN", "All"] and list(t.columns)[:2] == ["model", "EN"]
    assert t.loc["MN", "EN"] == "30.0 (.001)"
    # unmarked: scipy's p treats items as independent, no test of it is shown to hold its level
    assert t.loc["FN", "EN"] == "10.0 (.200)"
    assert t.loc["FNN", "EN"] == "5.0 (.600)†"
    assert numbers.set_index(["group", "column"]).loc[("FN", "en"), "p"] == 0.2
    assert t.loc["All", "EN"] == f"20.0 (<.001) ({sigma_gd([30, 10, 25, 5]):.1f})"  # never (.000)


def test_metrics_are_means_of_the_annotation_scores():
    ann = pd.DataFrame(
        {
            "lang": "fr",
            "s_id": ["1", "1", "1", "2", "2", "2", "2"],
            "u_id": ["a", "b", "c", "a", "b", "c", "d"],
            "answer": ["Élan", "élan", "bond", "chat", "chien", "", "souris"],
            "group": ["MN", "MN", "FN", "MN", "FN", "FN", "MNN"],
        }
    )
    preds = pd.DataFrame(
        {
            "s_id": ["1"] * 6 + ["2"] * 2,
            "rank": [1, 2, 3, 4, 5, 6, 1, 2],
            "candidate_norm": ["elan", "saut", "a", "b", "c", "bond", "chien", "chat"],
        }
    )
    scores = pd.DataFrame(
        {
            "s_id": ["1", "1", "1", "2", "2", "2"],
            "answer": ["Élan", "élan", "bond", "chat", "chien", "souris"],
            "answer_norm": ["elan", "elan", "bond", "chat", "chien", "souris"],
            "logprob": [-1.0, -1.1, -6.0, -2.0, -1.0, -3],
            "n_pieces": [1, 1, 1, 1, 2, 3],
        }
    )
    per_annotation = annotation_scores(ann, preds, scores, model="m", lang="fr")
    assert len(per_annotation) == 6  # the empty answer is not scored
    by_u = per_annotation.set_index(["s_id", "u_id"])
    assert pd.isna(by_u.loc[("1", "c"), "rank"])  # bond is 6th: outside the top 5
    assert by_u.loc[("2", "a"), "rank"] == 2 and by_u.loc[("2", "a"), "rr"] == 0.5
    metrics = compute_metrics(ann, preds, scores, model="m", lang="fr").set_index("group")
    for group in ("MN", "FN", "MNN", "all"):
        rows = per_annotation if group == "all" else per_annotation[per_annotation["group"] == group]
        assert metrics.loc[group, "p_at_1"] == pytest.approx(100 * rows["hit1"].mean())
        assert metrics.loc[group, "p_at_5"] == pytest.approx(100 * rows["hit5"].mean())
        assert metrics.loc[group, "mrr"] == pytest.approx(100 * rows["rr"].mean())
        assert metrics.loc[group, "n"] == len(rows)


def test_correlations_count_each_sentence_answer_once():
    """Three annotators giving "chat" to s1 are one item (count 3), not three copies of it."""
    from scipy import stats

    ann = pd.DataFrame(
        {
            "s_id": ["s1", "s1", "s1", "s1", "s2", "s2", "s3", "s3"],
            "answer_norm": ["chat", "chat", "chat", "chien", "bond", "élan", "a", "b"],
            "rank": [1, 1, 1, None, 2, None, None, 3],
            "count": [3, 3, 3, 1, 1, 1, 1, 1],
            "logprob": [-1.0, -1.0, -1.0, -3.0, -2.0, -4.0, -6.0, -5.0],
        }
    )
    m = group_metrics(ann)
    items = ann.drop_duplicates(["s_id", "answer_norm"])
    assert len(items) == 6 and m["n"] == 8  # P@k still count annotations
    rho = stats.spearmanr(items["count"], items["logprob"])
    assert m["spearman_rho"] == pytest.approx(rho.statistic) and m["spearman_p"] == pytest.approx(rho.pvalue)
    assert m["spearman_p"] != pytest.approx(stats.spearmanr(ann["count"], ann["logprob"]).pvalue)
