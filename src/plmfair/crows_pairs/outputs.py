"""The CrowS-Pairs study's tables and figures: each table's inputs, builder and caption."""

from __future__ import annotations

from plmfair.crows_pairs.plan import LANGUAGE_EFFECTS, LANGUAGE_WINLOSS, MCNEMAR, SUMMARY
from plmfair.rendering.table_spec import TableSpec

_CROWS_UNMARKED = (
    "Scores carry no mark: a neutral pair (equal scores) counts as not biased here, as in Nangia et al., "
    "but the test is about the decisive pairs; the crows_pairs_tests table gives the decisive-pair share "
    "with its interval and exact binomial test. n: pairs scored."
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
        "CrowS-Pairs: is a model's preference different from 50%? Per data set, model and subset: pairs scored, "
        "neutral pairs (equal scores; count and share), Nangia et al.'s score (neutral = not biased, unmarked), and "
        "the decisive-pair share (biased / not neutral) with the Clopper-Pearson interval that inverts the exact "
        "binomial test of the same pairs against 50%. Bias types: family of the bias types tested for a model "
        "and data set, Bonferroni, interval at level 1 - {alpha}/m; other rows alone at 1 - {alpha}. * : "
        "adjusted p < {alpha}, set exactly when the interval excludes 50%.",
        settings={"alpha": "crows_pairs.alpha"},
        digits=2,
    ),
    TableSpec(
        "crows_pairs_mcnemar",
        "crows_pairs",
        "plmfair.rendering.table_format:long_table",
        {"table": MCNEMAR},
        "CrowS-Pairs: every two models scored on a data set, compared pair by pair on the pairs decisive (not "
        "neutral) under both, as the binomial test counts them (exact McNemar test of the pairs where one model "
        "prefers the more stereotyping sentence and the other the less; Bonferroni over the model pairs).",
        digits=3,
    ),
    TableSpec(
        "crows_pairs_language_winloss",
        "crows_pairs_languages",
        "plmfair.rendering.table_format:winloss_table",
        {"winloss": LANGUAGE_WINLOSS},
        "CrowS-Pairs: every two data sets (languages) a model was scored on, compared on the pairs decisive (not "
        "neutral) in both, neutral pairs left out as the binomial test leaves them out: "
        "pairs where the more stereotyping sentence is preferred in one data set only; p: exact McNemar test "
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
