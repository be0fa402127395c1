"""Calibration of the group tests on MozArt's real design: false positives under no group effect,
and power with one planted.

The design is MozArt's own (every language's sentences, annotators and their groups, from the
real MozArt.zip in $PLMFAIR_SHARED_DATA or ../shared/data). Each simulated data set keeps it and
draws each annotation's outcome from a latent score: a sentence effect and an annotator effect
(heterogeneity, on the logit scale) plus, under the alternative, a planted gap for the
non-native groups; the latent score plus logistic noise falls between thresholds that give the
answer's rank in the model's top 5 (or none), hence ``rr`` and ``hit1`` with MozArt-like rates
(P@1 about 12%). Every test the tables mark (permutation tests: each group's gap to MN, the
omnibus, the 2 x 2 contrasts, group x language on the pooled languages, win/loss net wins) is
run on every data set, and its rejection rate at alpha (unadjusted) is printed with its 95%
Wilson interval; ``--lmm N`` also fits the crossed mixed model on N data sets and reports the
rate of its Wald tests (not marked: for comparison).

    python benchmarks/bench_stats.py [--replicates 1000] [--permutations 999] [--effect 0.5] [--lmm 100]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from shared_data import shared_file  # benchmarks/shared_data.py, beside this script

from plmfair.annotations import GROUPS, read_mozart_zip
from plmfair.group_tests import group_effects, group_tests, group_winloss
from plmfair.stats import binomial_summary

REPO = Path(__file__).resolve().parents[1]
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


def simulate(design: pd.DataFrame, rng: np.random.Generator, *, effect: float, sentence_sd: float = 1.0,
             annotator_sd: float = 0.5) -> pd.DataFrame:
    """Annotation scores on ``design``: non-native annotators' latent score shifted by ``-effect``."""
    sentence = design["lang"] + ":" + design["s_id"]
    annotator = design["lang"] + ":" + design["u_id"]
    s_codes, s_levels = pd.factorize(sentence)
    a_codes, a_levels = pd.factorize(annotator)
    latent = (rng.normal(0, sentence_sd, len(s_levels))[s_codes] + rng.normal(0, annotator_sd, len(a_levels))[a_codes]
              - effect * design["group"].str.endswith("NN").to_numpy() + rng.logistic(size=len(design)))
    rank = 1 + (latent[:, None] <= THRESHOLDS[None, :]).sum(axis=1)
    rank = np.where(rank <= len(THRESHOLDS), rank, 0)  # 0: not in the top 5
    rr = np.where(rank > 0, 1.0 / np.maximum(rank, 1), 0.0)
    return design.assign(model="sim", rr=rr, hit1=(rank == 1).astype(int))


def marked_tests(scores: pd.DataFrame, *, permutations: int, seed: int) -> pd.DataFrame:
    """(test, metric, lang, p) of every permutation test the tables mark."""
    gaps, tests = group_tests(scores, permutations=permutations, seed=seed)
    wl = group_winloss(scores, permutations=permutations, seed=seed)
    rows = [gaps.assign(test="gap " + gaps["term"].str.slice(8, -1) + " vs MN")[["test", "metric", "lang",
                                                                                  "p_permutation"]],
            tests[["test", "metric", "lang", "p_permutation"]],
            wl.assign(test="win/loss " + wl["group_a"] + " vs " + wl["group_b"])[["test", "metric", "lang",
                                                                                 "p_permutation"]]]
    out = pd.concat(rows, ignore_index=True)
    out["scope"] = np.where(out["lang"] == "all", "pooled", "per language")
    return out.dropna(subset=["p_permutation"])


def rates(results: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Rejection rate per (test, metric, scope) with its Wilson 95% interval."""
    rows = []
    for (test, metric, scope), g in results.groupby(["test", "metric", "scope"], sort=False):
        k, n = int((g["p_permutation"] < alpha).sum()), len(g)
        s = binomial_summary(k, n)
        rows.append({"test": test, "metric": metric, "scope": scope, "n": n, "rate": s.proportion,
                     "ci_low": s.ci_low, "ci_high": s.ci_high})
    return pd.DataFrame(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replicates", type=int, default=1000, help="simulated data sets under no group effect")
    ap.add_argument("--power-replicates", type=int, default=200, help="simulated data sets with the planted effect")
    ap.add_argument("--permutations", type=int, default=999)
    ap.add_argument("--effect", type=float, default=0.5, help="planted shift of non-natives' latent score (logit)")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--lmm", type=int, default=0, help="also fit the crossed mixed model on this many data sets")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    design, source = mozart_design()
    rng = np.random.default_rng(args.seed)
    groups = design.groupby(["lang", "group"])["u_id"].nunique().unstack()[list(GROUPS)]
    print(f"design: {source}: {len(design)} annotations, {design['u_id'].nunique()} annotator ids; annotators per "
          f"language and group:\n{groups.to_string()}")
    sample = simulate(design, rng, effect=0.0)
    print(f"simulated rates at no effect: P@1 {100 * sample['hit1'].mean():.1f}%, P@5 "
          f"{100 * (sample['rr'] > 0).mean():.1f}%, MRR {100 * sample['rr'].mean():.1f}%\n")

    for label, effect, replicates in (("no group effect (false positives)", 0.0, args.replicates),
                                      (f"non-natives shifted by -{args.effect} (power)", args.effect,
                                       args.power_replicates)):
        start = time.perf_counter()
        results = pd.concat([marked_tests(simulate(design, rng, effect=effect), permutations=args.permutations,
                                          seed=args.seed + r) for r in range(replicates)], ignore_index=True)
        table = rates(results, args.alpha)
        print(f"== {label}: {replicates} data sets, {args.permutations} permutations each, "
              f"{time.perf_counter() - start:.0f} s; rejection rate at alpha {args.alpha} (95% interval)")
        for _, r in table.iterrows():
            print(f"  {r['test']:<28} {r['metric']:<5} {r['scope']:<13} n={r['n']:<5} "
                  f"{r['rate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]")
        if effect == 0.0:
            outside = table[(table["rate"] < 0.03) | (table["rate"] > 0.07)]
            print(f"  marked tests with a rate outside [0.03, 0.07]: {len(outside)} of {len(table)}\n")

    if args.lmm:
        start = time.perf_counter()
        wald = []
        for _ in range(args.lmm):
            effects, _ = group_effects(simulate(design, rng, effect=0.0), permutations=99, metrics=("rr",))
            wald.append(effects[effects["term"].str.startswith("group[") & (effects["lang"] != "all")])
        wald = pd.concat(wald, ignore_index=True)
        s = binomial_summary(int((wald["p_value"] < args.alpha).sum()), len(wald))
        print(f"== crossed mixed model, Wald z (not marked), rr, per language, no effect: {len(wald)} tests, "
              f"{time.perf_counter() - start:.0f} s: rate {s.proportion:.3f} [{s.ci_low:.3f}, {s.ci_high:.3f}]; "
              f"converged {100 * wald['converged'].mean():.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
