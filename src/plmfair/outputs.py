"""Every table and figure the workflow makes, one entry each: its name and the subjects it is made
for; for a table also the Parquet files it is built from, its builder in :mod:`plmfair.tables` and
its caption.

One generic rule (``table`` in ``workflow/rules/tables.smk``) renders each table entry for each of
its subjects as ``results/tables/<name>.{csv,md,tex,html}``; the HTML goes into the Snakemake
report with its caption, under its study's category. Adding a table is a builder in
:mod:`plmfair.tables` and one entry here. A figure has its own rule (its drawing and report
caption); :data:`FIGURES` says for which subjects it is made. Light (no pandas): the plan reads
it to build the DAG.

Names and input paths hold ``{subject}``, the name of the data set the output is made for; which
subjects get it is :data:`SUBJECTS`' list, drawn up by :func:`plmfair.plan.output_subjects`.
Captions are ``str.format`` templates of ``subject`` and the ``settings`` (config values, by
dotted key). The builder gets the input frames by role, the fixed ``options``, and the settings
named in ``builder_settings``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Which subjects an output is made for (plmfair.plan.output_subjects):
SUBJECTS = {
    "data": "one table, when some data set is ingested",
    "models": "one table, when some model is scored",
    "crows_pairs": "one table, when some CrowS-Pairs data set is scored",
    "crows_pairs_languages": "one table, when a model is scored on two or more CrowS-Pairs data sets",
    "answered_sets": "each cloze set with human answers (MozArt, and constructed sets with answers)",
    "corpora": "each corpus cloze sentences are constructed from",
    "gold_corpora": "each corpus with gold word alignments",
    "tsne": "each ready-made cloze test whose predictions are mapped (mozart.tsne.sentences)",
}


@dataclass(frozen=True)
class TableSpec:
    name: str
    subjects: str
    builder: str
    inputs: dict[str, str]
    caption: str
    options: dict = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    builder_settings: tuple[str, ...] = ()
    digits: int = 2


_GROUPS = ("rows are annotator groups (M/F x native/non-native: MN, FN, MNN, FNN) and All, every annotation of the "
           "language pooled")
_MARKS = ("each group's mean across languages with its disparity sigma_gd in parentheses, and under All the sigma_gd "
          "across the four groups; † worst-off group of a language, ‡ language with the highest disparity, § group "
          "with the highest disparity across languages. These marks reproduce the paper and are descriptive: they are "
          "set whatever the noise (sigma_gd is positive even when no group differs); which disparities are more than "
          "chance is in the {subject}_disparity table.")
_CORRELATION = ("cells x 100, p-value in parentheses (<.001 below .001), ° not significant at {alpha}; the p-values "
                "(scipy's spearmanr and kendalltau) treat the distinct (sentence, answer) items as independent, but the "
                "items of one sentence share the model's distribution and one annotator's answers their annotator, so "
                "they are approximate; ")
_PERMUTATION = ("group labels permuted among the annotators of each batch, every annotator keeping their answers")
_PAIR_PERMUTATION = ("permutation test under its own null: the two groups' labels permuted among their annotators of "
                     "each batch (the other groups may differ), every annotator keeping their answers")
_CROWS_UNMARKED = ("Scores carry no mark: a neutral pair (equal scores) counts as not biased here, as in Nangia et al., "
                   "but the test is about the decisive pairs; the crows_pairs_tests table gives the decisive-pair share "
                   "with its interval and exact binomial test. n: pairs scored.")
_ALPHA = {"alpha": "analysis.alpha"}
_METRICS = {"metrics": "results/cloze/{subject}/metrics.parquet"}
_WINLOSS = {"a": "group_a", "b": "group_b", "n": "n_sentences", "p": "p_permutation", "p_one": "p_one_sided",
            "p_adjusted": "p_holm", "adjusted": "Holm"}


def _paper_table(number: int, metric: str, title: str, correlation: bool) -> TableSpec:
    return TableSpec(
        f"{{subject}}_table{number}_{metric}", "answered_sets", "paper_table", _METRICS,
        f"{{subject}}: MozArt Table {number} ({title}), a block per model: {_GROUPS}; "
        f"{_CORRELATION if correlation else 'cells in percent; '}{_MARKS}",
        options={"metric": {"p_at_1": "p_at_1", "spearman": "spearman_rho", "p_at_5": "p_at_5",
                            "kendall": "kendall_tau"}[metric]},
        settings=_ALPHA, builder_settings=("alpha",), digits=1)


TABLES: tuple[TableSpec, ...] = (
    TableSpec("data_summary", "data", "long_table", {"table": "results/data/summary.parquet"},
              "What is in the data: per language of each ready-made cloze test (MozArt's) and per CrowS-Pairs "
              "data set, sentences, annotations, annotators "
              "and pairs by bias type, direction and origin (pairs missing a sentence, unlabelled or duplicated are "
              "skipped by the scoring).", digits=0),
    TableSpec("models", "models", "models_table", {"models": "results/models.parquet"},
              "Models: family, size, tokenizer, and where the weights come from (read off the loaded model by its "
              "first scoring job)."),
    TableSpec("crows_pairs", "crows_pairs", "table4", {"summary": "results/crows_pairs/summary.parquet"},
              "CrowS-Pairs scores (% of pairs preferring the more stereotyping sentence), Table 4 of Névéol et al. "
              "(2022), with the neutral pairs counted. " + _CROWS_UNMARKED),
    TableSpec("crows_pairs_origin", "crows_pairs", "table5", {"summary": "results/crows_pairs/summary.parquet"},
              "CrowS-Pairs metric score on native vs translated pairs, Table 5 of Névéol et al. (2022). "
              + _CROWS_UNMARKED),
    TableSpec("crows_pairs_tests", "crows_pairs", "crows_pairs_tests_table",
              {"summary": "results/crows_pairs/summary.parquet"},
              "CrowS-Pairs: is a model's preference different from 50%? Per data set, model and subset: pairs scored, "
              "neutral pairs (equal scores; count and share), Nangia et al.'s score (neutral = not biased, unmarked), and "
              "the decisive-pair share (biased / not neutral) with the Clopper-Pearson interval that inverts the exact "
              "binomial test of the same pairs against 50%. Bias types: family of the bias types tested for a model "
              "and data set, Bonferroni, interval at level 1 - {alpha}/m; other rows alone at 1 - {alpha}. * : "
              "adjusted p < {alpha}, set exactly when the interval excludes 50%.",
              settings={"alpha": "crows_pairs.alpha"}, digits=2),
    TableSpec("crows_pairs_mcnemar", "crows_pairs", "long_table", {"table": "results/crows_pairs/mcnemar.parquet"},
              "CrowS-Pairs: every two models scored on a data set, compared pair by pair on the pairs decisive (not "
              "neutral) under both, as the binomial test counts them (exact McNemar test of the pairs where one model "
              "prefers the more stereotyping sentence and the other the less; Bonferroni over the model pairs).",
              digits=3),
    TableSpec("crows_pairs_language_winloss", "crows_pairs_languages", "winloss_table",
              {"winloss": "results/crows_pairs/language_winloss.parquet"},
              "CrowS-Pairs: every two data sets (languages) a model was scored on, compared on the pairs decisive (not "
              "neutral) in both, neutral pairs left out as the binomial test leaves them out: "
              "pairs where the more stereotyping sentence is preferred in one data set only; p: exact McNemar test "
              "(two-sided, and one-sided for the first data set preferring it more often); * Bonferroni-adjusted p < "
              "{alpha} over the comparisons of a model.",
              options={"a": "dataset_a", "b": "dataset_b", "n": "n_pairs", "p": "p_two_sided", "p_one": "p_one_sided",
                       "p_adjusted": "p_bonferroni", "adjusted": "Bonferroni"}, settings=_ALPHA, digits=3),
    TableSpec("crows_pairs_language_effects", "crows_pairs_languages", "effects_table",
              {"effects": "results/crows_pairs/language_effects.parquet"},
              "CrowS-Pairs: linear mixed model of the score margin (sent_more_score - sent_less_score) with the data set "
              "as a fixed effect (treatment coding against the first) and a random intercept per pair (REML); "
              "estimates with Wald intervals at the Bonferroni level of a model's data set terms (1 - {alpha}/m) and "
              "Wald p-values; * : Bonferroni-adjusted p < {alpha}, set exactly when the interval excludes 0; fits "
              "that did not reach the optimum are kept and marked.", settings=_ALPHA, digits=3),
    TableSpec("{subject}_table1", "answered_sets", "table1", {"overview": "results/cloze/{subject}/overview.parquet"},
              "{subject}: MozArt Table 1: sentences, annotations and annotators per language, and the mean number of "
              "tokens per sentence in each model's tokenizer (the text left and right of the gap, no special tokens, "
              "the gap counted as one token).", digits=1),
    _paper_table(2, "p_at_1", "P@1", False),
    _paper_table(3, "spearman", "Spearman", True),
    _paper_table(4, "p_at_5", "P@5", False),
    _paper_table(5, "kendall", "Kendall", True),
    TableSpec("{subject}_disparity", "answered_sets", "disparity_table",
              {"disparity": "results/cloze/{subject}/group_disparity.parquet"},
              "{subject}: disparity sigma_gd (population standard deviation of P@1, P@5, MRR across the four annotator "
              "groups, percent) per model and language and all languages pooled, with its 95% bootstrap interval "
              "(annotators resampled within group and batch). sigma_gd is positive even when no group differs, so it is "
              "compared with its chance level, not with 0: the value it must exceed, from its permutation distribution "
              "when no group differs (" + _PERMUTATION + "). p: that permutation test (the omnibus null: all four "
              "groups exchangeable); * : Bonferroni-adjusted p < {alpha} over the languages and pooled of a model and "
              "metric, set exactly when sigma_gd exceeds its chance level; the verdict says only what the test "
              "supports.", settings=_ALPHA, digits=2),
    TableSpec("{subject}_group_winloss", "answered_sets", "winloss_table",
              {"winloss": "results/cloze/{subject}/group_winloss.parquet"},
              "{subject}: win/loss of every two annotator groups on the sentences both answered (each group's mean "
              "score per sentence, compared exactly); p: " + _PAIR_PERMUTATION + ", of the net wins (two-sided, and "
              "one-sided for the first group winning more); * Holm-adjusted p < {alpha} over the comparisons of a "
              "model and metric.", options=_WINLOSS, settings=_ALPHA, digits=3),
    TableSpec("{subject}_group_gaps", "answered_sets", "gaps_table",
              {"gaps": "results/cloze/{subject}/group_gaps.parquet"},
              "{subject}: each annotator group's gap to the reference group, adjusted for batch composition (the "
              "weighted mean over the sentences both answered of the difference of the two groups' mean scores), "
              "per model, language and metric; p: " + _PAIR_PERMUTATION + "; interval: every shift of the group's "
              "scores that test does not reject (the test inverted), at the Bonferroni level of the family (the three "
              "gaps to the reference of one model, language and metric: 1 - {alpha}/3); * : Bonferroni-adjusted p < "
              "{alpha}, set exactly when the interval excludes 0; -inf/inf: too few annotators for the permutations to "
              "bound it. The figure {subject}_group_effects draws these rows.", settings=_ALPHA, digits=3),
    TableSpec("{subject}_group_effects", "answered_sets", "effects_table",
              {"effects": "results/cloze/{subject}/group_effects.parquet"},
              "{subject}: linear mixed model of each annotation's score with the annotator group as a fixed effect "
              "(treatment coding against the reference) and random intercepts for sentence and annotator (REML; "
              "lme4's lmer), per model, language (and all pooled, language a fixed effect) and metric: estimates with "
              "Wald intervals at the Bonferroni level of the three group terms (1 - {alpha}/3) and Wald p; * : "
              "Bonferroni-adjusted Wald p < {alpha}, set exactly when the interval excludes 0 (a Gaussian model of "
              "binary or discrete scores: see docs/statistics.md for its calibration); fits that did not reach the "
              "REML optimum are kept and marked.", settings=_ALPHA, digits=3),
    TableSpec("{subject}_group_tests", "answered_sets", "group_tests_table",
              {"tests": "results/cloze/{subject}/group_tests.parquet"},
              "{subject}: does any group differ (omnibus), do gender and nativeness (2 x 2 contrasts of the four "
              "groups' means, and their interaction), and, languages pooled, does a group's gap depend on the "
              "language (group x language); each by a permutation test under its own null (the last column: which "
              "labels are permuted, or Freedman & Lane's residual permutation); * Holm-adjusted p < {alpha} over "
              "gender, nativeness and their interaction; the omnibus and group x language tests stand alone.",
              settings=_ALPHA, digits=3),
    TableSpec("{subject}_construction", "corpora", "construction_table",
              {"counts": "results/cloze/{subject}/construction.parquet"},
              "{subject}: cloze construction, what is left after each filter, applied in order. Sentence steps count "
              "lines; word steps count pivot-language words with their aligned counterparts. A language column counts "
              "what passes the step in that language among what passed every earlier step in all languages; 'all' "
              "what passes in all of them.", digits=0),
    TableSpec("{subject}_alignment_quality", "gold_corpora", "alignment_quality_table",
              {"quality": "results/cloze/{subject}/alignment_quality.parquet"},
              "{subject}: word alignment quality of the eflomal step on hand-made gold alignments: precision "
              "|A∩P|/|A|, recall |A∩S|/|S| and alignment error rate 1 - (|A∩S| + |A∩P|)/(|A| + |S|) (Och & Ney "
              "2003), per symmetrisation, the gold sentences aligned alone (extra: none) or together with the "
              "corpus's own lines (extra: corpus); gold links outside their sentence are left out and counted.",
              digits=3),
)

# figure name -> subjects (each drawn by the rule that writes results/figures/<name>.{png,pdf})
FIGURES = {
    "crows_pairs": "crows_pairs",
    "crows_pairs_breakdowns": "crows_pairs",
    "crows_pairs_language_effects": "crows_pairs_languages",
    "{subject}_mrr": "answered_sets",
    "{subject}_group_effects": "answered_sets",
    "{subject}_breakdowns": "answered_sets",
    "{subject}_tsne": "tsne",
}
