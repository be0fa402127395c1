"""The CrowS-Pairs study's tables and figures: each one's inputs, builder or drawer, and caption."""

from __future__ import annotations

from plmfair.crows_pairs.plan import (
    BREAKDOWNS,
    LANGUAGE_EFFECTS,
    LANGUAGE_WINLOSS,
    MCNEMAR,
    RANKING,
    ROBUSTNESS,
    SPECIFICATIONS,
    SUMMARY,
)
from plmfair.rendering.table_spec import POLICY, FigureSpec, TableSpec
from plmfair.studies import HYPOTHESES

_CROWS_UNMARKED = (
    "Nangia et al.'s rule: scores rounded to 3 decimals (nangia and sentence_log_likelihood protocols); the "
    "metric, bias-type and origin rows count a neutral pair (equal rounded scores) as not preferring the more "
    "stereotyping sentence, the stereo and anti-stereo rows leave neutral pairs out. Scores carry no mark: "
    "the test is about the decisive pairs (crows_pairs_tests). n: pairs scored; neutral: under this rule."
)
_INDEPENDENT = (
    "Test (column test): the exact sign test takes the pairs as independent draws, so its p refers to these "
    "pairs (inference conditional on the set); where the source groups its pairs (Nangia et al.'s writers, or "
    "columns.cluster in the data set's entry), the overall row's test is the cluster score test, the groups as "
    "the draws, with its own interval, and crows_pairs_robustness prints the sign test's interval beside it."
)
_ALPHA = {"alpha": "analysis.alpha"}
_SENSITIVITY = (
    "Robust: every specification shows the preference at the level the primary question is held to (alpha "
    "over its confirmatory family's size; an intersection-union test, so no further adjustment). It says the "
    "choices listed do not move the verdict, not that the verdict is right; a verdict not shown robust may only "
    "lack power under some choices. A verdict of no preference makes no claim to test. Differ beyond noise: the "
    "choices whose share differs from the run's own, family-wise over the specifications (a bootstrap of the "
    "pairs, or of the source's writers). make bench-stats, part robustness, prints both statements' error rates "
    "(docs/statistics.md, Robustness)."
)


TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        "crows_pairs",
        "crows_pairs",
        "plmfair.crows_pairs.tables:table4",
        {"summary": SUMMARY},
        "CrowS-Pairs scores (% of pairs preferring the more stereotyping sentence), Table 4 of Névéol et al. "
        "(2022), with the neutral pairs counted. " + _CROWS_UNMARKED,
        title="CrowS-Pairs scores (Table 4 of Névéol et al.)",
    ),
    TableSpec(
        "crows_pairs_origin",
        "crows_pairs",
        "plmfair.crows_pairs.tables:table5",
        {"summary": SUMMARY},
        "CrowS-Pairs metric score on native vs translated pairs, Table 5 of Névéol et al. (2022). " + _CROWS_UNMARKED,
        title="CrowS-Pairs on native vs translated pairs (Table 5 of Névéol et al.)",
    ),
    TableSpec(
        "crows_pairs_tests",
        "crows_pairs",
        "plmfair.crows_pairs.tables:crows_pairs_tests_table",
        {"summary": SUMMARY, "hypotheses": HYPOTHESES},
        "CrowS-Pairs: does a model prefer the more stereotyping sentence? Per data set, model and subset: pairs "
        "scored; neutral pairs (|margin| within its floating-point tolerance: the order is not decided); Nangia "
        "et al.'s score (their rule, unmarked); the decisive-pair share (% of the decisive pairs preferring the "
        "more stereotyping sentence), tested against 50% by the row's test, with the interval that inverts it "
        "(Clopper-Pearson for the exact sign test); the net preference (percentage points: preferred more "
        "minus preferred less, over all scored pairs, a neutral pair counting 0) with Tango's score interval "
        "(unconditional on the "
        "number of neutral pairs; it inverts the score test of the same hypothesis, so near its ends it can "
        "disagree with the row's test, whose decision the mark is). The overall row of a data set and model is "
        "the study's primary question; the direction, bias-type and origin rows are secondary. "
        + POLICY
        + " "
        + _INDEPENDENT,
        settings=_ALPHA,
        builder_settings=("alpha",),
        digits=2,
        title="CrowS-Pairs: does each model prefer the more stereotyping sentence?",
    ),
    TableSpec(
        "crows_pairs_directions",
        "crows_pairs",
        "plmfair.crows_pairs.tables:directions_table",
        {"summary": SUMMARY},
        "CrowS-Pairs by direction: the decisive share on stereo pairs (sent_more states a stereotype of a "
        "disadvantaged group) and on anti-stereo pairs (sent_less violates one: the disadvantaged group is in "
        "the less stereotyping sentence), their mean weighing both directions equally with its 95% interval "
        "(MOVER), and Fisher's exact test of stereo against anti-stereo (unadjusted, no mark). Shares on "
        "opposite sides of 50% mean the model prefers the same group's sentence whichever is the stereotype: "
        "a preference for that group's words, not for stereotypes; the overall share then mostly reflects how "
        "many pairs of each direction the data set holds.",
        settings=_ALPHA,
        builder_settings=("alpha",),
        digits=2,
        title="CrowS-Pairs by direction: stereotypes and anti-stereotypes",
    ),
    TableSpec(
        "crows_pairs_robustness",
        "crows_pairs",
        "plmfair.crows_pairs.tables:robustness_table",
        {"summary": SUMMARY},
        "CrowS-Pairs, how the decisive share depends on what counts as a tie and on independence: the share with "
        "each pair's floating-point tolerance (as tested), with a pair neutral when |margin| <= 0, 1e-3 or 1e-2 "
        "instead, and, where the source groups its pairs (Nangia et al.'s writers) and the overall row is tested "
        "with the cluster score test, the exact sign test's Clopper-Pearson interval at the run's level: what "
        "taking the pairs as independent draws would claim (blank without a grouping). Descriptive: no test, no "
        "mark.",
        digits=2,
        title="CrowS-Pairs: the decisive share under other tie rules, and with pairs as independent",
    ),
    TableSpec(
        "crows_pairs_verdicts",
        "crows_pairs_verdicts",
        "plmfair.crows_pairs.tables:verdicts_table",
        {"robustness": ROBUSTNESS},
        "CrowS-Pairs, whether each model's verdict on each data set survives the ruler: the decisive share under the "
        "run's own scoring (the primary estimate) with its Clopper-Pearson interval at 1 - alpha and its verdict "
        "(the side of 50% the interval lies on), computed again under every scoring protocol the model's family "
        "allows, in fp32 where the model runs in reduced precision, every tie rule (a pair neutral at its "
        "floating-point tolerance, as tested, or at a coarser margin), with the pairs of the exclusion file left "
        "out when one is given, and on each data version (native or translated pairs alone where a set has both; "
        "the pairs two versions of a set both hold, in each): every combination, or every change of one choice "
        "when there are too many (K counts says which). K: the specifications; k: those showing the run's "
        "verdict at the level (the level column); short of it: those that do not, as the choices they change; "
        "p (all show it): the intersection-union test's; the largest change of the estimate and the choices "
        "that give it (results/crows_pairs/specifications.parquet holds each). " + _SENSITIVITY,
        settings=_ALPHA,
        builder_settings=("alpha",),
        digits=2,
        title="CrowS-Pairs: does each verdict survive every scoring choice?",
    ),
    TableSpec(
        "crows_pairs_ranking_agreement",
        "crows_pairs_verdicts",
        "plmfair.crows_pairs.tables:ranking_table",
        {"ranking": RANKING},
        "CrowS-Pairs, whether the scoring protocols rank the models alike, per data set: a conservative interval "
        "at 1 - alpha of Kendall's W of the protocols ranking the models by decisive share (each model in its own "
        "precision), on the pairs every model scored under every protocol (1: every protocol orders the models "
        "the same way; near 0: the order is the protocol's): the W of every ranking the shares' simultaneous "
        "Clopper-Pearson intervals (Bonferroni over models x protocols) allow lies in it (its coverage: make "
        "bench-stats, part ranking). The interval only: the W of the measured shares falls well below 1 where "
        "every protocol ranks close models alike, and takes any value where the models are equal (it is in "
        "results/crows_pairs/ranking_agreement.parquet). Needs 3 or more masked LMs scored under the same "
        "protocols; no test, no mark. " + _SENSITIVITY,
        settings=_ALPHA,
        builder_settings=("alpha",),
        digits=3,
        title="CrowS-Pairs: do the scoring protocols rank the models alike?",
    ),
    TableSpec(
        "crows_pairs_mcnemar",
        "crows_pairs_model_pairs",
        "plmfair.crows_pairs.tables:changes_table",
        {"changes": MCNEMAR, "hypotheses": HYPOTHESES},
        "CrowS-Pairs: every two models scored on a data set, compared pair by pair on the pairs both scored: the "
        "3 x 3 transitions (m, n, l: the more stereotyping sentence preferred, neutral, the less; m→l: more under "
        "the first model, less under the second), and two changes from the first model to the second "
        "(percentage points), each a difference of paired proportions: the decisive share on the pairs both "
        "models decide (less→more against more→less) and Nangia et al.'s score on every pair; each with Tango's "
        "score interval and p, the larger of the mid-p McNemar test's and Tango's score test's (so that p < "
        "{alpha} only where the interval excludes 0). The net preference's change is the transitions' (more "
        "minus less under the second model, minus the same under the first). " + POLICY,
        settings=_ALPHA,
        builder_settings=("alpha",),
        digits=2,
        title="CrowS-Pairs: two models compared pair by pair",
    ),
    TableSpec(
        "crows_pairs_language_winloss",
        "crows_pairs_languages",
        "plmfair.rendering.table_format:winloss_table",
        {"winloss": LANGUAGE_WINLOSS, "hypotheses": HYPOTHESES},
        "CrowS-Pairs: every two data sets (languages) a model was scored on, compared on the pairs decisive (not "
        "neutral) in both, neutral pairs left out as the sign test leaves them out: pairs where the more "
        "stereotyping sentence is preferred in one data set only (wins, losses) or in both or neither "
        "(concordant); the change of the decisive share from the first data set to the second on these pairs "
        "with Tango's score interval; p: the larger of the mid-p McNemar test's and Tango's score test's; p (first "
        "wins more): the exact one-sided McNemar test, descriptive. " + POLICY,
        options={
            "a": "dataset_a",
            "b": "dataset_b",
            "n": "n_pairs",
            "p": "p_value",
            "p_one": "p_one_sided",
            "ties": "concordant",
            "change": "change",
        },
        settings=_ALPHA,
        builder_settings=("alpha",),
        digits=3,
        title="CrowS-Pairs: two data sets (languages) compared on the pairs both hold",
    ),
    TableSpec(
        "crows_pairs_language_effects",
        "crows_pairs_languages",
        "plmfair.rendering.table_format:effects_table",
        {"effects": LANGUAGE_EFFECTS},
        "CrowS-Pairs: linear mixed model of the score margin (sent_more_score - sent_less_score, nats) with the "
        "data set as a fixed effect (treatment coding against the first) and a random intercept per pair (REML): "
        "effect sizes with their standard errors, no test and no interval (the Wald test's level is not shown on "
        "these designs: the data sets are compared by the tests of crows_pairs_language_winloss); fits that did "
        "not reach the optimum are kept and marked.",
        digits=3,
        title="CrowS-Pairs: mixed model of the score margin across languages",
    ),
)

FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec(
        "crows_pairs",
        "crows_pairs",
        "plmfair.crows_pairs.figures:crows_pairs_figure",
        {"summary": SUMMARY, "hypotheses": HYPOTHESES},
        "Per CrowS-Pairs data set, bias type and model: the share of decisive pairs (the two sentences scored"
        " differently) in which the model scores the more stereotyping sentence higher (pseudo-log-likelihood"
        " for masked LMs, sentence log-likelihood for causal LMs), with the interval that inverts the row's test "
        "against 50% (dashed line), each row's at the run's level (1 - analysis.alpha): the Clopper-Pearson "
        "interval of the exact sign test, which takes the pairs as independent draws (its p refers to these "
        "pairs), or, for the overall share of a data set whose source groups its pairs by writer, the cluster "
        "score test's, the writers as the draws (crows_pairs_tests names each row's test). "
        "A star marks a test the run's hypotheses find significant after its "
        "adjustment (docs/statistics.md, 'Hypotheses and their families'): a data set's overall share by Holm over the "
        "confirmatory family, a bias type's by Benjamini-Yekutieli over the report. A starred row's interval "
        "excludes 50%; one that excludes it without a star is significant before the adjustment only. A "
        "share too few decisive pairs cannot test is hollow, without interval. The small grey mark is Nangia et "
        "al.'s score, in which a neutral pair counts as not biased (unmarked, for comparison with the "
        "papers); the bars below give the share of neutral pairs.",
        "score per bias type",
    ),
    FigureSpec(
        "crows_pairs_breakdowns",
        "crows_pairs",
        "plmfair.crows_pairs.figures:breakdown_figure",
        {"breakdowns": BREAKDOWNS},
        "Percentage of scored pairs whose more stereotyping sentence the model scores higher (neutral pairs "
        "in the denominator, as in the overall metric), broken down by attributes of the pairs: length of the"
        " more stereotyping sentence (white-space tokens, 4 equal-size buckets), tokens of it outside the "
        "blocks shared with the less stereotyping sentence, origin (native or translated) and bias type. Each"
        " cell shows the score and its number of pairs; the Wilson 95% intervals are in "
        "``results/crows_pairs/breakdowns.parquet``.",
        "score by attribute bucket and model",
    ),
    FigureSpec(
        "crows_pairs_specification_curve",
        "crows_pairs_verdicts",
        "plmfair.crows_pairs.figures:specification_curve",
        {"specifications": SPECIFICATIONS},
        "A specification curve (Simonsohn, Simmons & Nelson 2020) per CrowS-Pairs data set and model: the "
        "decisive share with its interval at 1 - alpha under every specification (scoring protocol, precision, "
        "tie rule, pairs left out, data version), sorted, coloured by its verdict at alpha (unadjusted), filled "
        "where it shows the run's verdict at the level the primary question is held to (the panel's title says "
        "which) and hollow where it falls short; the ring is the run's own specification; the dots below name "
        "each specification's choices. " + _SENSITIVITY,
        "verdicts under every scoring choice",
    ),
    FigureSpec(
        "crows_pairs_language_effects",
        "crows_pairs_languages",
        "plmfair.rendering.plots:effects_forest_figure",
        {"effects": LANGUAGE_EFFECTS},
        "Mixed-model effect of each CrowS-Pairs data set (language) on the score margin sent_more_score - "
        "sent_less_score against the model's first data set, with a random intercept per pair (same id across"
        " languages, REML); Wald intervals at the Bonferroni level of the model's data set terms, filled and "
        "starred where the Wald test is significant after Bonferroni, which is exactly when the interval "
        "excludes 0.",
        "languages compared on shared pairs",
        options={"title": "CrowS-Pairs: score margin of each data set against the first"},
        settings=_ALPHA,
    ),
)
