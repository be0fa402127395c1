"""Win/loss and mixed effects of annotator groups and of CrowS-Pairs languages, on tables computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import oracle_mozart_scores
from scipy.stats import norm

from plmfair.disparity import group_effects, group_winloss, language_effects, language_winloss


def scores_frame(rows):
    """Annotation scores: (lang, s_id, u_id, group, rr)."""
    df = pd.DataFrame(rows, columns=["lang", "s_id", "u_id", "group", "rr"])
    return df.assign(model="m", hit1=(df["rr"] == 1).astype(int))


# s1: MN mean .75 beats FN .5; s2: FN .2 beats MN 0; s3: tie at 1; s4: MN 1/3 beats MNN .25;
# s5: FNN alone, so FNN shares no sentence with anyone.
FR = [
    ("fr", "s1", "u1", "MN", 1.0), ("fr", "s1", "u2", "MN", 0.5), ("fr", "s1", "u3", "FN", 0.5),
    ("fr", "s2", "u1", "MN", 0.0), ("fr", "s2", "u3", "FN", 0.2),
    ("fr", "s3", "u2", "MN", 1.0), ("fr", "s3", "u3", "FN", 1.0), ("fr", "s3", "u4", "FN", 1.0),
    ("fr", "s4", "u1", "MN", 1 / 3), ("fr", "s4", "u5", "MNN", 0.25),
    ("fr", "s5", "u6", "FNN", 1.0),
]


def test_group_winloss_hand_computed():
    wl = group_winloss(scores_frame(FR), alpha=0.05)
    rr = wl[(wl["metric"] == "rr") & (wl["lang"] == "fr")].set_index(["group_a", "group_b"])
    mn_fn = rr.loc[("MN", "FN")]
    assert (mn_fn["n_sentences"], mn_fn["wins_a"], mn_fn["wins_b"], mn_fn["ties"]) == (3, 1, 1, 1)
    # one win each: two-sided binomial p = 1; one-sided P(X >= 1 | n = 2) = 3/4
    assert mn_fn["p_two_sided"] == pytest.approx(1.0) and mn_fn["p_one_sided"] == pytest.approx(0.75)
    mn_mnn = rr.loc[("MN", "MNN")]
    assert (mn_mnn["n_sentences"], mn_mnn["wins_a"], mn_mnn["wins_b"]) == (1, 1, 0)
    assert mn_mnn["p_one_sided"] == pytest.approx(0.5)
    # FNN answered no sentence another group answered: nothing to test
    assert rr.loc[("MN", "FNN"), "n_sentences"] == 0 and math.isnan(rr.loc[("MN", "FNN"), "p_two_sided"])
    assert not rr.loc[("MN", "FNN"), "significant"]
    # six pairs x (fr + all) = 12 rows per model and metric in the Bonferroni family
    assert len(wl[wl["metric"] == "rr"]) == 12
    assert rr.loc[("MN", "MNN"), "p_bonferroni"] == pytest.approx(min(1.0, 12 * rr.loc[("MN", "MNN"), "p_two_sided"]))
    # hit1 uses the same sentences: s1 MN .5 vs FN 0 (MN wins), s2 0 vs 0, s3 1 vs 1
    h = wl[(wl["metric"] == "hit1") & (wl["lang"] == "fr")].set_index(["group_a", "group_b"]).loc[("MN", "FN")]
    assert (h["wins_a"], h["wins_b"], h["ties"]) == (1, 0, 2)


def test_pooled_languages_keep_sentences_apart():
    en = [("en", "s1", "v1", "MN", 0.0), ("en", "s1", "v2", "FN", 1.0)]  # same s_id, another sentence
    wl = group_winloss(scores_frame(FR + en))
    rr = wl[wl["metric"] == "rr"].set_index(["lang", "group_a", "group_b"])
    assert rr.loc[("all", "MN", "FN"), "n_sentences"] == 4  # fr s1, s2, s3 and en s1
    assert (rr.loc[("all", "MN", "FN"), "wins_a"], rr.loc[("all", "MN", "FN"), "wins_b"]) == (1, 2)
    assert len(wl[wl["metric"] == "rr"]) == 18  # (fr, en, all) x 6 pairs


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
    assert fn["std_err"] == pytest.approx(se, abs=1e-4)
    assert fn["p_value"] == pytest.approx(2 * norm.sf(d.mean() / se), abs=1e-4)  # Wald z, as statsmodels reports
    assert fn["ci_low"] == pytest.approx(d.mean() - norm.ppf(0.975) * se, abs=1e-4)
    assert fn["reference"] == "MN" and bool(fn["converged"]) and fn["n_obs"] == 6 and fn["n_sentences"] == 3
    intercept = eff[(eff["lang"] == "fr") & (eff["term"] == "Intercept")].iloc[0]
    assert intercept["estimate"] == pytest.approx(31 / 3, abs=1e-4)  # the MN mean
    # pooled over languages: with one language the group effect is the same
    pooled = eff[(eff["lang"] == "all") & (eff["term"] == "group[T.FN]")].iloc[0]
    assert pooled["estimate"] == pytest.approx(d.mean(), abs=1e-4)


def test_a_fit_that_does_not_converge_is_kept_and_reported(caplog):
    flat = balanced_design().assign(rr=0.0)  # no variation at all: REML cannot converge
    with caplog.at_level("WARNING"):
        eff = group_effects(flat, metrics=("rr",))
    fr = eff[eff["lang"] == "fr"]
    assert set(fr["term"]) == {"Intercept", "group[T.FN]"} and not fr["converged"].any()
    assert fr["std_err"].isna().all()
    assert "m/fr/rr: the mixed model did not converge" in caplog.text


def test_annotator_variance_component():
    rows = []
    rng = np.random.default_rng(1)
    annotator_bias = {"u1": 0.3, "u2": -0.3, "u3": 0.1, "u4": -0.1}
    for s in range(12):
        level = rng.normal()
        for u, g in (("u1", "MN"), ("u2", "MN"), ("u3", "FN"), ("u4", "FN")):
            rows.append(("fr", f"s{s}", u, g, level + annotator_bias[u] + (0.4 if g == "FN" else 0) + rng.normal(0, .2)))
    eff = group_effects(scores_frame(rows), annotator_variance=True, metrics=("rr",))
    row = eff[(eff["lang"] == "fr") & (eff["term"] == "group[T.FN]")].iloc[0]
    assert row["annotator_var"] > 0 and row["sentence_var"] > 0 and 0 < row["estimate"] < 1


def crows_frame(ids, biased, margins, status=None):
    return pd.DataFrame({"pair_id": ids, "biased": biased, "status": status or ["ok"] * len(ids),
                         "sent_more_score": margins, "sent_less_score": 0.0})


def test_language_winloss_is_an_exact_mcnemar_on_shared_pairs():
    per_pair = {
        ("en", "m"): crows_frame(["1", "2", "3", "4", "5"], [True, True, True, False, True], [1, 2, 3, -1, 1]),
        ("fr", "m"): crows_frame(["1", "2", "3", "4", "6"], [False, False, True, True, True], [-1, -2, 1, 2, 1]),
        ("en", "solo"): crows_frame(["1"], [True], [1.0]),  # one data set only: no comparison
    }
    wl = language_winloss(per_pair, langs={"en": "en", "fr": "fr"}, alpha=0.05)
    assert len(wl) == 1
    row = wl.iloc[0]
    # shared pairs 1-4: en only on 1 and 2, fr only on 4, both on 3
    assert (row["n_pairs"], row["wins_a"], row["wins_b"], row["ties"]) == (4, 2, 1, 1)
    assert row["p_two_sided"] == pytest.approx(1.0) and row["p_one_sided"] == pytest.approx(0.5)
    assert row["score_a"] == pytest.approx(75.0) and row["score_b"] == pytest.approx(50.0)


def test_language_effects_margin_model():
    ids = [str(i) for i in range(8)]
    base = np.array([0.0, 3.0, -2.0, 5.0, 1.0, -4.0, 2.0, 0.5])
    shift = np.array([1.0, 2.0, 0.0, 1.5, 1.0, 0.5, 2.5, 1.5])
    per_pair = {("en", "m"): crows_frame(ids, [True] * 8, base), ("de", "m"): crows_frame(ids, [True] * 8, base + shift)}
    eff = language_effects(per_pair, langs={"en": "en", "de": "de"})
    de = eff[eff["term"] == "dataset[T.de]"].iloc[0]
    assert de["estimate"] == pytest.approx(shift.mean(), abs=1e-4)
    assert de["std_err"] == pytest.approx(shift.std(ddof=1) / math.sqrt(8), abs=1e-4)
    assert de["reference"] == "en" and de["lang"] == "de" and de["n_pairs"] == 8 and bool(de["converged"])


def test_real_mozart_group_analysis_recomputed_independently(shared_data):
    """A ranking known in advance on the real answers: each sentence's top 5 are the five answers
    given most often by native speakers. Annotation scores, win/loss counts, binomial p-values
    and MixedLM estimates are recomputed here from the data with plain pandas, scipy and statsmodels."""
    import statsmodels.formula.api as smf
    from scipy.stats import binomtest

    ann, scores = oracle_mozart_scores(shared_data, ["en", "fr"])

    # annotation scores, by hand: the answer's position among the sentence's top 5
    a = ann.set_index(["lang", "s_id", "u_id"])
    s = scores.set_index(["lang", "s_id", "u_id"])
    assert len(s) == 1200 and s.index.equals(s.index.unique())
    sample = s.sample(50, random_state=0)
    for (lang, s_id, u_id), row in sample.iterrows():
        norm = a.loc[(lang, s_id, u_id), "norm"]
        lang_ann = ann[(ann["lang"] == lang) & ann["native"] & (ann["s_id"] == s_id)]
        counts = lang_ann.groupby("norm").size().reset_index(name="k").sort_values(["k", "norm"], ascending=[False, True])
        top5 = counts["norm"].head(5).tolist()
        rank = top5.index(norm) + 1 if norm in top5 else None
        assert (pd.isna(row["rank"]) and rank is None) or row["rank"] == rank
        assert row["rr"] == (1 / rank if rank else 0.0) and row["hit1"] == int(rank == 1)

    wl = group_winloss(scores, alpha=0.05).set_index(["lang", "metric", "group_a", "group_b"])
    eff = group_effects(scores, reference="MN").set_index(["lang", "metric", "term"])
    for lang in ("en", "fr"):
        x = scores[scores["lang"] == lang]
        means = x.groupby(["s_id", "group"])["rr"].mean().unstack()
        for g_a, g_b in (("MN", "MNN"), ("FN", "FNN"), ("MN", "FN")):
            both = means[[g_a, g_b]].dropna()
            wins_a, wins_b = int((both[g_a] > both[g_b]).sum()), int((both[g_a] < both[g_b]).sum())
            row = wl.loc[(lang, "rr", g_a, g_b)]
            assert (row["n_sentences"], row["wins_a"], row["wins_b"]) == (len(both), wins_a, wins_b)
            assert row["p_two_sided"] == pytest.approx(binomtest(wins_a, wins_a + wins_b, 0.5).pvalue)
            assert row["p_one_sided"] == pytest.approx(
                binomtest(wins_a, wins_a + wins_b, 0.5, alternative="greater").pvalue)
        fit = smf.mixedlm("rr ~ C(group, Treatment('MN'))", x, groups=x["s_id"]).fit(reml=True)
        for g in ("FN", "MNN", "FNN"):
            got = eff.loc[(lang, "rr", f"group[T.{g}]")]
            assert got["estimate"] == pytest.approx(fit.fe_params[f"C(group, Treatment('MN'))[T.{g}]"], abs=1e-3)
            assert got["std_err"] == pytest.approx(fit.bse_fe[f"C(group, Treatment('MN'))[T.{g}]"], abs=1e-3)
            assert bool(got["converged"])
    # the known ranking favours native speakers: non-natives lose to natives on rr in the pooled model
    pooled = eff.loc[("all", "rr", "group[T.MNN]")]
    assert pooled["estimate"] < 0 and pooled["p_value"] < 0.05
