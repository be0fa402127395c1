"""Calibration of the group tests on MozArt's real design: false positives under the full null and
under partial nulls (some groups differ, the tested contrast does not), and power with a planted gap.

The design is MozArt's own (every language's sentences, annotators and their groups, from the
real MozArt.zip in $PLMFAIR_SHARED_DATA or ../shared/data). Each simulated data set keeps it and
draws each annotation's outcome from a latent score: a sentence effect and an annotator effect
(heterogeneity, on the logit scale) plus the scenario's shift of some groups; the latent score
plus logistic noise falls between thresholds that give the answer's rank in the model's top 5
(or none), hence ``rr``, ``hit1`` and ``hit5`` with MozArt-like rates (P@1 about 10%). Every
marked test (the sentence-adjusted gaps to MN, the omnibus, the 2 x 2 contrasts, group x language
on the pooled languages, win/loss net wins, the permutation test of sigma_gd) is run on every data
set exactly as the jobs run it, and, per scenario, the rejection rate at alpha (unadjusted) of
every test whose own null holds in that scenario is printed with its 95% Wilson interval and
flagged outside [0.03, 0.07]; the power scenario prints the rate of the tests of the planted
effect. ``--lmm N`` also fits the crossed mixed model on N data sets with no effect and reports
the rate of its Wald tests; ``--logit-check N`` fits, on N data sets with the non-natives shifted,
the workflow's pooled linear mixed model of hit1 and lme4's logistic ``glmer`` (R, when
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

    python benchmarks/bench_stats.py [--replicates 400] [--permutations 499] [--effect 0.5] [--jobs 2] [--lmm 100]
                                     [--logit-check 50]
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
from shared_data import shared_file  # benchmarks/shared_data.py, beside this script
from threadpoolctl import threadpool_limits

from plmfair.cloze.annotations import GROUPS, read_mozart_zip
from plmfair.cloze.group_tests import (
    group_disparity,
    group_effects,
    group_gaps,
    group_tests,
    group_winloss,
)
from plmfair.stats import binomial_summary

REPO = Path(__file__).resolve().parents[1]
# the result files whose tests the run's analysis plan marks, each a test whose level this benchmark shows
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


def mozart_design() -> tuple[pd.DataFrame, str]:
    """(lang, s_id, u_id, group) of every real MozArt annotation, and where it came from."""
    real = shared_file("mozart", "MozArt.zip")
    if real is not None:
        ann = read_mozart_zip(real, LANGS)
        return ann[["lang", "s_id", "u_id", "group"]].reset_index(drop=True), "the real MozArt design"
    ann = read_mozart_zip(REPO / ".test" / "data" / "MozArt.zip", LANGS)
    return ann[["lang", "s_id", "u_id", "group"]].reset_index(drop=True), "the demo's MozArt design (real data absent)"


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


def _gaps(scores, permutations, seed):
    gaps = group_gaps(scores, cloze_set="t", permutations=permutations, seed=seed)
    return gaps.assign(test="gap " + gaps["group"] + " vs " + gaps["reference"])


def _winloss(scores, permutations, seed):
    wl = group_winloss(scores, cloze_set="t", permutations=permutations, seed=seed)
    return wl.assign(test="win/loss " + wl["group_a"] + " vs " + wl["group_b"])


def _disparity(scores, permutations, seed):
    disparity = group_disparity(scores, cloze_set="t", permutations=permutations, seed=seed)
    return disparity.assign(test="disparity " + disparity["metric"], metric="-")


# the marked tests by family (each a table of the workflow): --families runs some of them only
FAMILIES = {
    "gaps": _gaps,
    "tests": lambda scores, permutations, seed: group_tests(
        scores, cloze_set="t", permutations=permutations, seed=seed
    ),
    "winloss": _winloss,
    "disparity": _disparity,
}


def marked_tests(scores: pd.DataFrame, *, permutations: int, seed: int, families=tuple(FAMILIES)) -> pd.DataFrame:
    """(test, metric, lang, p) of every permutation test the tables and figures mark (of ``families``)."""
    rows = [FAMILIES[family](scores, permutations, seed) for family in families]
    out = pd.concat([r[["test", "metric", "lang", "p_permutation"]] for r in rows], ignore_index=True)
    out["scope"] = np.where(out["lang"] == "all", "pooled", "per language")
    return out.dropna(subset=["p_permutation"])


def _one_thread() -> None:
    """A worker's numerical libraries on one thread: the replicates already fill the cores, and
    threaded least squares in each worker oversubscribed them several times over."""
    threadpool_limits(1)


def _replicate(task) -> pd.DataFrame:
    """One simulated data set of a scenario and its tests (a task of its own, for a process pool)."""
    design, scenario, index, r, shift, by_sentence, permutations, seed, families = task
    rng = np.random.default_rng([seed, index, r])
    scores = simulate(design, rng, shift=shift, by_sentence=by_sentence)
    return marked_tests(scores, permutations=permutations, seed=seed + r, families=families).assign(scenario=scenario)


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
    """Rejection rate per (test, metric, scope) with its Wilson 95% interval."""
    rows = []
    for (test, metric, scope), g in results.groupby(["test", "metric", "scope"], sort=False):
        k, n = int((g["p_permutation"] < alpha).sum()), len(g)
        s = binomial_summary(k, n)
        rows.append(
            {
                "test": test,
                "metric": metric,
                "scope": scope,
                "n": n,
                "rate": s.proportion,
                "ci_low": s.ci_low,
                "ci_high": s.ci_high,
            }
        )
    return pd.DataFrame(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    args = ap.parse_args()

    design, source = mozart_design()
    groups = design.groupby(["lang", "group"])["u_id"].nunique().unstack()[list(GROUPS)]
    print(
        f"design: {source}: {len(design)} annotations, {design['u_id'].nunique()} annotator ids; annotators per "
        f"language and group:\n{groups.to_string()}"
    )
    sample = simulate(design, np.random.default_rng(args.seed))
    print(
        f"simulated rates at no effect: P@1 {100 * sample['hit1'].mean():.1f}%, P@5 "
        f"{100 * sample['hit5'].mean():.1f}%, MRR {100 * sample['rr'].mean():.1f}%\n"
    )

    outside_total = 0
    for index, (name, (shift, by_sentence, reported)) in enumerate(scenarios(args.effect).items()):
        if args.scenarios and name not in args.scenarios:
            continue
        power = name.startswith("power")
        replicates = args.power_replicates if power else args.replicates
        tasks = [
            (design, name, index, r, shift, by_sentence, args.permutations, args.seed, tuple(args.families))
            for r in range(replicates)
        ]
        start = time.perf_counter()
        with ProcessPoolExecutor(args.jobs, initializer=_one_thread) as pool:
            results = pd.concat(pool.map(_replicate, tasks, chunksize=4), ignore_index=True)
        if reported is not None:
            results = results[results["test"].isin(reported)]
        table = rates(results, args.alpha)
        print(
            f"== {name}: {replicates} data sets, {args.permutations} permutations each, "
            f"{time.perf_counter() - start:.0f} s; rejection rate at alpha {args.alpha} (95% interval)"
            + ("" if power else ", tests whose own null holds")
        )
        for _, r in table.iterrows():
            flag = "" if power or 0.03 <= r["rate"] <= 0.07 else "  <- outside [0.03, 0.07]"
            print(
                f"  {r['test']:<26} {r['metric']:<5} {r['scope']:<13} n={r['n']:<5} "
                f"{r['rate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]{flag}"
            )
        if not power:
            outside = table[(table["rate"] < 0.03) | (table["rate"] > 0.07)]
            outside_total += len(outside)
            print(f"  tests with a rate outside [0.03, 0.07]: {len(outside)} of {len(table)}\n")
    print(f"all null scenarios: {outside_total} rates outside [0.03, 0.07]")

    if args.lmm:
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
        logit_check(design, replicates=args.logit_check, effect=args.effect, seed=args.seed, alpha=args.alpha)
    return 0


if __name__ == "__main__":
    sys.exit(main())
