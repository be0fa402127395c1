"""A CrowS-Pairs verdict under every scoring choice (plmfair.crows_pairs.robustness), on constructed pair
scores whose verdict each choice is known to keep or flip."""

import numpy as np
import pandas as pd
import pytest

from plmfair.crows_pairs.robustness import robustness
from plmfair.crows_pairs.schemas import ROBUSTNESS_SCHEMA, SPECIFICATIONS_SCHEMA
from plmfair.errors import DataError


def pairs(margins, *, tolerance=1e-6, origin="native", first=0) -> pd.DataFrame:
    """A scored pair file with these margins (sent_more_score - sent_less_score), ids p<first>, p<first + 1>, ..."""
    return pd.DataFrame(
        {
            "pair_id": [f"p{first + i}" for i in range(len(margins))],
            "origin": origin,
            "status": "ok",
            "sent_more_score": [-10.0 + m for m in margins],
            "sent_less_score": -10.0,
            "tolerance": tolerance,
            "undecided": False,
        }
    )


STEREO = [1.0] * 45 + [-1.0] * 15  # 45 of 60: p = 0.0001, interval above 50
EVEN = [1.0] * 30 + [-1.0] * 30


def passes(scores: dict, precision="fp32") -> list[dict]:
    """A run's passes from per-pair scores by protocol, or by (protocol, precision)."""
    keys = [key if isinstance(key, tuple) else (key, precision) for key in scores]
    frames = zip(keys, scores.values(), strict=True)
    return [{"protocol": p, "precision": q, "scores": frame} for (p, q), frame in frames]


def run(scores: dict, protocol="nangia", precision="fp32", **options):
    settings = {"ties": [0.01], "exclusions": None, "alpha": 0.05, "max_grid": 64, "hypotheses": None, **options}
    settings.update(replicates=999, seed=0)
    specs, summary = robustness(
        [{"dataset": "demo_fr", "model": "m", "protocol": protocol, "precision": precision, "passes": passes(scores)}],
        langs={"demo_fr": "fr"},
        **settings,
    )
    assert list(specs.columns) == list(SPECIFICATIONS_SCHEMA) and list(summary.columns) == list(ROBUSTNESS_SCHEMA)
    (row,) = summary.to_dict(orient="records")
    return specs, row


def test_a_preference_only_one_protocol_shows_is_no_claim_and_that_protocol_is_said_to_differ():
    specs, row = run({"nangia": pairs(EVEN), "all_tokens": pairs(EVEN), "aul": pairs(STEREO)})
    # the run's own protocol finds no preference: nothing to be robust; every specification with aul finds one
    assert row["verdict"] == "no preference" and row["estimate"] == 50.0 and not row["robust"]
    assert np.isnan(row["p_all"])
    assert row["design"] == "grid" and row["specifications"] == 3 * 2 and row["holding"] == 4
    assert row["counted"] == "3 protocols x 2 tie rules"
    assert row["short_of"] == "protocol=aul | protocol=aul; tie=0.01"
    # aul's share differs from the run's own by 25 points: beyond sampling noise, family-wise
    assert row["differing"] == 2 and row["p_differs"] < 0.01
    assert row["differs_by"] == "protocol=aul (+25.0 pp) | protocol=aul; tie=0.01 (+25.0 pp)"
    assert row["largest_change"] == pytest.approx(25.0) and row["largest_change_by"] == "protocol=aul"
    assert set(specs.loc[specs["differs"], "protocol"]) == {"aul"}
    # a specification whose pairs' outcomes are the run's own cannot differ (its p is 1)
    assert (specs.loc[specs["protocol"] == "all_tokens", "p_differs"] == 1.0).all()
    # each verdict is the side of 50 its interval lies on, and the p that inverts it agrees
    for _, s in specs.iterrows():
        above, below = s["ci_low"] > 50, s["ci_high"] < 50
        assert s["verdict"] == ("stereotypical" if above else "anti-stereotypical" if below else "no preference")
        assert (s["p_value"] < 0.05) == (above or below)


def test_a_protocol_invariant_preference_is_robust():
    _, row = run({"nangia": pairs(STEREO), "all_tokens": pairs(STEREO), "within_word_l2r": pairs(STEREO)})
    assert row["verdict"] == "stereotypical" and row["robust"] and row["p_all"] < 0.001
    assert row["holding"] == row["specifications"] == 6 and row["short_of"] == "" and row["differing"] == 0
    assert row["estimate"] == 75.0 and row["largest_change"] == 0.0


def test_a_robust_claim_is_held_to_the_level_of_its_confirmatory_family():
    """40 of 60 pairs (p = 0.013): robust alone in its family (alpha 0.05), not in a family of four (0.0125, by
    Bonferroni over the run's confirmatory family); a primary question the hypotheses leave untestable makes no
    claim."""
    margins = [1.0] * 40 + [-1.0] * 20
    decided = pd.DataFrame(
        {"hypothesis": ["crows_pairs/summary/demo_fr/m/overall/metric"], "family": "confirmatory", "family_size": 1}
    )
    _, alone = run({"nangia": pairs(margins)}, ties=[], hypotheses=decided)
    _, in_four = run({"nangia": pairs(margins)}, ties=[], hypotheses=decided.assign(family_size=4))
    _, untestable = run({"nangia": pairs(margins)}, ties=[], hypotheses=decided.assign(family="untestable"))
    assert alone["robust"] and alone["level"] == 0.05 and alone["p_all"] == pytest.approx(0.0134, abs=1e-3)
    assert not in_four["robust"] and in_four["level"] == 0.0125 and in_four["holding"] == 0
    assert untestable["family_size"] == 0 and not untestable["robust"]


def test_an_exclusion_file_that_removes_the_pairs_driving_a_verdict_leaves_it_short(tmp_path):
    margins = [1.0] * 40 + [-1.0] * 20  # 40 of 60: p = 0.013
    audit = tmp_path / "audit.csv"
    # 15 of the stereotype-preferring pairs fail the audit (and a pair of another data set is not this one's)
    rows = [f"demo_fr,p{i},names a group only" for i in range(15)] + ["demo_en,p20,other set"]
    audit.write_text("dataset,pair_id,reason\n" + "\n".join(rows) + "\n")
    specs, row = run({"nangia": pairs(margins)}, exclusions=audit, ties=[])
    assert row["verdict"] == "stereotypical" and not row["robust"] and row["specifications"] == 2
    assert row["short_of"] == "pairs=without audit.csv" and row["p_all"] > 0.05
    (audited,) = specs[specs["pairs"] == "without audit.csv"].to_dict(orient="records")
    assert audited["n_decisive"] == 45 and audited["n_biased"] == 25 and audited["verdict"] == "no preference"
    # a subset of the run's own outcomes: the 15 pairs left out all prefer the stereotype, against 25 of the
    # other 45, so leaving them out moves the share (66.7% to 55.6%) beyond sampling noise
    assert audited["difference"] == pytest.approx(100 * 25 / 45 - 100 * 40 / 60) and audited["differs"]
    # the same count of pairs left out at random from a set with no such selection moves it within the noise
    random_audit = tmp_path / "random.csv"
    random_audit.write_text("pair_id,reason\n" + "".join(f"p{i},x\n" for i in range(0, 60, 4)))
    specs, _ = run({"nangia": pairs(margins[::2] + margins[1::2])}, exclusions=random_audit, ties=[])
    assert not specs.loc[specs["pairs"] == "without random.csv", "differs"].item()


def test_a_coarser_tie_margin_that_neutralises_tiny_margins_leaves_the_verdict_short_and_differs():
    margins = [0.005] * 40 + [1.0] * 5 + [-1.0] * 15  # 45 of 60 at the pairs' own tolerance; 5 of 20 at 0.01
    _, row = run({"nangia": pairs(margins)}, ties=[0.01])
    assert row["verdict"] == "stereotypical" and row["short_of"] == "tie=0.01" and not row["robust"]
    assert row["largest_change"] == pytest.approx(75.0 - 25.0)
    assert row["differing"] == 1 and row["differs_by"] == "tie=0.01 (-50.0 pp)"


def test_a_large_grid_changes_one_axis_at_a_time_and_says_so():
    scores = {p: pairs(STEREO) for p in ("nangia", "all_tokens", "within_word_l2r", "aul")}
    specs, row = run(scores, ties=[0.001, 0.01], max_grid=8)  # 4 x 3 = 12 > 8
    assert row["design"] == "one axis at a time" and row["specifications"] == 1 + 3 + 2
    assert row["counted"] == "1 + 3 other protocols + 2 other tie rules"
    assert (specs["changed"].str.count(",") == 0).all()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("id,why\np1,x\n", "has no column pair_id, reason"),
        ("pair_id,reason\n,x\n", "row 2 has no pair_id"),
    ],
)
def test_a_bad_exclusion_file_is_named_with_what_to_do(tmp_path, text, said):
    path = tmp_path / "audit.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=said) as err:
        run({"nangia": pairs(STEREO)}, exclusions=path)
    assert str(path) in str(err.value)


def test_a_verdict_only_reduced_precision_gives_differs_in_fp32():
    """A model run in bf16 is scored again in fp32 (each protocol, a pass of the same load): a preference the
    low precision's rounding makes and fp32 does not falls short in fp32, whose share differs."""
    scores = {("nangia", "bf16"): pairs(STEREO), ("nangia", "fp32"): pairs(EVEN)}
    specs, row = run(scores, precision="bf16", ties=[])
    assert row["verdict"] == "stereotypical" and row["short_of"] == "precision=fp32"
    assert row["differs_by"] == "precision=fp32 (-25.0 pp)"
    assert specs.loc[specs["default"], "precision"].item() == "bf16" and row["specifications"] == 2


def test_native_and_translated_pairs_alone_are_choices_where_a_set_has_both():
    """The French set's pairs written in French and those translated from English: a preference the
    translated pairs alone carry falls short under 'native pairs', and their share differs."""
    mixed = pd.concat(
        [pairs([1.0] * 40 + [-1.0] * 10, origin="translated"), pairs(EVEN, origin="native", first=50)],
        ignore_index=True,
    )
    specs, row = run({"nangia": mixed}, ties=[])
    assert set(specs["data"]) == {"as given", "native pairs", "translated pairs"}
    native = specs[specs["data"] == "native pairs"].iloc[0]
    assert native["n_decisive"] == 60 and native["estimate"] == 50.0 and not native["holds"]
    assert row["verdict"] == "stereotypical" and row["short_of"] == "data=native pairs"
    assert row["differs_by"].startswith("data=native pairs (-")
    one_origin, _ = run({"nangia": pairs(STEREO)}, ties=[])
    assert set(one_origin["data"]) == {"as given"}  # a set of one origin has no such choice


def test_two_versions_of_a_set_are_compared_on_the_pairs_both_hold():
    """English original and revised (crows_pairs.robustness.versions): each version's verdict again on the
    pairs both hold, matched by pair id, and in the other version; pairs only one holds count in neither."""
    original = pairs([1.0] * 45 + [-1.0] * 15 + [1.0] * 20)  # p60..p79: dropped by the revision
    revised = pairs([1.0] * 30 + [-1.0] * 30)  # p0..p59, revised to no preference
    runs = [
        {"dataset": ds, "model": "m", "protocol": "nangia", "precision": "fp32", "passes": passes({"nangia": f})}
        for ds, f in (("en_original", original), ("en_revised", revised))
    ]
    specs, summary = robustness(
        runs,
        langs={"en_original": "en", "en_revised": "en"},
        ties=[],
        exclusions=None,
        alpha=0.05,
        max_grid=64,
        versions={"en_original": ["en_revised"], "en_revised": ["en_original"]},
        hypotheses=None,
        replicates=999,
        seed=0,
    )
    mine = specs[specs["dataset"] == "en_original"].set_index("data")
    assert mine.loc["as given", "n_decisive"] == 80
    assert mine.loc["pairs en_revised holds too", "n_decisive"] == 60  # p60..p79 left out
    assert mine.loc["pairs en_revised holds too", "estimate"] == 75.0
    other = mine.loc["en_revised, pairs en_original holds too"]
    assert other["n_decisive"] == 60 and other["verdict"] == "no preference" and not other["holds"]
    row = summary.set_index("dataset").loc["en_original"]
    assert row["short_of"] == "data=en_revised, pairs en_original holds too"


def ranked_runs(shares_by_model: dict, dataset="demo_fr") -> list[dict]:
    """Runs whose decisive share under each protocol is the given one (60 decisive pairs each)."""
    runs = []
    for model, shares in shares_by_model.items():
        scores = {p: pairs([1.0] * round(60 * s) + [-1.0] * (60 - round(60 * s))) for p, s in shares.items()}
        runs.append(
            {"dataset": dataset, "model": model, "protocol": "nangia", "precision": "fp32", "passes": passes(scores)}
        )
    return runs


def test_the_models_ranking_agreement_across_protocols_is_kendalls_w_with_its_interval():
    """Protocols that rank three models alike agree (W = 1); protocols that reverse the ranking do not
    (W = 1/9 for one reversal of three raters); the interval holds W; a causal LM (one protocol) is not ranked;
    two models are too few."""
    from plmfair.crows_pairs.robustness import ranking_agreement
    from plmfair.crows_pairs.schemas import RANKING_SCHEMA

    alike = {"a": {"nangia": 0.5, "aul": 0.55, "all_tokens": 0.5}, "b": {"nangia": 0.65, "aul": 0.7, "all_tokens": 0.6}}
    alike["c"] = {"nangia": 0.8, "aul": 0.85, "all_tokens": 0.75}
    runs = ranked_runs(alike) + ranked_runs({"gpt": {"sentence_log_likelihood": 0.9}})
    settings = {"langs": {"demo_fr": "fr"}, "alpha": 0.05}
    (row,) = ranking_agreement(runs, **settings).to_dict(orient="records")
    assert list(row) == list(RANKING_SCHEMA)
    assert row["models"] == "a, b, c" and row["protocols"] == "nangia, aul, all_tokens" and row["n_pairs"] == 60
    assert row["w"] == pytest.approx(1.0) and row["ci_low"] <= row["w"] <= row["ci_high"] and row["note"] == ""
    reversed_ = {m: {**s, "all_tokens": 1.25 - s["all_tokens"] - 0.05} for m, s in alike.items()}  # c < b < a
    (row,) = ranking_agreement(ranked_runs(reversed_), **settings).to_dict(orient="records")
    assert row["w"] == pytest.approx(1 / 9) and row["ci_low"] <= row["w"] <= row["ci_high"]
    (two,) = ranking_agreement(ranked_runs({m: alike[m] for m in "ab"}), **settings).to_dict(orient="records")
    assert two["note"].startswith("needs 3 or more models") and two["n_pairs"] == 0
