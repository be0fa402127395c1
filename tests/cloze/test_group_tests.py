"""Annotator groups compared with the annotator as the unit: win/loss with exact ties, permutation
tests against enumerations done by hand, intervals that invert their tests, calibration under
partial nulls, the crossed mixed model on designs with known answers."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from oracles import oracle_mozart_scores

from plmfair.cloze.annotator_design import AnnotatorDesign, distinct_assignments, group_sums, sentence_gap
from plmfair.cloze.disparity import group_disparity
from plmfair.cloze.group_effects import group_effects
from plmfair.cloze.group_tests import GROUPS, _cluster_variance, group_gaps, group_tests, group_winloss, permutation_rng
from plmfair.cloze.questions import mozart_questions
from plmfair.cloze.tables import group_tests_table
from plmfair.multiplicity import decide_hypotheses
from plmfair.stats.permutation import permutation_p


def questions_of(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The hypotheses of one result file of a set named t (its rows' tests)."""
    return mozart_questions({f"results/cloze/t/{kind}.parquet": frame})


def scores_frame(rows):
    """Annotation scores: (lang, s_id, u_id, group, rr)."""
    df = pd.DataFrame(rows, columns=["lang", "s_id", "u_id", "group", "rr"])
    return df.assign(model="m", hit1=(df["rr"] == 1).astype(int))


# s1: MN mean .75 beats FN .5; s2: FN .2 beats MN 0; s3: tie at 1; s4: MN 1/3 beats MNN .25;
# s5: FNN alone, so FNN shares no sentence with anyone.
FR = [
    ("fr", "s1", "u1", "MN", 1.0),
    ("fr", "s1", "u2", "MN", 0.5),
    ("fr", "s1", "u3", "FN", 0.5),
    ("fr", "s2", "u1", "MN", 0.0),
    ("fr", "s2", "u3", "FN", 0.2),
    ("fr", "s3", "u2", "MN", 1.0),
    ("fr", "s3", "u3", "FN", 1.0),
    ("fr", "s3", "u4", "FN", 1.0),
    ("fr", "s4", "u1", "MN", 1 / 3),
    ("fr", "s4", "u5", "MNN", 0.25),
    ("fr", "s5", "u6", "FNN", 1.0),
]


def test_group_winloss_hand_computed_counts():
    wl = group_winloss(scores_frame(FR), cloze_set="t", permutations=99, alpha=0.05, seed=2022)
    rr = wl[(wl["metric"] == "rr") & (wl["lang"] == "fr")].set_index(["group_a", "group_b"])
    mn_fn = rr.loc[("MN", "FN")]
    assert (mn_fn["n_sentences"], mn_fn["wins_a"], mn_fn["wins_b"], mn_fn["ties"]) == (3, 1, 1, 1)
    assert (rr.loc[("MN", "MNN"), "n_sentences"], rr.loc[("MN", "MNN"), "wins_a"]) == (1, 1)
    # FNN answered no sentence another group answered: nothing to test
    assert rr.loc[("MN", "FNN"), "n_sentences"] == 0 and math.isnan(rr.loc[("MN", "FNN"), "p_permutation"])
    assert not rr.loc[("MN", "FNN"), "informative"]  # nothing for the hypotheses to test
    # hit1 uses the same sentences: s1 MN .5 vs FN 0 (MN wins), s2 0 vs 0, s3 1 vs 1
    h = wl[(wl["metric"] == "hit1") & (wl["lang"] == "fr")].set_index(["group_a", "group_b"]).loc[("MN", "FN")]
    assert (h["wins_a"], h["wins_b"], h["ties"]) == (1, 0, 2)
    # six pairs x (fr + all) = 12 rows per model and metric, each a test of the run's hypotheses
    assert len(wl[wl["metric"] == "rr"]) == 12 and wl["hypothesis"].is_unique
    assert (wl["p_min"] >= 1 / (1 + wl["permutations"])).all()


def test_equal_means_are_ties_to_the_last_bit():
    """One annotator at 0.2 against three at 0.2 (a mean of 0.20000000000000004 in floats), and
    1/3 against the mean of 1/3 and 1/3: ties, not wins."""
    rows = [
        ("fr", "s1", "a", "MN", 0.2),
        ("fr", "s1", "b", "FN", 0.2),
        ("fr", "s1", "c", "FN", 0.2),
        ("fr", "s1", "d", "FN", 0.2),
        ("fr", "s2", "a", "MN", 1 / 3),
        ("fr", "s2", "b", "FN", 1 / 3),
        ("fr", "s2", "c", "FN", 1 / 3),
    ]
    assert (0.2 + 0.2 + 0.2) / 3 != 0.2  # what a float comparison would get wrong
    row = (
        group_winloss(scores_frame(rows), cloze_set="t", permutations=99, alpha=0.05, seed=2022)
        .set_index(["lang", "metric", "group_a", "group_b"])
        .loc[("fr", "rr", "MN", "FN")]
    )
    assert (row["wins_a"], row["wins_b"], row["ties"]) == (0, 0, 2)


def two_batches():
    """Two batches of three sentences, each answered by four annotators (two MN, two FN)."""
    rows, value = [], {"a1": 1.0, "a2": 0.5, "a3": 0.0, "a4": 0.2, "b1": 1.0, "b2": 1.0, "b3": 0.25, "b4": 0.0}
    groups = {"a1": "MN", "a2": "MN", "a3": "FN", "a4": "FN", "b1": "MN", "b2": "FN", "b3": "MN", "b4": "FN"}
    for batch in ("a", "b"):
        for s in range(3):
            for k in range(1, 5):
                u = f"{batch}{k}"
                rows.append(("fr", f"{batch}s{s}", u, groups[u], value[u] if s != 2 else value[u] / 2))
    return scores_frame(rows)


def enumerated_gap_p(data) -> float:
    """The exact permutation p of the FN - MN gap: every relabelling of each batch's annotators
    that keeps its group sizes, enumerated (a balanced design: every annotator answers every
    sentence of its batch, so the sentence-adjusted gap is the difference of the group means)."""
    per = data.groupby(["u_id"]).agg(
        batch=("s_id", lambda s: s.iloc[0][0]), group=("group", "first"), total=("rr", "sum"), n=("rr", "size")
    )

    def gap(groups):
        g = per.assign(group=groups)
        means = g.groupby("group")["total"].sum() / g.groupby("group")["n"].sum()
        return means["FN"] - means["MN"]

    observed = gap(per["group"].to_numpy())
    by_batch = [per.index[per["batch"] == b] for b in ("a", "b")]
    gaps = []
    for left in itertools.permutations(per.loc[by_batch[0], "group"]):
        for right in itertools.permutations(per.loc[by_batch[1], "group"]):
            labels = pd.Series(list(left) + list(right), index=list(by_batch[0]) + list(by_batch[1]))
            gaps.append(gap(labels.reindex(per.index).to_numpy()))
    gaps = np.array(gaps)
    return float(np.mean(np.abs(gaps) >= abs(observed) - 1e-12))


def test_permutation_test_matches_the_enumeration_and_stays_within_batches():
    data = two_batches()
    design = AnnotatorDesign.of(data)
    assert len(set(design.stratum)) == 2  # the batches are the design's blocks
    labels = design.assignments(500, np.random.default_rng(0))
    for stratum in np.unique(design.stratum):  # shuffled within batches only: group sizes kept
        members = design.stratum == stratum
        assert (np.sort(labels[:, members], axis=1) == np.sort(design.group[members])).all()
    # 6 x 6 distinct assignments: enumerated, each once, the observed one first
    assert distinct_assignments([design.group[design.stratum == s] for s in (0, 1)]) == 36
    assert len(labels) == 36 and len({tuple(row) for row in labels}) == 36
    gaps = group_gaps(data, cloze_set="t", permutations=20000, metrics=("rr",), alpha=0.05, seed=2022)
    tests = group_tests(data, cloze_set="t", permutations=20000, metrics=("rr",), alpha=0.05, seed=2022)
    fn = gaps[(gaps["lang"] == "fr") & (gaps["group"] == "FN")].iloc[0]
    per = data.groupby("group")["rr"].mean()
    assert fn["gap"] == pytest.approx(per["FN"] - per["MN"]) and fn["permutations"] == 35
    assert fn["p_permutation"] == pytest.approx(enumerated_gap_p(data), abs=1e-12)  # exact, not sampled
    omnibus = tests[(tests["lang"] == "fr") & (tests["test"] == "omnibus")].iloc[0]
    n = data.groupby("group")["rr"].size()
    assert omnibus["statistic"] == pytest.approx((n * (per - data["rr"].mean()) ** 2).sum())


def studentized_interaction(data: pd.DataFrame, metric: str) -> float:
    """The interaction (MN - MNN) - (FN - FNN) of the groups' means over its annotator-clustered standard
    error, from the residuals of score ~ sentence + gender + nativeness (statsmodels' least squares):
    per group, the sum over its annotators of (their summed residuals - their annotations x the group's
    mean residual)^2, over the group's annotations squared."""
    import statsmodels.formula.api as smf

    d = data.assign(female=data["group"].str.startswith("F").astype(float), non_native=data["group"].str.endswith("NN"))
    d["non_native"] = d["non_native"].astype(float)
    d["residual"] = smf.ols(f"{metric} ~ C(s_id) + female + non_native", data=d).fit().resid
    weights = {"MN": 1.0, "FN": -1.0, "MNN": -1.0, "FNN": 1.0}
    estimate, variance = 0.0, 0.0
    for group, rows in d.groupby("group"):
        per_annotator = rows.groupby("u_id").agg(r=("residual", "sum"), n=("residual", "size"))
        mean_residual = per_annotator["r"].sum() / per_annotator["n"].sum()
        estimate += weights[group] * rows[metric].mean()
        variance += (
            weights[group] ** 2
            * ((per_annotator["r"] - per_annotator["n"] * mean_residual) ** 2).sum()
            / len(rows) ** 2
        )
    return estimate / math.sqrt(variance)


def test_the_smallest_attainable_p_counts_the_ties_the_design_forces():
    """Two MN and two FN annotators in one batch: the six relabellings come in mirror pairs (swap every label:
    the same |gap|), so no data can give the gap test a p below 2 / 6, and the design is untestable at 0.05
    (1 / 6 would say so too, but 36 relabellings, as the demo's 2 x 2 contrasts have, would wrongly pass:
    2 / 36 > 0.05 > 1 / 36). Three MN and two FN: no mirror, 1 / 10."""
    for groups, expected in ((("MN", "MN", "FN", "FN"), 2 / 6), (("MN", "MN", "MN", "FN", "FN"), 1 / 10)):
        rows = [("fr", f"s{s}", f"u{k}", g, float((k + s) % 3 == 0)) for s in range(4) for k, g in enumerate(groups)]
        gaps = group_gaps(scores_frame(rows), cloze_set="t", permutations=99, metrics=("rr",), alpha=0.05, seed=2022)
        fn = gaps[(gaps["lang"] == "fr") & (gaps["group"] == "FN")].iloc[0]
        assert fn["p_min"] == pytest.approx(expected) and fn["p_permutation"] >= fn["p_min"]
    # the demo's 2 x 2 design: two of each group in a batch, gender permuted within batch x nativeness
    rows = [("fr", f"s{s}", f"u{k}", g, float((k * s) % 4 == 1)) for s in range(5) for k, g in enumerate(GROUPS * 2)]
    tests = group_tests(
        scores_frame(rows), cloze_set="t", permutations=99, metrics=("rr",), alpha=0.05, seed=2022
    ).set_index(["lang", "test"])
    assert tests.loc[("fr", "gender"), "permutations"] == 35 and tests.loc[("fr", "gender"), "p_min"] >= 2 / 36


def test_2x2_contrasts_and_a_planted_gap_is_found():
    rng = np.random.default_rng(3)
    rows = []
    for batch in range(6):
        members = [(f"u{batch}_{k}", g) for k, g in enumerate(("MN", "MN", "FN", "FN", "MNN", "MNN", "FNN", "FNN"))]
        for s in range(10):
            for u, g in members:
                p_hit = 0.6 if g.endswith("NN") else 0.2  # non-natives answer the model's top word far more
                rows.append(("fr", f"b{batch}s{s}", u, g, float(rng.random() < p_hit)))
    data = scores_frame(rows)
    tests = group_tests(data, cloze_set="t", permutations=999, metrics=("rr",), alpha=0.05, seed=2022)
    t = tests[tests["lang"] == "fr"].set_index("test")
    means = data.groupby("group")["rr"].mean()
    assert t.loc["nativeness", "statistic"] == pytest.approx(
        (means["MN"] + means["FN"]) / 2 - (means["MNN"] + means["FNN"]) / 2
    )
    assert t.loc["gender_x_nativeness", "statistic"] == pytest.approx(studentized_interaction(data, "rr"))
    assert t.loc["nativeness", "p_permutation"] < 0.01 and t.loc["omnibus", "p_permutation"] < 0.01
    assert t.loc["gender", "p_permutation"] > 0.05
    # one language: no group x language interaction to test
    assert set(tests.loc[tests["lang"] == "all", "test"]) == {"omnibus", "gender", "nativeness", "gender_x_nativeness"}


def test_group_x_language_sees_a_gap_that_changes_sign():
    rng = np.random.default_rng(5)
    rows = []
    for lang, sign in (("en", 1), ("fr", -1)):
        for batch in range(5):
            for s in range(8):
                for k, g in enumerate(("MN", "MN", "FN", "FN")):
                    p_hit = 0.5 + 0.3 * sign * (g == "FN")
                    rows.append((lang, f"b{batch}s{s}", f"{lang}{batch}{k}", g, float(rng.random() < p_hit)))
    data = scores_frame(rows)
    tests = group_tests(data, cloze_set="t", permutations=999, metrics=("rr",), alpha=0.05, seed=2022)
    inter = tests[(tests["lang"] == "all") & (tests["test"] == "group_x_language")].iloc[0]
    assert inter["p_permutation"] < 0.01
    # Cochran's Q by hand: residuals of rr ~ sentence + group (statsmodels), each language's FN - MN gap
    # weighted by the inverse of the two cells' annotator-clustered variances
    import statsmodels.formula.api as smf

    d = data.assign(sentence=data["lang"] + ":" + data["s_id"])
    d["residual"] = smf.ols("rr ~ C(sentence) + C(group)", data=d).fit().resid
    gaps, weights = [], []
    for _, in_lang in d.groupby("lang"):
        cell = {}
        for group, rows_g in in_lang.groupby("group"):
            per_annotator = rows_g.groupby("u_id").agg(r=("residual", "sum"), n=("residual", "size"))
            mean_residual = per_annotator["r"].sum() / per_annotator["n"].sum()
            clustered = ((per_annotator["r"] - per_annotator["n"] * mean_residual) ** 2).sum()
            cell[group] = (rows_g["rr"].mean(), clustered / len(rows_g) ** 2)
        gaps.append(cell["FN"][0] - cell["MN"][0])
        weights.append(1 / (cell["FN"][1] + cell["MN"][1]))
    gaps, weights = np.array(gaps), np.array(weights)
    centre = (weights * gaps).sum() / weights.sum()
    assert inter["statistic"] == pytest.approx((weights * (gaps - centre) ** 2).sum())


def test_groups_without_variation_are_untestable_not_infinitely_significant():
    """Two annotators per group answering alike (the demo's size): the clustered variances are 0
    exactly, not rounding error; the interaction cannot be studentized (NaN, "untestable" in the
    table) and a zero-variance gap drops out of group x language instead of weighing 1e17."""
    rows = []
    # reciprocal ranks that binary fractions cannot hold exactly, so that rounding would show
    levels = (("en", {"MN": 1 / 3, "FN": 0.2, "MNN": 1 / 7, "FNN": 0.0}), ("fr", dict.fromkeys(GROUPS, 1 / 3)))
    for lang, hits in levels:
        for s in range(4):
            for k, g in enumerate(GROUPS * 2):
                rows.append((lang, f"s{s}", f"{lang}{k}", g, hits[g] if s < 2 else 0.0))
    tests = group_tests(
        scores_frame(rows), cloze_set="t", permutations=199, metrics=("rr",), alpha=0.05, seed=2022
    ).set_index(["lang", "test"])
    assert np.isnan(tests.loc[("en", "gender_x_nativeness"), "statistic"])
    assert np.isnan(tests.loc[("en", "gender_x_nativeness"), "p_permutation"])
    assert not tests.loc[("all", "group_x_language"), "statistic"] > 1e6
    assert not tests.loc[("en", "gender_x_nativeness"), "informative"]  # the hypotheses leave it out
    decided = decide_hypotheses(questions_of(tests.reset_index(), "group_tests"), alpha=0.05)
    table = group_tests_table(tests.reset_index(), decided, alpha=0.05)
    assert table.loc[table["p (permutation)"].isna(), "note"].str.startswith("uninformative").all()


def test_annotators_who_agree_leave_exactly_no_clustered_variance():
    """Two annotators of a group with the same residuals (0.1 on each of 5 sentences): their cell's
    clustered variance is 0, not the 1e-16 the expansion's rounding leaves, which as a weight of
    group x language would count 1e16 times."""
    rows = [("fr", f"s{s}", f"u{k}", g, 0.0) for s in range(5) for k, g in enumerate(("MN", "MN", "FN", "FN"))]
    design = AnnotatorDesign.of(scores_frame(rows))
    residuals, labels = np.full(len(rows), 0.1), design.group[None, :]
    variances = _cluster_variance(residuals, design, labels, *group_sums(residuals, design, labels))
    assert (variances == 0.0).all()


def balanced_design():
    """Three sentences answered once by MN and once by FN: y = sentence level + group + noise."""
    rows = []
    for s, base, mn, fn in (("s1", 0.0, 0.0, 2.0), ("s2", 10.0, 1.0, 2.0), ("s3", 20.0, 0.0, 4.0)):
        rows += [("fr", s, f"a{s}", "MN", base + mn), ("fr", s, f"b{s}", "FN", base + fn)]
    return scores_frame(rows)


def test_group_effects_hand_computed_paired_design():
    eff = group_effects(balanced_design(), reference="MN", metrics=("rr",))
    fn = eff[(eff["lang"] == "fr") & (eff["term"] == "group[T.FN]")].iloc[0]
    # balanced, one answer per group and sentence: the REML estimate is the mean paired
    # difference and its standard error that of a paired t-test, sd(d) / sqrt(n)
    d = np.array([2.0, 1.0, 4.0])
    se = d.std(ddof=1) / math.sqrt(3)
    assert fn["estimate"] == pytest.approx(d.mean(), abs=1e-4)
    assert fn["std_err"] == pytest.approx(se, rel=1e-3)
    assert fn["reference"] == "MN" and fn["n_obs"] == 6 and fn["n_sentences"] == 3 and fn["n_annotators"] == 6
    intercept = eff[(eff["lang"] == "fr") & (eff["term"] == "Intercept")].iloc[0]
    assert intercept["estimate"] == pytest.approx(31 / 3, abs=1e-4)  # the MN mean
    # an effect size: no mark (its Wald interval and p are kept, unprinted, for programs)
    assert "significant" not in eff.columns
    assert (fn["p_value"] < 0.05) == (fn["ci_low"] > 0 or fn["ci_high"] < 0)


def test_a_fit_that_does_not_converge_is_kept_and_reported(caplog):
    flat = balanced_design().assign(rr=0.0)  # no variation at all: REML cannot converge
    with caplog.at_level("WARNING"):
        eff = group_effects(flat, metrics=("rr",))
    fr = eff[eff["lang"] == "fr"]
    assert set(fr["term"]) == {"Intercept", "group[T.FN]"} and not fr["converged"].any()
    assert "m/fr/rr: the mixed model did not converge" in caplog.text


def test_real_mozart_group_analysis_recomputed_independently(shared_data):
    """A ranking known in advance on the real answers: each sentence's top 5 are the five answers
    given most often by native speakers. Annotation scores and win/loss counts are recomputed here
    from the data with plain pandas; the design's blocks are MozArt's batches."""
    ann, scores = oracle_mozart_scores(shared_data, ["en", "fr"])

    # annotation scores, by hand: the answer's position among the sentence's top 5
    a = ann.set_index(["lang", "s_id", "u_id"])
    s = scores.set_index(["lang", "s_id", "u_id"])
    assert len(s) == 1200 and s.index.equals(s.index.unique())
    sample = s.sample(50, random_state=0)
    for (lang, s_id, u_id), row in sample.iterrows():
        norm = a.loc[(lang, s_id, u_id), "norm"]
        lang_ann = ann[(ann["lang"] == lang) & ann["native"] & (ann["s_id"] == s_id)]
        counts = (
            lang_ann.groupby("norm").size().reset_index(name="k").sort_values(["k", "norm"], ascending=[False, True])
        )
        top5 = counts["norm"].head(5).tolist()
        rank = top5.index(norm) + 1 if norm in top5 else None
        assert (pd.isna(row["rank"]) and rank is None) or row["rank"] == rank
        assert row["rr"] == (1 / rank if rank else 0.0) and row["hit1"] == int(rank == 1)

    wl = group_winloss(scores, cloze_set="t", permutations=999, alpha=0.05, seed=2022).set_index(
        ["lang", "metric", "group_a", "group_b"]
    )
    eff = group_effects(scores, reference="MN").set_index(["lang", "metric", "term"])
    for lang in ("en", "fr"):
        x = scores[scores["lang"] == lang]
        means = x.groupby(["s_id", "group"])["rr"].mean().unstack()
        for g_a, g_b in (("MN", "MNN"), ("FN", "FNN"), ("MN", "FN")):
            both = means[[g_a, g_b]].dropna()
            wins_a, wins_b = int((both[g_a] > both[g_b]).sum()), int((both[g_a] < both[g_b]).sum())
            row = wl.loc[(lang, "rr", g_a, g_b)]
            assert (row["n_sentences"], row["wins_a"], row["wins_b"]) == (len(both), wins_a, wins_b)
            assert 0 < row["p_permutation"] <= 1
        design = AnnotatorDesign.of(x)
        # ten batches of ten sentences, each annotator in one batch
        assert len(set(design.stratum)) == 10 and x.groupby("u_id")["s_id"].nunique().eq(10).all()
        for g in ("FN", "MNN", "FNN"):
            assert bool(eff.loc[(lang, "rr", f"group[T.{g}]"), "converged"])
    # the known ranking favours native speakers: non-natives lose to natives, by the mixed model's
    # effect size and by the permutation test of the sentence-adjusted gap, with the interval that inverts it
    pooled = eff.loc[("all", "rr", "group[T.MNN]")]
    assert pooled["estimate"] < 0 and pooled["ci_high"] < 0
    gaps = group_gaps(scores, cloze_set="t", reference="MN", permutations=999, alpha=0.05, seed=2022).set_index(
        ["lang", "metric", "group"]
    )
    gap = gaps.loc[("all", "rr", "MNN")]
    assert gap["gap"] < 0 and gap["p_permutation"] < 0.01 and gap["ci_high"] < 0


def three_group_batches(rng, *, shift=0.0, natives_vary=False, sentences=8, batches=6):
    """Batches of ``sentences`` sentences answered by two annotators of each group; a hit with
    probability 0.4 (non-natives 0.4 + ``shift``), or with ``natives_vary`` each native annotator a
    strong (0.95) or weak (0.05) answerer while every non-native answers at 0.5: the natives' groups
    are exchangeable with each other, the non-natives differ from them."""
    rows = []
    for b in range(batches):
        for k, g in enumerate(GROUPS * 2):
            native = not g.endswith("NN")
            p = (rng.choice([0.05, 0.95]) if native else 0.5) if natives_vary else 0.4 + (0 if native else shift)
            for s in range(sentences):
                rows.append(("fr", f"b{b}s{s}", f"u{b}_{k}", g, float(rng.random() < p)))
    return scores_frame(rows)


def full_shuffle_gap_p(data, permutations, seed) -> float:
    """The old pairwise test (kept here as the case the new one must not repeat): FN vs MN with the
    labels of all four groups shuffled within batches, raw difference of the group means."""
    design = AnnotatorDesign.of(data)
    labels = design.assignments(permutations, np.random.default_rng(seed))
    (gap,), _ = sentence_gap([data["rr"].to_numpy(float)], design, labels, GROUPS.index("FN"), GROUPS.index("MN"))
    return float(permutation_p(gap[:1], gap[1:, None])[0])


@pytest.mark.parametrize("scenario", ["non-natives shifted down", "non-natives differ"])
def test_pairwise_tests_hold_their_own_null_when_other_groups_differ(scenario):
    """FN vs MN (equal by construction) while MNN and FNN differ from them: the pairwise gap and
    win/loss tests reject about alpha of 200 data sets (seeded). The old full shuffle of all four
    groups' labels rejects far more often when the non-natives differ in spread (0.12 here); the
    benchmark (make bench-stats) covers more partial nulls with more data sets."""
    rng = np.random.default_rng({"non-natives shifted down": 11, "non-natives differ": 13}[scenario])
    settings = {"non-natives shifted down": {"shift": -0.35}, "non-natives differ": {"natives_vary": True}}[scenario]
    gap_p, winloss_p, old_p = [], [], []
    for r in range(200):
        data = three_group_batches(rng, **settings)
        gaps = group_gaps(data, cloze_set="t", permutations=199, seed=r, metrics=("rr",), alpha=0.05)
        gap_p.append(gaps.loc[(gaps["lang"] == "fr") & (gaps["group"] == "FN"), "p_permutation"].iloc[0])
        wl = group_winloss(data, cloze_set="t", permutations=199, seed=r, metrics=("rr",), alpha=0.05)
        winloss_p.append(
            wl.loc[(wl["lang"] == "fr") & (wl["group_a"] == "MN") & (wl["group_b"] == "FN"), "p_permutation"].iloc[0]
        )
        if scenario == "non-natives differ":
            old_p.append(full_shuffle_gap_p(data, 199, r))
    for p in (gap_p, winloss_p):
        assert 0.02 <= np.mean(np.array(p) < 0.05) <= 0.09
    if old_p:
        assert np.mean(np.array(old_p) < 0.05) > 0.10


def test_2x2_main_effects_and_interaction_hold_their_own_nulls():
    """Non-natives shifted down (a nativeness effect, no gender effect, no interaction): gender
    (labels permuted within batch x nativeness) and the interaction (Freedman-Lane) reject about
    alpha; nativeness finds the shift."""
    rng = np.random.default_rng(21)
    p = {"gender": [], "gender_x_nativeness": [], "nativeness": []}
    for r in range(200):
        tests = group_tests(
            three_group_batches(rng, shift=-0.3), cloze_set="t", permutations=199, seed=r, metrics=("rr",), alpha=0.05
        )
        t = tests[tests["lang"] == "fr"].set_index("test")["p_permutation"]
        for name in p:
            p[name].append(t[name])
    assert 0.02 <= np.mean(np.array(p["gender"]) < 0.05) <= 0.09
    assert 0.02 <= np.mean(np.array(p["gender_x_nativeness"]) < 0.05) <= 0.09
    assert np.mean(np.array(p["nativeness"]) < 0.05) > 0.5


def test_the_gap_is_adjusted_for_batch_composition():
    """An easy batch answered mostly by MN, a hard one mostly by FN, every annotator of a sentence
    scoring the same: the raw difference of the group means is large, the sentence-adjusted gap 0."""
    rows = []
    for batch, level, groups in (("a", 1.0, ("MN", "MN", "MN", "FN")), ("b", 0.0, ("MN", "FN", "FN", "FN"))):
        for s in range(3):
            for k, g in enumerate(groups):
                rows.append(("fr", f"{batch}s{s}", f"{batch}{k}", g, level))
    data = scores_frame(rows)
    raw = data.groupby("group")["rr"].mean()
    assert raw["FN"] - raw["MN"] == pytest.approx(-0.5)
    gap = group_gaps(data, cloze_set="t", permutations=99, metrics=("rr",), alpha=0.05, seed=2022)
    fn = gap[(gap["lang"] == "fr") & (gap["group"] == "FN")].iloc[0]
    assert fn["gap"] == 0 and fn["p_permutation"] > 0.05 and fn["ci_low"] <= 0 <= fn["ci_high"]


def test_the_gap_interval_is_its_test_inverted():
    """Every shift of FN's scores just inside the interval is accepted at alpha and every shift just
    outside rejected, recomputed from the shifted data with the same permutations; the interval excludes
    0 exactly when the test of the gap alone rejects."""
    rng = np.random.default_rng(1)
    rows = []
    for b in range(5):
        for k, g in enumerate(("MN", "MN", "MN", "FN", "FN", "FN", "MNN", "FNN")):
            for s in range(6):
                rows.append(("fr", f"b{b}s{s}", f"u{b}_{k}", g, float(rng.random() < 0.3 + 0.2 * (g == "FN"))))
    data = scores_frame(rows)
    gaps = group_gaps(data, cloze_set="t", permutations=499, metrics=("rr",), alpha=0.05, seed=2022)
    row = gaps[(gaps["lang"] == "fr") & (gaps["group"] == "FN")].iloc[0]
    assert row["ci_level"] == pytest.approx(0.95) and -1 < row["ci_low"] < row["ci_high"] < 1
    design = AnnotatorDesign.of(data)
    labels = design.assignments(499, permutation_rng(2022, "fr", "FN-MN"), design.strata(among=("FN", "MN")))
    fn = (design.group[design.annotator] == GROUPS.index("FN")).astype(float)

    def adjusted_p(delta):
        (gap,), _ = sentence_gap(
            [data["rr"].to_numpy(float) - delta * fn], design, labels, GROUPS.index("FN"), GROUPS.index("MN")
        )
        gap = np.round(gap, 10)
        return permutation_p(gap[:1], gap[1:, None])[0]

    for end, inward in ((row["ci_low"], 1), (row["ci_high"], -1)):
        assert adjusted_p(end + inward * 1e-6) >= 0.05 > adjusted_p(end - inward * 1e-6)
    assert adjusted_p(0.0) == pytest.approx(row["p_untied"]) == pytest.approx(row["p_permutation"])
    for _, r in gaps[gaps["interval_connected"]].iterrows():
        assert (r["p_untied"] < 0.05) == (not r["ci_low"] <= 0 <= r["ci_high"])


def test_disparity_test_agrees_with_its_critical_value_and_its_interval():
    """sigma_gd of the four groups' P@1: its test rejects exactly when it exceeds its critical value, and
    the interval of the true disparity holds 0 exactly when the test does not reject; a planted gap is
    found (and its interval holds the planted disparity), no gap is not."""
    rng = np.random.default_rng(4)
    for shift, expect in ((-0.3, True), (0.0, False)):
        data = three_group_batches(rng, shift=shift, sentences=10, batches=8)
        data["hit5"] = data["hit1"]
        d = group_disparity(data, cloze_set="t", permutations=999, alpha=0.05, seed=2022)
        row = d[(d["lang"] == "fr") & (d["metric"] == "p_at_1")].iloc[0]
        means = 100 * data.groupby("group")["hit1"].mean()
        assert row["sigma_gd"] == pytest.approx(means.std(ddof=0))
        assert (row["p_permutation"] < 0.05) == expect
        for _, r in d.iterrows():
            assert (r["p_permutation"] < 0.05) == (r["sigma_gd"] > r["critical_value"] + 1e-12)
            assert (r["p_permutation"] < 0.05) == (r["ci_low"] > 0), r.to_dict()
            assert 0 <= r["ci_low"] <= r["ci_high"] <= 50
        if expect:  # two groups at 40%, two at 10%: a true sigma_gd of 15 points
            assert row["ci_low"] < 15 < row["ci_high"]


def test_disparity_rejects_a_data_set_with_probability_exactly_its_size():
    """The exact level make bench-stats judges sigma_gd's test by: under the null every labelling of the
    annotators is as likely as the observed one, so the share of labellings whose p is below alpha must be
    the size the observed one reports (every distinct labelling enumerated, here 5! / 2! = 60; at alpha 0.2,
    as three groups of one annotator make every sigma_gd come six times)."""
    rng = np.random.default_rng(11)
    annotators = ["u1", "u2", "u3", "u4", "u5"]
    values = {(s, u): rng.choice([0.0, 0.2, 0.25, 1 / 3, 0.5, 1.0]) for s in ("s1", "s2", "s3") for u in annotators}
    labellings = sorted(set(itertools.permutations(["MN", "MN", "FN", "MNN", "FNN"])))
    rejected, sizes = {}, set()
    for labels in labellings:
        group = dict(zip(annotators, labels, strict=True))
        data = scores_frame([("fr", s, u, group[u], v) for (s, u), v in values.items()]).assign(hit5=1)
        d = group_disparity(data, cloze_set="t", alpha=0.2, permutations=4999, seed=2022).set_index(["lang", "metric"])
        rejected[labels] = d.loc[("fr", "mrr"), "p_permutation"] < 0.2
        sizes.add(round(d.loc[("fr", "mrr"), "size"], 12))
    (size,) = sizes  # the same for every labelling: it depends on the permutation distribution alone
    assert len(labellings) == 60 and size > 0
    assert np.mean(list(rejected.values())) == pytest.approx(size)


def test_disparity_interval_is_the_test_inverted_along_a_direction():
    """The interval's upper end: the group effects delta along the worst direction that the test, run on
    the data with delta taken off each annotator's scores, accepts. Recomputed by hand for the one-way
    direction delta = r x (MN - the mean of the others) on a small design: every r the hand-made test
    accepts has sigma_gd(delta) inside the interval, and the debiased value lies below sigma_gd by its null
    mean square (the null mean positive though no group differs)."""
    rng = np.random.default_rng(7)
    rows = []
    for b in range(4):
        for k, g in enumerate(GROUPS * 2):
            p = 0.8 if g == "MN" else 0.3
            for s in range(5):
                rows.append(("fr", f"b{b}s{s}", f"u{b}_{k}", g, float(rng.random() < p)))
    data = scores_frame(rows)
    data["hit5"] = data["hit1"]
    d = group_disparity(data, cloze_set="t", permutations=499, alpha=0.05, seed=2022)
    row = d[(d["lang"] == "fr") & (d["metric"] == "p_at_1")].iloc[0]
    null_square = row["sigma_gd"] ** 2 - row["debiased"] ** 2
    assert row["null_mean"] > 0 and row["debiased"] < row["sigma_gd"] and null_square >= row["null_mean"] ** 2 - 1e-9
    design = AnnotatorDesign.of(data[data["lang"] == "fr"])
    labels = design.assignments(499, permutation_rng(2022, "fr", "all"))
    direction = np.array([0.75, -0.25, -0.25, -0.25]) / np.sqrt(np.mean(np.array([0.75, -0.25, -0.25, -0.25]) ** 2))
    values = data.loc[data["lang"] == "fr", "hit1"].to_numpy(float)
    own = design.group[design.annotator]

    def p_of(r):
        adjusted = values - r * direction[own]
        sums, counts = group_sums(adjusted, design, labels)
        means = sums.sum(axis=1) / counts.sum(axis=1)
        spread = ((means - means.mean(axis=1, keepdims=True)) ** 2).mean(axis=1)
        return permutation_p(spread[:1], spread[1:, None], two_sided=False)[0]

    accepted = [r for r in np.linspace(0, 0.6, 121) if p_of(r) >= 0.05]
    assert accepted and row["ci_low"] <= 100 * min(accepted) + 1e-9 and 100 * max(accepted) <= row["ci_high"] + 1e-9
    # and along a line it does not sample, to within what sampling 120 lines costs (docs/statistics.md)
    direction = np.array([0.75, -0.2, -0.25, -0.3])  # near the planted effect, between the sampled lines
    direction = direction / np.sqrt(np.mean((direction - direction.mean()) ** 2))
    accepted = np.abs([r for r in np.linspace(-0.6, 0.6, 241) if p_of(r) >= 0.05])
    assert len(accepted) and row["ci_low"] <= 1.02 * 100 * accepted.min()
    assert 100 * accepted.max() <= 1.02 * row["ci_high"]


def test_ties_in_net_wins_are_broken_by_the_gap_computed_by_hand():
    """One batch, two MN and two FN annotators on the same six sentences (hit1): every one of the
    six ways to label two of them MN is enumerated. By hand, with pandas: each labelling's net wins
    of MN over FN and its mean gap (the sentence-adjusted gap, equal weights here); a labelling is as
    extreme as the data when its |net| is larger, or equal with its |gap| at least as large (one-sided:
    net, then gap). Counting every tie in net wins as extreme, as before, gives a larger p."""
    hits = {"u1": [1, 1, 0, 0, 1, 0], "u2": [1, 0, 0, 1, 1, 0], "u3": [0, 1, 0, 0, 0, 1], "u4": [0, 0, 1, 0, 0, 0]}
    groups = {"u1": "MN", "u2": "MN", "u3": "FN", "u4": "FN"}
    rows = [("fr", f"s{i}", u, groups[u], float(h)) for u, hs in hits.items() for i, h in enumerate(hs)]
    row = (
        group_winloss(scores_frame(rows), cloze_set="t", permutations=99, metrics=("hit1",), alpha=0.05, seed=2022)
        .set_index(["lang", "group_a", "group_b"])
        .loc[("fr", "MN", "FN")]
    )
    table = pd.DataFrame(hits)
    stats = []
    for pair in itertools.combinations(hits, 2):  # the two annotators labelled MN
        a, b = table[list(pair)].mean(axis=1), table[[u for u in hits if u not in pair]].mean(axis=1)
        stats.append((int((a > b).sum() - (a < b).sum()), float((a - b).mean()), set(pair) == {"u1", "u2"}))
    (net0, gap0, _), others = next(s for s in stats if s[2]), [s for s in stats if not s[2]]

    def p(extreme) -> float:
        return (1 + sum(extreme(net, gap) for net, gap, _ in others)) / len(stats)

    two = p(lambda net, gap: abs(net) > abs(net0) or (abs(net) == abs(net0) and abs(gap) >= abs(gap0) - 1e-12))
    one = p(lambda net, gap: net > net0 or (net == net0 and gap >= gap0 - 1e-12))
    assert (row["wins_a"], row["wins_b"]) == (3, 2) and net0 == 1
    assert row["p_permutation"] == pytest.approx(two) and row["p_one_sided"] == pytest.approx(one)
    assert p(lambda net, gap: abs(net) >= abs(net0)) > two  # every tie counted as extreme


def test_ties_in_p_at_1_are_broken_by_the_reciprocal_rank_computed_by_hand():
    """One batch, three MN and three FN annotators on the same four sentences; MN's u2 and FN's u6 have
    the same hits at 1 (other ranks), so relabellings that swap them tie on every statistic of P@1.
    Every one of the 20 ways to label three of them FN is enumerated by hand (pandas): the gap test's
    statistic is |P@1 gap + 1e-4 x MRR gap| (group means: every annotator answers every sentence), the
    win/loss test's order is |net wins| of P@1, then |P@1 gap|, then |MRR gap|; counting every tie in
    P@1 as extreme, as before, gives larger p-values. The gap's interval excludes 0 exactly when the
    row is marked."""
    rr = {
        "u1": [1, 0.5, 0, 1],
        "u2": [1, 0, 0.2, 0],
        "u3": [0, 0.25, 0, 1],
        "u4": [0, 0.5, 1, 0],
        "u5": [0, 0, 0.5, 0],
        "u6": [1, 0, 0, 0],
    }
    groups = {"u1": "MN", "u2": "MN", "u3": "MN", "u4": "FN", "u5": "FN", "u6": "FN"}
    data = scores_frame([("fr", f"s{i}", u, groups[u], v) for u, vs in rr.items() for i, v in enumerate(vs)])
    table = pd.DataFrame(rr)
    hits = (table == 1).astype(float)
    stats = []
    for fn in itertools.combinations(rr, 3):
        mn = [u for u in rr if u not in fn]
        h_fn, h_mn = hits[list(fn)].mean(axis=1), hits[mn].mean(axis=1)
        gap_hit, gap_rr = (
            float((h_fn - h_mn).mean()),
            float((table[list(fn)].mean(axis=1) - table[mn].mean(axis=1)).mean()),
        )
        net = int((h_mn > h_fn).sum() - (h_mn < h_fn).sum())  # MN over FN
        stats.append((gap_hit, gap_rr, net, set(fn) == {"u4", "u5", "u6"}))
    hit0, rr0, net0, _ = next(s for s in stats if s[3])

    def p(extreme) -> float:
        return sum(extreme(*s[:3]) for s in stats) / len(stats)  # the observed labelling counts itself

    composite = abs(hit0 + 1e-4 * rr0)
    gap_p = p(lambda h, r, n: abs(h + 1e-4 * r) >= composite - 1e-12)
    untied_gap_p = p(lambda h, r, n: abs(h) >= abs(hit0) - 1e-12)
    key0 = (abs(net0), abs(hit0), abs(rr0))

    def beyond(h, r, n):  # lexicographic: larger on the first statistic that differs, or tied on all
        key = (abs(n), abs(h), abs(r))
        for a, b in zip(key, key0, strict=True):
            if abs(a - b) > 1e-12:
                return a > b
        return True

    winloss_p = p(beyond)
    untied_winloss_p = p(lambda h, r, n: abs(n) > abs(net0) or (abs(n) == abs(net0) and abs(h) >= abs(hit0) - 1e-12))
    assert gap_p < untied_gap_p and winloss_p < untied_winloss_p  # the example has ties to break

    gaps = group_gaps(data, cloze_set="t", permutations=999, metrics=("hit1",), alpha=0.05, seed=2022)
    row = gaps[(gaps["lang"] == "fr") & (gaps["group"] == "FN")].iloc[0]
    assert row["permutations"] == 19 and row["gap"] == pytest.approx(hit0)  # the gap printed is P@1's own
    assert row["p_permutation"] == pytest.approx(gap_p, abs=1e-12)
    # the interval inverts the gap alone's test, whose p is printed beside the tie-broken one
    assert row["p_untied"] == pytest.approx(untied_gap_p, abs=1e-12)
    assert (row["p_untied"] < 0.05) == (not row["ci_low"] <= 0 <= row["ci_high"])
    wl = group_winloss(data, cloze_set="t", permutations=999, metrics=("hit1",), alpha=0.05, seed=2022).set_index(
        ["lang", "group_a", "group_b"]
    )
    assert wl.loc[("fr", "MN", "FN"), "p_permutation"] == pytest.approx(winloss_p, abs=1e-12)


def test_freedman_lane_on_p_at_1_is_untestable_below_the_design_its_level_is_shown_on():
    """Two annotators a group and batch: the interaction tests on P@1 (hit1) carry the design's limit, so the
    the hypotheses leave them untestable and says why; on MRR (rr) they do not."""
    from plmfair.multiplicity import decide_hypotheses, hypotheses_of

    rng = np.random.default_rng(1)
    rows = [("fr", f"s{s}", f"u{k}", g, float(rng.random() < 0.3)) for s in range(8) for k, g in enumerate(GROUPS * 2)]
    tests = group_tests(
        scores_frame(rows), cloze_set="t", permutations=99, metrics=("rr", "hit1"), alpha=0.05, seed=2022
    )
    tests = tests.set_index(["lang", "metric", "test"])
    assert "this design has 2" in tests.loc[("fr", "hit1", "gender_x_nativeness"), "limit"]
    assert tests.loc[("fr", "rr", "gender_x_nativeness"), "limit"] == ""
    assert tests.loc[("fr", "hit1", "gender"), "limit"] == ""
    decided = decide_hypotheses(
        hypotheses_of(
            tests.reset_index(),
            study="s",
            source="f",
            question="q",
            primary=False,
            p_value="p_permutation",
            informative=tests["informative"].to_numpy(),
        ),
        alpha=0.05,
    ).set_index("hypothesis")
    limited = decided.loc[tests.loc[("fr", "hit1", "gender_x_nativeness"), "hypothesis"]]
    assert limited["family"] == "untestable" and "Freedman & Lane" in limited["limit"]
