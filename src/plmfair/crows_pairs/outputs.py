"""The CrowS-Pairs study's tables and figures: each table's inputs, builder and caption."""

from __future__ import annotations

from plmfair.crows_pairs.plan import LANGUAGE_EFFECTS, LANGUAGE_WINLOSS, MCNEMAR, SUMMARY
from plmfair.rendering.table_spec import TableSpec

_CROWS_UNMARKED = (
    "Nangia et al.'s rule: scores rounded to 3 decimals (nangia and sentence_log_likelihood protocols); the "
    "metric, bias-type and origin rows count a neutral pair (equal rounded scores) as not preferring the more "
    "stereotyping sentence, the stereo and anti-stereo rows leave neutral pairs out. Scores carry no mark: "
    "the test is about the decisive pairs (crows_pairs_tests). n: pairs scored; neutral: under this rule."
)
_INDEPENDENT = (
    "The test treats pairs as independent draws; crows_pairs_robustness resamples the source's clusters (the "
    "pairs one writer wrote) where it has them."
)
_ALPHA = {"alpha": "analysis.alpha"}


TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        "crows_pairs",
        "crows_pairs",
        "plmfair.crows_pairs.tables:table4",
        {"summary": SUMMARY},
        "CrowS-Pairs scores (% of pairs preferring the more stereotyping sentence), Table 4 of Névéol et al. "
        "(2022), with the neutral pairs counted. " + _CROWS_UNMARKED,
    ),
    TableSpec(
        "crows_pairs_origin",
        "crows_pairs",
        "plmfair.crows_pairs.tables:table5",
        {"summary": SUMMARY},
        "CrowS-Pairs metric score on native vs translated pairs, Table 5 of Névéol et al. (2022). " + _CROWS_UNMARKED,
    ),
    TableSpec(
        "crows_pairs_tests",
        "crows_pairs",
        "plmfair.crows_pairs.tables:crows_pairs_tests_table",
        {"summary": SUMMARY},
        "CrowS-Pairs: does a model prefer the more stereotyping sentence? Per data set, model and subset: pairs "
        "scored; neutral pairs (|margin| within its floating-point tolerance: the order is not decided); Nangia "
        "et al.'s score (their rule, unmarked); the decisive-pair share (% of the decisive pairs preferring the "
        "more stereotyping sentence) with the Clopper-Pearson interval that inverts the exact sign test against "
        "50%; the net preference (percentage points: preferred more minus preferred less, over all scored pairs, "
        "a neutral pair counting 0) with the interval the same test gives it. Bias types: Bonferroni over the "
        "bias types the test can reject at all (Tarone), interval at level 1 - {alpha}/K; other rows alone at 1 - "
        "{alpha}. * : adjusted p < {alpha}, set exactly when the share's interval excludes 50% and the net "
        "preference's excludes 0. Untestable: too few decisive pairs for the smallest attainable p to reach the "
        "row's level (no interval, no mark). " + _INDEPENDENT,
        settings={"alpha": "crows_pairs.alpha"},
        builder_settings=("alpha",),
        digits=2,
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
        settings={"alpha": "crows_pairs.alpha"},
        builder_settings=("alpha",),
        digits=2,
    ),
    TableSpec(
        "crows_pairs_robustness",
        "crows_pairs",
        "plmfair.crows_pairs.tables:robustness_table",
        {"summary": SUMMARY},
        "CrowS-Pairs, how the decisive share depends on what counts as a tie and on independence: the share with "
        "each pair's floating-point tolerance (as tested), with a pair neutral when |margin| <= 0, 1e-3 or 1e-2 "
        "instead, and the 95% percentile interval when whole clusters of the source (Nangia et al.'s writers) are "
        "resampled rather than pairs (blank with fewer than two clusters). Descriptive: no test, no mark.",
        digits=2,
    ),
    TableSpec(
        "crows_pairs_mcnemar",
        "crows_pairs_model_pairs",
        "plmfair.crows_pairs.tables:changes_table",
        {"changes": MCNEMAR},
        "CrowS-Pairs: every two models scored on a data set, compared pair by pair on the pairs both scored: how "
        "many kept their outcome (more stereotyping preferred, neutral, less) and how many moved up or down from "
        "the first model to the second; the changes (second minus first, percentage points) of the decisive "
        "share, the net preference and Nangia et al.'s score, each with a paired bootstrap 95% interval (pairs "
        "resampled; descriptive, no mark); p: exact sign test of the pairs that moved up against those that "
        "moved down (McNemar's test for the ordered outcome); * : Holm-adjusted p < {alpha} over every data set "
        "and two models; identical: no pair moved (nothing to test). The full 3 x 3 transition counts are in "
        "the CSV.",
        settings={"alpha": "crows_pairs.alpha"},
        builder_settings=("alpha",),
        digits=2,
    ),
    TableSpec(
        "crows_pairs_language_winloss",
        "crows_pairs_languages",
        "plmfair.rendering.table_format:winloss_table",
        {"winloss": LANGUAGE_WINLOSS},
        "CrowS-Pairs: every two data sets (languages) a model was scored on, compared on the pairs decisive (not "
        "neutral) in both, neutral pairs left out as the binomial test leaves them out: "
        "pairs where the more stereotyping sentence is preferred in one data set only (wins, losses) or in both "
        "or neither (concordant); p: exact McNemar test "
        "(two-sided, and one-sided for the first data set preferring it more often); * Bonferroni-adjusted p < "
        "{alpha} over the comparisons of a model.",
        options={
            "a": "dataset_a",
            "b": "dataset_b",
            "n": "n_pairs",
            "p": "p_two_sided",
            "p_one": "p_one_sided",
            "p_adjusted": "p_bonferroni",
            "adjusted": "Bonferroni",
            "ties": "concordant",
        },
        settings=_ALPHA,
        digits=3,
    ),
    TableSpec(
        "crows_pairs_language_effects",
        "crows_pairs_languages",
        "plmfair.rendering.table_format:effects_table",
        {"effects": LANGUAGE_EFFECTS},
        "CrowS-Pairs: linear mixed model of the score margin (sent_more_score - sent_less_score) with the data set "
        "as a fixed effect (treatment coding against the first) and a random intercept per pair (REML); "
        "estimates with Wald intervals at the Bonferroni level of a model's data set terms (1 - {alpha}/m) and "
        "Wald p-values; * : Bonferroni-adjusted p < {alpha}, set exactly when the interval excludes 0; fits "
        "that did not reach the optimum are kept and marked.",
        settings=_ALPHA,
        digits=3,
    ),
)

# Figures by name: the kind of subject each is made for (its drawing and rule are its own).
FIGURES = {
    "crows_pairs": "crows_pairs",
    "crows_pairs_breakdowns": "crows_pairs",
    "crows_pairs_language_effects": "crows_pairs_languages",
}
