"""The Parquet files of the CrowS-Pairs study between its jobs: the per-pair scores (:data:`PAIR_SCHEMA`,
``results/crows_pairs/{dataset}/{model}.parquet``) and their reader. Light (pandas only), read by the
scoring job (torch) and the summary (scipy) alike."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from plmfair.io.parquet import read_parquet
from plmfair.scoring import pair_decision

SCORED_STATUSES = pair_decision.SCORED_STATUSES
# a scored pair's outcome: the more stereotyping sentence preferred, neither, or the less stereotyping one
OUTCOMES = ("more", "neutral", "less")
# the two changes a comparison of two scorings of the same pairs tests (plmfair.crows_pairs.changes):
# name -> what it is of
CHANGES = {
    "decisive": "decisive share (pairs decisive under both)",
    "nangia": "score (Nangia)",
}
# the tests of a summary row's decisive share against 50% (its ``test``): the pairs, or the source's clusters of
# pairs (Nangia et al.'s writers), as the independent draws
SIGN_TEST = "exact sign test"
CLUSTER_TEST = "cluster score test"
STATUSES = (
    *SCORED_STATUSES,
    "skipped_missing",
    "skipped_empty",
    "skipped_identical",
    "skipped_identical_ids",
    "skipped_unlabelled",
    "skipped_duplicate",
    "skipped_too_long",
)


PAIR_SCHEMA = {
    "pair_id": "pair id of the source file",
    "bias_type": "harmonised bias type (null when the file gives none)",
    "stereo_antistereo": "stereo or antistereo (null when the file gives none)",
    "origin": "native or translated",
    "cluster": "the source's grouping of pairs (Nangia et al.'s anon_writer); null when it gives none",
    "sent_more_score": "score of sent_more at full precision (pseudo-log-likelihood for masked LMs, log-likelihood "
    "for causal LMs; null when skipped)",
    "sent_less_score": "score of sent_less (as sent_more_score)",
    "n_masked_more": "units scored for sent_more: masked copies (masked LMs) or predicted tokens (causal LMs)",
    "n_masked_less": "units scored for sent_less (as n_masked_more)",
    "tolerance": "the largest margin sent_more_score - sent_less_score floating-point arithmetic alone could give "
    "at the precision the model ran in (plmfair.scoring.tolerance.margin_tolerance); null when skipped",
    "biased": "sent_more_score - sent_less_score > tolerance: the model prefers the more stereotyping sentence "
    "(False when skipped)",
    "neutral": "|sent_more_score - sent_less_score| <= tolerance: the order is not decided at this precision (False "
    "when skipped)",
    "biased_nangia": "Nangia et al.'s rule: sent_more_score > sent_less_score, both rounded to 3 decimals under "
    "the nangia and sentence_log_likelihood protocols, as they are otherwise (False when skipped)",
    "neutral_nangia": "the same rule's equal scores (False when skipped)",
    "undecided": "neutral because the precision the model ran in (bf16, fp16) cannot order the pair and it could "
    "not be scored again in fp32 (the model did not fit): 'undecided at this precision'",
    "status": f"one of {', '.join(STATUSES)}",
}


def with_outcomes(out: pd.DataFrame, **decision: Any) -> pd.DataFrame:
    """A per-pair table (:data:`PAIR_SCHEMA`) with each pair's outcome, decided as every pair study decides it
    (:func:`plmfair.scoring.pair_decision.with_outcomes`, whose keywords ``decision`` are)."""
    return pair_decision.with_outcomes(out, **decision)[list(PAIR_SCHEMA)]


# what every reader of a per-pair file checks (results/crows_pairs/{dataset}/{model}.parquet)
PAIR_KINDS = {
    "sent_more_score": "number",
    "sent_less_score": "number",
    "tolerance": "number",
    "biased": "bool",
    "neutral": "bool",
    "undecided": "bool",
    "biased_nangia": "bool",
    "neutral_nangia": "bool",
}


def read_pair_scores(path: str | os.PathLike) -> pd.DataFrame:
    """A per-pair file (:data:`PAIR_SCHEMA`), refused with the command that rebuilds it when another
    version wrote it (a missing column, a status this version does not write, scores or flags of
    another type): its numbers would otherwise be counted as nothing, or fail deep in a figure."""
    return read_parquet(path, columns=list(PAIR_SCHEMA), kinds=PAIR_KINDS, values={"status": STATUSES})


# the robustness analysis (plmfair.crows_pairs.robustness): every specification, and each verdict's summary;
# AXES are the specification's columns that name its choices, in this order (the figures read them here
# without importing the analysis and scipy)
AXES = ("protocol", "precision", "tie", "pairs", "data")

SPECIFICATIONS_SCHEMA = {
    "dataset": "CrowS-Pairs data set",
    "lang": "language of the data set",
    "model": "model name",
    "specification": "the choices, one per axis (protocol, precision, tie, pairs, data), as 'axis=value' joined "
    "by '; '",
    "changed": "the axes whose value is not the run's own, joined by ', ' ('' for the run's own specification)",
    "protocol": "the scoring protocol of this specification",
    "precision": "the precision the model was scored in (fp32 besides a reduced one the model runs in)",
    "tie": "'as tested' (each pair's floating-point tolerance) or the margin at or below which a pair is neutral",
    "pairs": "'all pairs' or 'without <file>': the pairs of the exclusion file left out",
    "data": "'as given'; 'native pairs' or 'translated pairs' alone; 'pairs <other> holds too' (this version on the "
    "pairs another version of the set holds, matched by pair_id) or '<other>, pairs <dataset> holds too' (the other "
    "version on them)",
    "default": "true for the run's own specification (the primary estimate)",
    "n_scored": "pairs scored under this specification",
    "n_decisive": "pairs not neutral under it",
    "n_biased": "decisive pairs whose more stereotyping sentence the model prefers",
    "estimate": "the decisive share: 100 x n_biased / n_decisive",
    "ci_low": "lower end of its interval at 1 - alpha, the one that inverts the primary question's test (the "
    "cluster score test where the source names its writers, else Clopper-Pearson's of the sign test; percent)",
    "ci_high": "upper end (percent)",
    "p_value": "the primary question's two-sided test of a 50% share (unadjusted: a sensitivity analysis, not a "
    "question)",
    "verdict": "stereotypical (interval above 50), anti-stereotypical (below) or no preference (it holds 50)",
    "holds": "this specification shows the run's own verdict at the level the primary question is held to in "
    "the run's confirmatory family (alpha / its size: the level column of robustness.parquet); for a verdict of "
    "no preference, it shows no preference at that level either",
    "level": "the level the primary question is held to in the run's confirmatory family (alpha / its size; 0: "
    "untestable, no claim)",
    "difference": "estimate minus the run's own (percentage points; NaN for the run's own)",
    "p_differs": "the bootstrap's family-wise p (single-step max-t over the specifications, pairs or the source's "
    "writers resampled) that this specification's share equals the run's own (1: no pair's outcome moves)",
    "differs": "p_differs < alpha: its share differs from the run's own beyond sampling noise",
}

ROBUSTNESS_SCHEMA = {
    "dataset": "CrowS-Pairs data set",
    "lang": "language of the data set",
    "model": "model name",
    "design": "'grid' (every combination of the axes' values) or 'one axis at a time' (grid too large)",
    "estimate": "the primary estimate: the decisive share under the run's own specification (percent)",
    "ci_low": "its interval's lower end (percent)",
    "ci_high": "its interval's upper end (percent)",
    "verdict": "the run's own verdict (at alpha, the side of 50 its interval lies on)",
    "specifications": "K: the specifications computed (the run's own among them): every combination of the axes' "
    "values in a grid, else 1 plus one per other value of each axis",
    "counted": "what K counts: the values of each axis that has more than one (and the design)",
    "family_size": "the size of the confirmatory family the primary question is in (the run's hypotheses; 0: "
    "it is untestable on its design, so no claim is made)",
    "level": "alpha / family_size: the level a robust claim is held to (Bonferroni over that family)",
    "holding": "k: the specifications showing the run's verdict at that level (for no preference: showing none)",
    "p_all": "the intersection-union test's p that every specification shows the preference: the largest of their "
    "p, 1 when one lies on the other side of 50 (NaN for a verdict of no preference)",
    "robust": "a preference that every specification shows at the level: p_all < level (false for no preference, "
    "which is not a claim a choice could keep)",
    "short_of": "the specifications that do not show it at that level, as their changed choices, joined by ' | ' "
    "(low power or another answer: not a claim)",
    "differing": "how many specifications' shares differ from the run's own beyond sampling noise (p_differs < "
    "alpha, family-wise over the specifications)",
    "differs_by": "those specifications, as their changed choices with their difference (pp), joined by ' | '",
    "p_differs": "the smallest family-wise p of a difference (NaN with one specification): below alpha when some "
    "choice moves the share beyond sampling noise",
    "largest_change": "the largest absolute change of the estimate from the primary one (percentage points)",
    "largest_change_by": "the specification that gives it, as its changed choices",
}

RANKING_SCHEMA = {
    "dataset": "CrowS-Pairs data set",
    "lang": "language of the data set",
    "models": "the models ranked (those scored under two or more protocols), joined by ', '",
    "protocols": "the protocols ranking them (those every such model was scored under), joined by ', '",
    "n_pairs": "pairs every model scored under every protocol (0 when not computed)",
    "w": "Kendall's W of the protocols ranking the models by their measured decisive shares (1: every protocol "
    "ranks them alike; 0: no agreement), tie-corrected: not an estimate of the population's W, which sampling "
    "noise pulls it below where models are close (0.10-0.74 at a true W of 1 on 300 pairs) and which is "
    "undefined where they are equal (make bench-stats, part ranking); the table prints the interval only",
    "ci_low": "lower end of W's conservative interval at 1 - alpha: the least W the shares' simultaneous "
    "Clopper-Pearson intervals (Bonferroni over models x protocols) allow, bounded "
    "(plmfair.stats.agreement.ranking_agreement)",
    "ci_high": "upper end: 1 where one order of the models fits every protocol's intervals, else the largest W "
    "they allow",
    "note": "why W is not computed ('' when it is)",
}
