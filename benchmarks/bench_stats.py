"""The statistics a run's report prints, checked on the designs they meet: the level of every marked test
(its false-positive rate when its own null holds) and the coverage of every printed interval.

The parts (``--parts``, all by default):

- ``levels``: the group tests of the cloze sets on MozArt's design (the real one from MozArt.zip in
  $PLMFAIR_SHARED_DATA or ../shared/data; ``--design demo``: the demo's, two annotators a group), under the
  full null and partial nulls (some groups differ, the tested contrast does not), and power with a planted gap.
  Each simulated data set keeps the design and draws each annotation's outcome from a latent score: a
  sentence effect and an annotator effect (heterogeneity, on the logit scale) plus the scenario's shift of
  some groups; the latent score plus logistic noise falls between thresholds that give the answer's rank in
  the model's top 5 (or none), hence ``rr``, ``hit1`` and ``hit5`` with MozArt-like rates (P@1 about 10%).
  Every marked test (the sentence-adjusted gaps to MN, the omnibus, the 2 x 2 contrasts, group x language on
  the pooled languages, win/loss net wins, the permutation test of sigma_gd) runs on every data set exactly as
  the jobs run it; per scenario the rejection rate at alpha (unadjusted) of every test whose own null holds is
  printed with its 95% Wilson interval, among the data sets where the row is testable (its smallest attainable
  p below alpha, its size at least 0.6 alpha and no limit of its design: plmfair.multiplicity.testable_on_design;
  an untestable row prints no mark), with how often that is; flagged outside [0.03, 0.07] (LEVEL_BAND at alpha
  0.05, ends included) when the row is testable in at least MIN_JUDGED data sets (a rate over fewer is
  printed, not judged). A test that permutes labels exchangeable under its null (all but Freedman & Lane's)
  rejects a data set with probability exactly its size given the data's permutation distribution: its
  exact level, the mean size over the testable data sets, is printed and judged instead, and the simulated
  rejections are checked against it (the exact Poisson-binomial test; flagged below AGREEMENT_ALPHA: the
  code is not the exact test it claims to be). At no effect sigma_gd's interval covers 0 exactly when the
  test does not reject: its exact coverage, one minus the mean size, likewise.
- ``coverage``: on the same simulated data sets, the coverage of the cloze intervals the tables print: each
  gap's (the test of the gap alone inverted) and sigma_gd's (its permutation test inverted over the group
  effects), of the true values (the group means of the population the latent model draws from, by
  Gauss-Hermite quadrature), on the rows that print one (testable); flagged below 0.93, with the median
  width where above 0.97.
- ``pairs``: CrowS-Pairs' tests and intervals on 40, 80 and 1,677 pairs, exactly (benchmarks/calibration_pairs.py).
- ``robustness``: the error rates of the robustness statements (plmfair.multiplicity;
  benchmarks/calibration_robustness.py). CrowS-Pairs: 24 specifications that all share one population share,
  with no preference and with a uniform one, on the ``--pair-sizes`` sets (and the real writers, sd 0.5):
  "robust" (a false claim at no effect, the power at a uniform one) and "some specification differs" (a false
  alarm in both), each flagged above LEVEL_BAND's upper end (family-wise rates may be lower: the
  specifications are near copies of each other), beside the old unadjusted "fragile" rule's rate. Cloze sets,
  on the demo's design: "robust" at no effect (a false claim, flagged above the band) and with the
  non-natives shifted down by ``--effect`` (its power), beside the old rule's rate.
- ``ranking``: the coverage of the conservative interval of Kendall's W that crows_pairs_ranking_agreement
  prints (4 protocols ranking 5 masked LMs by decisive share, on 300 and 1,677 pairs), of the true W of the
  population shares, where the models' shares are far apart, close, and reordered by one protocol. Each pair's
  outcomes share a pair effect (N(0, 1) on the logit scale: the same pairs are hard for every model), which
  keeps the population shares in the order of their logits, so the true W is the shares' logits' W.

``--lmm N`` also fits the crossed mixed model on N data sets with no effect and reports the rate of its Wald
tests (the reason its terms are printed unmarked); ``--logit-check N`` fits, on N data sets with the
non-natives shifted, the workflow's pooled linear mixed model of hit1 and lme4's logistic ``glmer`` (R, when
installed) and compares their Wald tests of the group terms.

Scenarios (shifts on the latent, logit, scale):
- no effect: every test's null holds;
- non-natives down / up: MNN and FNN shifted by -/+ effect: gaps FN vs MN, win/loss MN-FN and
  MNN-FNN, gender, gender x nativeness and group x language keep their nulls;
- women down: FN and FNN shifted by -effect: gap MNN vs MN, win/loss MN-MNN and FN-FNN,
  nativeness, gender x nativeness and group x language keep theirs;
- non-natives, by sentence: MNN and FNN shifted by a sentence's own draw from N(-effect, effect):
  the same nulls as non-natives down but group x language (the realized gaps differ between
  languages, whose sentences differ);
- power: non-natives down, the tests of that effect.

    python benchmarks/bench_stats.py [--parts levels coverage pairs] [--design real|demo] [--replicates 400]
                                     [--permutations 499] [--effect 0.5] [--jobs 2] [--lmm 100] [--logit-check 50]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from calibration_pairs import SIZES, pairs_tables  # benchmarks/calibration_pairs.py, beside this script
from calibration_robustness import (
    cloze_rates,
    robustness_rates,
)  # benchmarks/calibration_robustness.py, beside this script
from scipy.special import expit
from shared_data import shared_file  # benchmarks/shared_data.py, beside this script
from threadpoolctl import threadpool_limits

from plmfair.cloze.annotations import GROUPS, read_mozart_zip
from plmfair.cloze.disparity import group_disparity
from plmfair.cloze.group_effects import group_effects
from plmfair.cloze.group_tests import FREEDMAN_LANE, group_gaps, group_tests, group_winloss
from plmfair.multiplicity import LEVEL_BAND, testable_on_design
from plmfair.stats.agreement import kendalls_w, ranking_agreement
from plmfair.stats.paired import paired_change_size
from plmfair.stats.proportions import binomial_summary

REPO = Path(__file__).resolve().parents[1]
# the result files whose tests the run's hypotheses mark, each a test whose level this benchmark shows
LEVEL_SHOWN = {
    "summary.parquet",
    "mcnemar.parquet",
    "language_winloss.parquet",
    "group_gaps.parquet",
    "group_tests.parquet",
    "group_winloss.parquet",
    "group_disparity.parquet",
}
LANGS = ["en", "es", "de", "fr"]
# the latent score above which an answer ranks 1st, 2nd, ..., 5th (latent sd ~2.1: sentence 1, annotator
# 0.5, logistic noise): P(rank 1) ~ 12% and P(top 5) ~ 30%, inside MozArt's observed 2-24% P@1
THRESHOLDS = np.array([2.5, 2.1, 1.7, 1.4, 1.1])


def mozart_design(which: str = "real") -> tuple[pd.DataFrame, str]:
    """(lang, s_id, u_id, group) of every MozArt annotation of the real design (``which``: real) or the
    demo's (two annotators a group and language), and where it came from."""
    real = shared_file("mozart", "MozArt.zip") if which == "real" else None
    if real is not None:
        ann = read_mozart_zip(real, LANGS)
        return ann[["lang", "s_id", "u_id", "group"]].reset_index(drop=True), "the real MozArt design"
    ann = read_mozart_zip(REPO / ".test" / "data" / "MozArt.zip", LANGS)
    where = "the demo's MozArt design" + (" (real data absent)" if which == "real" else "")
    return ann[["lang", "s_id", "u_id", "group"]].reset_index(drop=True), where


def true_means(shift: float, *, sentence_sd: float = 1.0, annotator_sd: float = 0.5) -> dict[str, float]:
    """The population means of rr, hit1 and hit5 of a group whose latent score is moved by ``shift``: the
    latent score is N(0, sentence_sd^2 + annotator_sd^2) plus logistic noise, ranked by :data:`THRESHOLDS`
    (Gauss-Hermite quadrature over the normal part)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    z = np.sqrt(sentence_sd**2 + annotator_sd**2) * nodes
    above = np.array([np.sum(weights * expit(z + shift - t)) / np.sum(weights) for t in THRESHOLDS])
    rank = np.diff(np.concatenate([[0.0], above]))  # P(rank 1), ..., P(rank 5)
    return {"rr": float(np.sum(rank / np.arange(1, 6))), "hit1": float(rank[0]), "hit5": float(above[-1])}


def truths(shift: dict[str, float]) -> dict:
    """The true gaps of each group to MN (per metric) and the true sigma_gd of P@1, P@5 and MRR (percentage
    points) when the groups' latent scores are moved by ``shift``."""
    means = {g: true_means(shift.get(g, 0.0)) for g in GROUPS}
    gaps = {(metric, g): means[g][metric] - means["MN"][metric] for g in GROUPS for metric in ("rr", "hit1")}
    sigma = {
        name: 100 * float(np.std([means[g][column] for g in GROUPS]))
        for column, name in (("hit1", "p_at_1"), ("hit5", "p_at_5"), ("rr", "mrr"))
    }
    return {"gap": gaps, "sigma": sigma}


def simulate(
    design: pd.DataFrame,
    rng: np.random.Generator,
    *,
    shift: dict[str, float] | None = None,
    by_sentence: bool = False,
    sentence_sd: float = 1.0,
    annotator_sd: float = 0.5,
) -> pd.DataFrame:
    """Annotation scores on ``design``: each group's latent score moved by ``shift[group]``, or with
    ``by_sentence`` by a draw per sentence from N(shift, |shift|)."""
    shift = shift or {}
    sentence = design["lang"] + ":" + design["s_id"]
    annotator = design["lang"] + ":" + design["u_id"]
    s_codes, s_levels = pd.factorize(sentence)
    a_codes, a_levels = pd.factorize(annotator)
    moved = design["group"].map(shift).fillna(0.0).to_numpy(float)
    if by_sentence:
        moved = moved + np.abs(moved) * rng.normal(0, 1, len(s_levels))[s_codes]
    latent = (
        rng.normal(0, sentence_sd, len(s_levels))[s_codes]
        + rng.normal(0, annotator_sd, len(a_levels))[a_codes]
        + moved
        + rng.logistic(size=len(design))
    )
    rank = 1 + (latent[:, None] <= THRESHOLDS[None, :]).sum(axis=1)
    rank = np.where(rank <= len(THRESHOLDS), rank, 0)  # 0: not in the top 5
    rr = np.where(rank > 0, 1.0 / np.maximum(rank, 1), 0.0)
    return design.assign(model="sim", rr=rr, hit1=(rank == 1).astype(int), hit5=(rank > 0).astype(int))


NON_NATIVES, WOMEN = ("MNN", "FNN"), ("FN", "FNN")
# tests whose own null holds when non-natives (or women) differ from the others and nothing else does
NULL_WITH_NON_NATIVES = {
    "gap FN vs MN",
    "win/loss MN vs FN",
    "win/loss MNN vs FNN",
    "gender",
    "gender_x_nativeness",
    "group_x_language",
}
NULL_WITH_WOMEN = {
    "gap MNN vs MN",
    "win/loss MN vs MNN",
    "win/loss FN vs FNN",
    "nativeness",
    "gender_x_nativeness",
    "group_x_language",
}
PLANTED_NON_NATIVES = {
    "gap MNN vs MN",
    "gap FNN vs MN",
    "nativeness",
    "omnibus",
    "win/loss MN vs MNN",
    "disparity p_at_1",
    "disparity mrr",
}


def scenarios(effect: float) -> dict[str, tuple[dict, bool, set | None]]:
    """name -> (shift per group, shift varies by sentence, the tests reported: None for every test)."""
    down = dict.fromkeys(NON_NATIVES, -effect)
    return {
        "no effect": ({}, False, None),
        "non-natives down": (down, False, NULL_WITH_NON_NATIVES),
        "non-natives up": (dict.fromkeys(NON_NATIVES, effect), False, NULL_WITH_NON_NATIVES),
        "women down": (dict.fromkeys(WOMEN, -effect), False, NULL_WITH_WOMEN),
        # a shift drawn per sentence makes the realized gaps differ between languages (their sentences
        # differ): group x language's null does not hold here
        "non-natives, by sentence": (down, True, NULL_WITH_NON_NATIVES - {"group_x_language"}),
        "power: non-natives down": (down, False, PLANTED_NON_NATIVES),
    }


def _gaps(scores, **settings):
    gaps = group_gaps(scores, cloze_set="t", **settings)
    return gaps.assign(test="gap " + gaps["group"] + " vs " + gaps["reference"])


def _winloss(scores, **settings):
    wl = group_winloss(scores, cloze_set="t", **settings)
    return wl.assign(test="win/loss " + wl["group_a"] + " vs " + wl["group_b"])


def _disparity(scores, **settings):
    disparity = group_disparity(scores, cloze_set="t", **settings)
    return disparity.assign(test="disparity " + disparity["metric"], metric="-")


# the marked tests by family (each a table of the workflow): --families runs some of them only
FAMILIES = {
    "gaps": _gaps,
    "tests": lambda scores, **settings: group_tests(scores, cloze_set="t", **settings),
    "winloss": _winloss,
    "disparity": _disparity,
}


def marked_tests(
    scores: pd.DataFrame,
    *,
    permutations: int,
    seed: int,
    alpha: float,
    families=tuple(FAMILIES),
    truth: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(test, metric, lang, p, smallest attainable p) of every permutation test the tables and figures mark
    (of ``families``), and, given the ``truth`` (:func:`truths`), every interval they print beside them
    (gaps and sigma_gd) with whether it holds the true value."""
    settings = {"permutations": permutations, "seed": seed, "alpha": alpha}
    frames = {family: FAMILIES[family](scores, **settings) for family in families}
    out = pd.concat(
        [
            f.reindex(columns=["test", "metric", "lang", "p_permutation", "p_min", "size", "limit"])
            for f in frames.values()
        ],
        ignore_index=True,
    )
    out["scope"] = np.where(out["lang"] == "all", "pooled", "per language")
    intervals = []
    if truth is not None and "gaps" in frames:
        g = frames["gaps"]
        value = [truth["gap"][m, group] for m, group in zip(g["metric"], g["group"], strict=True)]
        intervals.append(g.assign(interval="gap (test of the gap inverted)", truth=value))
    if truth is not None and "disparity" in frames:
        d = frames["disparity"]
        intervals.append(
            d.assign(
                interval="sigma_gd (test inverted)",
                truth=d["test"].str.split(" ").str[-1].map(truth["sigma"]),
                metric=d["test"].str.split(" ").str[-1],
            )
        )
    covered = pd.DataFrame()
    if intervals:
        rows = pd.concat(intervals, ignore_index=True)
        # the rows printed with an interval
        rows = rows[
            rows["informative"].astype(bool)
            & testable_on_design(rows["p_min"], rows["size"], rows.get("limit", ""), alpha=alpha)
        ]
        covered = pd.DataFrame(
            {
                "interval": rows["interval"],
                "metric": rows["metric"],
                "scope": np.where(rows["lang"] == "all", "pooled", "per language"),
                "covered": (rows["ci_low"] <= rows["truth"] + 1e-12) & (rows["truth"] - 1e-12 <= rows["ci_high"]),
                "width": rows["ci_high"] - rows["ci_low"],
                # sigma_gd's interval holds a true 0 exactly when its permutation test does not reject: given
                # the data set's ties, with probability 1 - size (NaN where the truth is not 0)
                "exact": np.where(
                    (rows["interval"] == "sigma_gd (test inverted)") & (rows["truth"] == 0), 1 - rows["size"], np.nan
                ),
            }
        )
    return out.dropna(subset=["p_permutation"]), covered


def _one_thread() -> None:
    """A worker's numerical libraries on one thread: the replicates already fill the cores, and
    threaded least squares in each worker oversubscribed them several times over."""
    threadpool_limits(1)


def _replicate(task) -> pd.DataFrame:
    """One simulated data set of a scenario and its tests (a task of its own, for a process pool)."""
    design, scenario, index, r, shift, by_sentence, permutations, seed, alpha, families = task
    rng = np.random.default_rng([seed, index, r])
    scores = simulate(design, rng, shift=shift, by_sentence=by_sentence)
    truth = None if by_sentence else truths(shift)
    tests, covered = marked_tests(
        scores, permutations=permutations, seed=seed + r, alpha=alpha, families=families, truth=truth
    )
    return tests.assign(scenario=scenario), covered.assign(scenario=scenario)


GLMER = """
library(lme4)
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
d$group <- relevel(factor(d$group), "MN")
d$lang <- factor(d$lang)
f <- glmer(hit1 ~ group + lang + (1 | sentence) + (1 | annotator), data = d, family = binomial)
s <- coef(summary(f))
s <- s[grep("^group", rownames(s)), , drop = FALSE]
write.csv(data.frame(term = sub("^group", "", rownames(s)), z = s[, 3], p = s[, 4]), args[2], row.names = FALSE)
"""


def logit_check(design: pd.DataFrame, *, replicates: int, effect: float, seed: int, alpha: float) -> None:
    """Pooled hit1 with the non-natives shifted: the workflow's linear mixed model (one variance for
    every language, on the probability scale) against lme4's logistic glmer on the same data."""
    if shutil.which("Rscript") is None:
        print("== logit check: Rscript not found (apt-get install r-base-core r-cran-lme4); skipped")
        return
    rng = np.random.default_rng([seed, 99])
    rows = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "glmer.R"
        script.write_text(GLMER)
        for _ in range(replicates):
            scores = simulate(design, rng, shift=dict.fromkeys(NON_NATIVES, -effect))
            ours = group_effects(scores, metrics=("hit1",))
            ours = ours[(ours["lang"] == "all") & ours["term"].str.startswith("group[")]
            data = scores.assign(
                sentence=scores["lang"] + ":" + scores["s_id"], annotator=scores["lang"] + ":" + scores["u_id"]
            )
            data[["lang", "sentence", "annotator", "group", "hit1"]].to_csv(Path(tmp) / "d.csv", index=False)
            subprocess.run(
                ["Rscript", str(script), str(Path(tmp) / "d.csv"), str(Path(tmp) / "glmer.csv")],
                check=True,
                capture_output=True,
            )
            glmer = pd.read_csv(Path(tmp) / "glmer.csv").set_index("term")
            for _, row in ours.iterrows():
                group = row["term"][len("group[T.") : -1]
                rows.append(
                    {
                        "group": group,
                        "p_lmm": row["p_value"],
                        "p_glmer": glmer.loc[group, "p"],
                        "z_lmm": row["estimate"] / row["std_err"],
                        "z_glmer": glmer.loc[group, "z"],
                    }
                )
    table = pd.DataFrame(rows)
    print(
        f"== logit check, pooled hit1, non-natives shifted by -{effect}: {replicates} data sets, "
        f"{time.perf_counter() - start:.0f} s (Wald tests of the group terms, unadjusted, alpha {alpha})"
    )
    for group, g in table.groupby("group", sort=False):
        lmm, glmer = g["p_lmm"] < alpha, g["p_glmer"] < alpha
        print(
            f"  {group:<4} rejected: linear {lmm.mean():.3f}, logistic {glmer.mean():.3f}; same decision "
            f"{(lmm == glmer).mean():.3f}; z correlation {np.corrcoef(g['z_lmm'], g['z_glmer'])[0, 1]:.3f}; "
            f"median z ratio (linear / logistic) {np.median(g['z_lmm'] / g['z_glmer']):.3f}"
        )


def rates(results: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Rejection rate per (test, metric, scope) among the data sets where the row is testable
    (:func:`plmfair.multiplicity.testable_on_design`), with its Wilson 95% interval, and the share of data
    sets where it is; for a test exact by exchangeability, also its level given each data set's ties
    (``exact_level``, :func:`exact_level`) and whether the rejections agree with it (``agreement_p``)."""
    rows = []
    for (test, metric, scope), g in results.groupby(["test", "metric", "scope"], sort=False):
        testable = g[testable_on_design(g["p_min"], g["size"], g["limit"], alpha=alpha)]
        rejected = testable["p_permutation"] < alpha
        k, n = int(rejected.sum()), len(testable)
        s = binomial_summary(k, n)
        exact = test not in FREEDMAN_LANE and n > 0
        rows.append(
            {
                "test": test,
                "metric": metric,
                "scope": scope,
                "n": n,
                "testable": len(testable) / len(g),
                "rate": s.proportion,
                "ci_low": s.ci_low,
                "ci_high": s.ci_high,
                "exact_level": float(testable["size"].mean()) if exact else float("nan"),
                "agreement_p": poisson_binomial_p(k, testable["size"].to_numpy(float)) if exact else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def poisson_binomial_p(k: int, probabilities: np.ndarray) -> float:
    """Two-sided p of ``k`` successes among independent trials of the given ``probabilities`` (the sum of
    the outcomes at most as likely as ``k``'s, the exact binomial test's rule), by convolution."""
    pmf = np.array([1.0])
    for q in probabilities:
        pmf = np.convolve(pmf, [1 - q, q])
    return float(min(1.0, pmf[pmf <= pmf[k] * (1 + 1e-7)].sum()))


def coverages(covered: pd.DataFrame) -> pd.DataFrame:
    """Coverage per (interval, metric, scope) with its Wilson 95% interval and the median width."""
    rows = []
    for (interval, metric, scope), g in covered.groupby(["interval", "metric", "scope"], sort=False):
        s = binomial_summary(int(g["covered"].sum()), len(g))
        rows.append(
            {
                "interval": interval,
                "metric": metric,
                "scope": scope,
                "n": len(g),
                "coverage": s.proportion,
                "ci_low": s.ci_low,
                "ci_high": s.ci_high,
                "median width": float(np.median(g["width"])),
                "exact": float(g["exact"].mean()),
            }
        )
    return pd.DataFrame(rows)


# the fewest testable data sets a simulated rate is judged on (below, its Wilson interval spans the band)
MIN_JUDGED = 100
# below this, the rejections of an exact test disagree with its exact level: the code is not the test it claims
AGREEMENT_ALPHA = 0.01


def level_flag(rate: float, alpha: float) -> str:
    """'above' when a rejection rate under the null exceeds LEVEL_BAND's upper end (the marks claim more than
    they hold), 'below' under its lower end (the test is too weak to be read), '' inside (ends included, to
    1e-12: 1.4 x 0.05 is 0.06999999999999999 in floating point, and 28 of 400 is inside) or NaN."""
    if np.isnan(rate):
        return ""
    low, high = LEVEL_BAND[0] * alpha - 1e-12, LEVEL_BAND[1] * alpha + 1e-12
    return "above" if rate > high else "below" if rate < low else ""


def coverage_flag(coverage: float, alpha: float) -> bool:
    """Whether a 1 - alpha interval's coverage falls below 1 - LEVEL_BAND's upper end x alpha (0.93 at 0.05)."""
    return coverage < 1 - LEVEL_BAND[1] * alpha - 1e-12


def _band(alpha: float) -> str:
    return f"[{LEVEL_BAND[0] * alpha:g}, {LEVEL_BAND[1] * alpha:g}]"


def _level_note(flag: str, alpha: float) -> str:
    return f"  <- outside {_band(alpha)}" if flag else ""


def _coverage_note(coverage: float, alpha: float) -> str:
    return f"  <- below {1 - LEVEL_BAND[1] * alpha:g}" if coverage_flag(coverage, alpha) else ""


def cloze_part(args, design: pd.DataFrame, parts: set[str]) -> int:
    """The levels and coverages of the cloze group tests on ``design``, scenario by scenario; returns the
    rows flagged (a level outside LEVEL_BAND, a coverage below 1 - its upper end x alpha)."""
    flagged = 0
    for index, (name, (shift, by_sentence, reported)) in enumerate(scenarios(args.effect).items()):
        if args.scenarios and name not in args.scenarios:
            continue
        power = name.startswith("power")
        replicates = args.power_replicates if power else args.replicates
        tasks = [
            (design, name, index, r, shift, by_sentence, args.permutations, args.seed, args.alpha, tuple(args.families))
            for r in range(replicates)
        ]
        start = time.perf_counter()
        with ProcessPoolExecutor(args.jobs, initializer=_one_thread) as pool:
            done = list(pool.map(_replicate, tasks, chunksize=4))
        results = pd.concat([tests for tests, _ in done], ignore_index=True)
        covered = pd.concat([c for _, c in done], ignore_index=True)
        seconds = time.perf_counter() - start
        if "levels" in parts:
            if reported is not None:
                results = results[results["test"].isin(reported)]
            table = rates(results, args.alpha)
            print(
                f"== levels, {name}: {replicates} data sets, {args.permutations} permutations each, {seconds:.0f} s; "
                f"rejection rate at alpha {args.alpha} (95% interval) among the data sets where the row is "
                "testable (share testable)" + ("" if power else ", tests whose own null holds")
            )
            outside = 0
            for _, r in table.iterrows():
                if r["n"] == 0:
                    continue  # never testable: no mark to judge
                exact = not power and not np.isnan(r["exact_level"])
                judged = not power and (exact or r["n"] >= MIN_JUDGED)
                flag = level_flag(r["exact_level"] if exact else r["rate"], args.alpha) if judged else ""
                disagree = exact and r["agreement_p"] < AGREEMENT_ALPHA
                outside += bool(flag) or disagree
                note = _level_note(flag, args.alpha) if judged or power else f"  (n < {MIN_JUDGED}: not judged)"
                if exact:
                    note = f"  exact level {r['exact_level']:.3f} (rejections agree: p {r['agreement_p']:.2f})" + note
                    note += f"  <- the rejections disagree with the exact level (p < {AGREEMENT_ALPHA})" * disagree
                print(
                    f"  {r['test']:<26} {r['metric']:<5} {r['scope']:<13} n={r['n']:<5} testable {r['testable']:.3f} "
                    f"{r['rate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]{note}"
                )
            if not power:
                flagged += outside
                print(f"  tests with a level outside {_band(args.alpha)} or disagreeing: {outside} of {len(table)}\n")
        if "coverage" in parts and len(covered) and not power:
            table = coverages(covered)
            print(f"== coverage, {name}: {replicates} data sets; coverage of the true value (95% interval)")
            for _, r in table.iterrows():
                width = f" median width {r['median width']:.3g}" if r["coverage"] > 0.97 else ""
                exact = not np.isnan(r["exact"])  # a true 0 covered exactly when the exact test does not reject
                judged = exact or r["n"] >= MIN_JUDGED
                coverage = r["exact"] if exact else r["coverage"]
                flagged += judged and coverage_flag(coverage, args.alpha)
                note = _coverage_note(coverage, args.alpha) if judged else f"  (n < {MIN_JUDGED}: not judged)"
                note = f"  exact coverage {r['exact']:.3f}" * exact + note
                print(
                    f"  {r['interval']:<32} {r['metric']:<6} {r['scope']:<13} n={r['n']:<5} "
                    f"{r['coverage']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]{width}{note}"
                )
            print()
    return flagged


def pairs_part(args) -> int:
    """The CrowS-Pairs levels and coverages, exact (those of pairs clustered by writer simulated on the real
    writers)."""
    real = shared_file("crows_pairs", "crows_pairs_anonymized.csv")
    sizes = None
    if real is not None:
        sizes = pd.read_csv(real)["anon_writer"].value_counts().to_numpy()
    start = time.perf_counter()
    levels, coverage = pairs_tables(
        args.alpha, cluster_sizes=sizes, replicates=args.replicates, seed=args.seed, sizes=tuple(args.pair_sizes)
    )
    clusters = f"on the real writers, {args.replicates} simulated data sets" if sizes is not None else "skipped"
    print(
        f"== CrowS-Pairs, exact ({time.perf_counter() - start:.0f} s; the tests and interval of pairs clustered by "
        f"writer {clusters})"
    )
    print("  level at alpha, among the data sets where the row is testable (share testable):")
    flagged = 0
    for _, r in levels.iterrows():
        rate = "" if np.isnan(r["rate"]) else f"{r['rate']:.3f}"
        compared = r.get("compared") is True  # shown beside the row's test, not used where writers are known
        flag = "" if r["testable"] < 1e-3 else level_flag(r["rate"], args.alpha)
        flagged += bool(flag) and not compared
        note = "  (what taking the pairs as independent would claim: not the test where writers are known)"
        print(
            f"  {r['test']:<46} n={r['n']:<5} {r['scenario']:<24} testable {r['testable']:.4f} {rate}"
            f"{note if compared and flag else _level_note(flag, args.alpha)}"
        )
    print(
        "  the paired change's size given m moved pairs (exact; the hypotheses leave a size outside "
        f"{_band(args.alpha)} untestable, * below):"
    )
    sizes = [(m, paired_change_size(m, alpha=args.alpha)) for m in range(5, 61)]
    for start in range(0, len(sizes), 8):
        print(
            "   "
            + "".join(
                f" m={m:<3} {size:.3f}{'*' if level_flag(size, args.alpha) else ' '}"
                for m, size in sizes[start : start + 8]
            )
        )
    print("  coverage at 1 - alpha, and the interval's median width (percentage points):")
    for _, r in coverage.iterrows():
        width = f" width {r['width']:.3g}" if "width" in r and not pd.isna(r.get("width")) else ""
        flagged += coverage_flag(r["coverage"], args.alpha)
        print(
            f"  {r['interval']:<36} n={r['n']:<5} {r['scenario']:<40} {r['coverage']:.4f}{width}"
            f"{_coverage_note(r['coverage'], args.alpha)}"
        )
    print()
    return flagged


# true logits of the decisive share of 5 models (rows) under 4 protocols (columns), by scenario
RANKING_SCENARIOS = {
    "far apart": np.log(np.array([0.5, 0.56, 0.62, 0.68, 0.74]) / (1 - np.array([0.5, 0.56, 0.62, 0.68, 0.74])))[
        :, None
    ]
    + np.array([0.0, 0.05, -0.05, 0.1]),
    "close": np.array([0.0, 0.04, 0.08, 0.12, 0.16])[:, None] + np.array([0.0, 0.02, -0.02, 0.05]),
    "reordered by one protocol": np.column_stack(
        [
            np.linspace(0, 0.96, 5),
            np.linspace(0, 0.96, 5) + 0.05,
            np.linspace(0, 0.96, 5) - 0.05,
            np.linspace(0.96, 0, 5),
        ]
    ),
    # every model the same under every protocol: the population's W is undefined (every rater ties every item)
    "equal models": np.zeros((5, 4)),
}


def robustness_part(args) -> int:
    """The CrowS-Pairs robustness statements' error rates (:mod:`calibration_robustness`)."""
    real = shared_file("crows_pairs", "crows_pairs_anonymized.csv")
    designs = [(f"{n} pairs", n, None) for n in args.pair_sizes]
    if real is not None and args.writers:
        sizes = pd.read_csv(real)["anon_writer"].value_counts().to_numpy()
        designs.append((f"{len(sizes)} real writers, sd 0.5", int(sizes.sum()), sizes))
    start = time.perf_counter()
    print(
        f"== CrowS-Pairs robustness statements: {args.robustness_replicates} simulated data sets per row, "
        f"{args.bootstrap} bootstrap resamples, a family of one"
    )
    print("  design                       scenario             K  robust  differs  fragile (old)  primary rejects")
    flagged = 0
    for label, n, sizes in designs:
        for scenario, mu in (("no effect", 0.0), ("uniform, share ~60%", 0.25)):
            rates = robustness_rates(
                n,
                mu,
                replicates=args.robustness_replicates,
                bootstrap=args.bootstrap,
                seed=args.seed,
                alpha=args.alpha,
                writer_sizes=sizes,
                writer_sd=0.5 if sizes is not None else 0.0,
            )
            # false claims: robust at no effect, a difference anywhere (no specification differs)
            errors = [rates["differs"]] + ([rates["robust"]] if mu == 0 else [])
            flag = any(level_flag(e, args.alpha) == "above" for e in errors)
            flagged += flag
            print(
                f"  {label:<28} {scenario:<20} {rates['specifications']:<3} {rates['robust']:.3f}   "
                f"{rates['differs']:.3f}    {rates['fragile (old rule)']:.3f}          {rates['primary rejects']:.3f}"
                f"{'  <- above ' + _band(args.alpha) if flag else ''}"
            )
    design, source = mozart_design("demo")
    print(
        f"  cloze sets, {source} ({design['u_id'].nunique()} annotators, each one's removal a specification: the "
        f"real design's would take ten times as long), {args.permutations} permutations; no 'differs' test (the "
        "metrics' sigma_gd are on different scales)"
    )
    print("  scenario                      K   robust  fragile (old)  primary rejects")
    for scenario, shift in (
        ("no effect", {}),
        (f"non-natives down {args.effect:g}", dict.fromkeys(NON_NATIVES, -args.effect)),
    ):
        rates = cloze_rates(
            lambda rng, shift=shift: simulate(design, rng, shift=shift),
            replicates=args.robustness_replicates,
            permutations=args.permutations,
            seed=args.seed,
            alpha=args.alpha,
        )
        flag = not shift and level_flag(rates["robust"], args.alpha) == "above"
        flagged += flag
        print(
            f"  {scenario:<29} {rates['specifications']:<3} {rates['robust']:.3f}   {rates['fragile (old rule)']:.3f}"
            f"          {rates['primary rejects']:.3f}{'  <- above ' + _band(args.alpha) if flag else ''}"
        )
    print(f"  ({time.perf_counter() - start:.0f} s)\n")
    return flagged


def ranking_part(args) -> int:
    """The coverage of Kendall's W's conservative interval (crows_pairs_ranking_agreement) on simulated pairs,
    and the W of the measured shares beside the population's: sampling noise pulls it below a true W of 1, and
    it takes any value where the models are equal (W undefined), so the table prints the interval only."""
    rng = np.random.default_rng([args.seed, 11])
    start = time.perf_counter()
    print(
        f"== CrowS-Pairs ranking agreement: Kendall's W of 4 protocols ranking 5 models, conservative interval "
        f"from the shares' simultaneous intervals, {args.ranking_replicates} simulated data sets per row"
    )
    flagged = 0
    for name, logits in RANKING_SCENARIOS.items():
        truth = float(kendalls_w(logits))
        for pairs in (300, 1677):
            covered, widths, measured, lows, highs = 0, [], [], [], []
            for _ in range(args.ranking_replicates):
                latent = logits[None] + rng.normal(size=(pairs, 1, 1))
                preferring = (rng.random(latent.shape) < expit(latent)).sum(axis=0)
                decisive = np.full(preferring.shape, pairs)
                w, low, high = ranking_agreement(decisive, preferring, confidence=1 - args.alpha)
                covered += low - 1e-12 <= truth <= high + 1e-12
                widths.append(high - low)
                measured.append(w)
                lows.append(low)
                highs.append(high)
            spread = f"measured W {np.nanquantile(measured, 0.05):.2f}-{np.nanquantile(measured, 0.95):.2f}"
            if not np.isfinite(truth):  # no population W to cover: what the interval and the point say
                print(
                    f"  {name:<26} true W undefined n={pairs:<5} median interval [{np.nanmedian(lows):.2f}, "
                    f"{np.nanmedian(highs):.2f}]  {spread} (5%-95%)"
                )
                continue
            coverage = covered / args.ranking_replicates
            flagged += coverage_flag(coverage, args.alpha)
            print(
                f"  {name:<26} true W {truth:.3f}  n={pairs:<5} coverage {coverage:.3f} median width "
                f"{np.median(widths):.3f}  {spread} (5%-95%){_coverage_note(coverage, args.alpha)}"
            )
    print(f"  ({time.perf_counter() - start:.0f} s)\n")
    return flagged


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--parts",
        nargs="*",
        default=["levels", "coverage", "pairs", "robustness", "ranking"],
        choices=["levels", "coverage", "pairs", "robustness", "ranking"],
    )
    ap.add_argument("--design", choices=["real", "demo"], default="real", help="MozArt's real design or the demo's")
    ap.add_argument("--replicates", type=int, default=400, help="simulated data sets per null scenario")
    ap.add_argument("--power-replicates", type=int, default=200, help="simulated data sets with the planted effect")
    ap.add_argument("--permutations", type=int, default=499)
    ap.add_argument("--effect", type=float, default=0.5, help="shift of the moved groups' latent score (logit)")
    ap.add_argument("--scenarios", nargs="*", default=None, help="run only these scenarios (names as printed)")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument(
        "--families",
        nargs="*",
        default=list(FAMILIES),
        choices=list(FAMILIES),
        help="run only these families of tests (default: every one; the simulated data do not depend on it)",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="processes (each replicate is seeded on its own, so the figures do not depend on this)",
    )
    ap.add_argument("--lmm", type=int, default=0, help="also fit the crossed mixed model on this many data sets")
    ap.add_argument(
        "--logit-check",
        type=int,
        default=0,
        help="compare the pooled hit1 mixed model with lme4's logistic glmer on this many data sets (needs R)",
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--pair-sizes", type=int, nargs="*", default=list(SIZES), help="CrowS-Pairs data set sizes of the exact part"
    )
    ap.add_argument("--robustness-replicates", type=int, default=200, help="simulated data sets per robustness row")
    ap.add_argument("--bootstrap", type=int, default=1999, help="the robustness job's resamples (robustness.bootstrap)")
    ap.add_argument(
        "--writers", action=argparse.BooleanOptionalAction, default=True, help="the robustness rows on the real writers"
    )
    ap.add_argument("--ranking-replicates", type=int, default=200, help="simulated data sets per ranking row")
    args = ap.parse_args()
    parts = set(args.parts)

    flagged = 0
    if parts & {"levels", "coverage"}:
        design, source = mozart_design(args.design)
        groups = design.groupby(["lang", "group"])["u_id"].nunique().unstack()[list(GROUPS)]
        print(
            f"design: {source}: {len(design)} annotations, {design['u_id'].nunique()} annotator ids; annotators "
            f"per language and group:\n{groups.to_string()}"
        )
        sample = simulate(design, np.random.default_rng(args.seed))
        print(
            f"simulated rates at no effect: P@1 {100 * sample['hit1'].mean():.1f}%, P@5 "
            f"{100 * sample['hit5'].mean():.1f}%, MRR {100 * sample['rr'].mean():.1f}%\n"
        )
        flagged += cloze_part(args, design, parts)
    if "pairs" in parts:
        flagged += pairs_part(args)
    if "robustness" in parts:
        flagged += robustness_part(args)
    if "ranking" in parts:
        flagged += ranking_part(args)
    floor = 1 - LEVEL_BAND[1] * args.alpha
    print(f"rows flagged (a level outside {_band(args.alpha)}, a coverage below {floor:g}): {flagged}")

    if args.lmm:
        design, _ = mozart_design(args.design)
        start = time.perf_counter()
        wald = []
        rng = np.random.default_rng(args.seed)
        for _ in range(args.lmm):
            effects = group_effects(simulate(design, rng), metrics=("rr",))
            wald.append(effects[effects["term"].str.startswith("group[") & (effects["lang"] != "all")])
        wald = pd.concat(wald, ignore_index=True)
        s = binomial_summary(int((wald["p_value"] < args.alpha).sum()), len(wald))
        print(
            f"== crossed mixed model, Wald z, rr, per language, no effect: {len(wald)} tests, "
            f"{time.perf_counter() - start:.0f} s: rate {s.proportion:.3f} [{s.ci_low:.3f}, {s.ci_high:.3f}]; "
            f"converged {100 * wald['converged'].mean():.0f}%"
        )
    if args.logit_check:
        design, _ = mozart_design(args.design)
        logit_check(design, replicates=args.logit_check, effect=args.effect, seed=args.seed, alpha=args.alpha)
    return 0


if __name__ == "__main__":
    sys.exit(main())
