"""The cloze studies' tables and figures: each one's inputs, builder or drawer, and caption."""

from __future__ import annotations

from plmfair.cloze.plan import set_file
from plmfair.cloze.ties import TIE_BREAK, gap_statistic, then_by
from plmfair.rendering.table_spec import POLICY, FigureSpec, TableSpec
from plmfair.studies import HYPOTHESES

_GROUPS = (
    "rows are annotator groups (M/F x native/non-native: MN, FN, MNN, FNN) and All, every annotation of the "
    "language pooled"
)
_MARKS = (
    "each group's mean across languages with its disparity sigma_gd in parentheses, and under All the sigma_gd "
    "across the four groups; † worst-off group of a language, ‡ language with the highest disparity, § group "
    "with the highest disparity across languages. These marks reproduce the paper and are descriptive: they are "
    "set whatever the noise (sigma_gd is positive even when no group differs); which disparities are more than "
    "chance is in the {subject}_disparity table."
)
_CORRELATION = (
    "cells x 100, p-value in parentheses (<.001 below .001), unmarked: the p-values (scipy's spearmanr and "
    "kendalltau) treat the distinct (sentence, answer) items as independent, but the items of one sentence "
    "share the model's distribution and one annotator's answers their annotator, so they are approximate and "
    "no test of them is shown to hold its level; "
)
_PERMUTATION = "group labels permuted among the annotators of each batch, every annotator keeping their answers"
_PAIR_PERMUTATION = (
    "permutation test under its own null: the two groups' labels permuted among their annotators of "
    "each batch (the other groups may differ), every annotator keeping their answers"
)
_ALPHA = {"alpha": "analysis.alpha"}
_METRICS = {"metrics": set_file("{subject}", "metrics")}
_WINLOSS = {"a": "group_a", "b": "group_b", "n": "n_sentences", "p": "p_permutation", "p_one": "p_one_sided"}


def _paper_table(number: int, metric: str, title: str, correlation: bool) -> TableSpec:
    return TableSpec(
        f"{{subject}}_table{number}_{metric}",
        "answered_sets",
        "plmfair.cloze.tables:paper_table",
        _METRICS,
        f"{{subject}}: MozArt Table {number} ({title}), a block per model: {_GROUPS}; "
        f"{_CORRELATION if correlation else 'cells in percent; '}{_MARKS}",
        options={
            "metric": {"p_at_1": "p_at_1", "spearman": "spearman_rho", "p_at_5": "p_at_5", "kendall": "kendall_tau"}[
                metric
            ]
        },
        settings=_ALPHA,
        builder_settings=("alpha",),
        digits=1,
        title=f"{{subject}}: {title} by annotator group (MozArt's Table {number})",
    )


TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        "{subject}_table1",
        "answered_sets",
        "plmfair.cloze.tables:table1",
        {"overview": set_file("{subject}", "overview")},
        "{subject}: MozArt Table 1: sentences, annotations and annotators per language, and the mean number of "
        "tokens per sentence in each model's tokenizer (the text left and right of the gap, no special tokens, "
        "the gap counted as one token).",
        digits=1,
        title="{subject}: the cloze set (MozArt's Table 1)",
    ),
    _paper_table(2, "p_at_1", "P@1", False),
    _paper_table(3, "spearman", "Spearman", True),
    _paper_table(4, "p_at_5", "P@5", False),
    _paper_table(5, "kendall", "Kendall", True),
    TableSpec(
        "{subject}_verdicts",
        "robust_sets",
        "plmfair.cloze.tables:verdicts_table",
        {"robustness": set_file("{subject}", "robustness")},
        "{subject}: whether each model's verdict on its annotator groups (sigma_gd of MRR, languages pooled, by its "
        "permutation test at {alpha}) survives the ruler: computed again with P@1 and P@5, and with each annotator "
        "left out in turn (K specifications, K counts says which). Robust: every specification shows the groups "
        "differing at the level the primary question is held to (the level column: alpha over its confirmatory "
        "family's size; an intersection-union test, p (all show it), the removals one family, so no removal is "
        "tested on its own); k: those that show it; short of it: those that do not, which may only lack power. A "
        "verdict of no difference shown makes no claim to test. The annotator whose removal moves sigma_gd most "
        "and by how much: a disparity one annotator carries is a finding about that annotator "
        "(results/cloze/{subject}/robustness_specifications.parquet holds each; error rates: make bench-stats, "
        "part robustness; docs/statistics.md, Robustness).",
        settings=_ALPHA,
        builder_settings=("alpha",),
        digits=2,
        title="{subject}: does each group verdict survive other metrics and annotators?",
    ),
    TableSpec(
        "{subject}_disparity",
        "answered_sets",
        "plmfair.cloze.tables:disparity_table",
        {"disparity": set_file("{subject}", "group_disparity"), "hypotheses": HYPOTHESES},
        "{subject}: disparity sigma_gd (population standard deviation of P@1, P@5, MRR across the four annotator "
        "groups, percentage points) per model and language and all languages pooled. sigma_gd is positive even "
        "when no group differs (its null mean, printed), so it is compared with its critical value, not with 0: "
        "the value it must exceed for its permutation test (" + _PERMUTATION + "; the omnibus null: all four "
        "groups exchangeable) to reject at {alpha}. Debiased sigma_gd: sqrt(max(0, sigma_gd^2 - its null mean "
        "square)), the disparity beyond sampling. Interval: the sigma_gd of the group effects that the same test, "
        "inverted, does not reject (the group effects taken off each annotator's scores before permuting), so it "
        "holds 0 exactly when the test of no disparity does not reject at {alpha}; conservative (its coverage: "
        "docs/statistics.md). MRR with the languages pooled is the set's primary question for each model; the "
        "other rows are secondary. " + POLICY + " The verdict says only what the test supports.",
        settings=_ALPHA,
        builder_settings=("alpha",),
        digits=2,
        title="{subject}: disparity across annotator groups (sigma_gd)",
    ),
    TableSpec(
        "{subject}_group_winloss",
        "answered_sets",
        "plmfair.rendering.table_format:winloss_table",
        {"winloss": set_file("{subject}", "group_winloss"), "hypotheses": HYPOTHESES},
        "{subject}: win/loss of every two annotator groups on the sentences both answered (each group's mean "
        "score per sentence, compared exactly); p: " + _PAIR_PERMUTATION + ", of the net wins, ties in them "
        "broken by the sentence-adjusted gap, " + then_by() + " (two-sided, and one-sided for the "
        "first group winning more, descriptive). " + POLICY,
        options=_WINLOSS,
        settings=_ALPHA,
        builder_settings=("alpha",),
        digits=3,
        title="{subject}: two annotator groups compared on shared sentences",
    ),
    TableSpec(
        "{subject}_group_gaps",
        "answered_sets",
        "plmfair.cloze.tables:gaps_table",
        {"gaps": set_file("{subject}", "group_gaps"), "hypotheses": HYPOTHESES},
        "{subject}: each annotator group's gap to the reference group, adjusted for batch composition (the "
        "weighted mean over the sentences both answered of the difference of the two groups' mean scores), "
        "per model, language and metric; p (permutation): " + _PAIR_PERMUTATION + " (" + gap_statistic() + ", "
        "which breaks ties between annotators with the same hits); p (gap alone): the same test without the "
        "tie-break; interval: every shift of the group's scores that the test of the gap alone does not reject "
        "at {alpha}, within [-1, 1] where a gap of 0-1 scores lies (an end at -1 or 1: the permutations cannot "
        "bound it); a mark that only the tie-break makes, beside an interval that holds 0, is said. "
        + POLICY
        + " The figure {subject}_group_effects "
        "draws these rows.",
        settings=_ALPHA,
        builder_settings=("alpha",),
        digits=3,
        title="{subject}: each group's gap to the reference group",
    ),
    TableSpec(
        "{subject}_group_effects",
        "answered_sets",
        "plmfair.rendering.table_format:effects_table",
        {"effects": set_file("{subject}", "group_effects")},
        "{subject}: linear mixed model of each annotation's score with the annotator group as a fixed effect "
        "(treatment coding against the reference) and random intercepts for sentence and annotator (REML; "
        "lme4's lmer), per model, language (and all pooled, language a fixed effect) and metric: effect sizes "
        "with their standard errors, no test and no interval (a Gaussian model of binary or discrete scores, "
        "whose Wald test's level is not shown with two to seventeen annotators per group: the group gaps carry "
        "the marks); fits that did not reach the REML optimum are kept and marked.",
        digits=3,
        title="{subject}: mixed model of the annotator groups",
    ),
    TableSpec(
        "{subject}_group_tests",
        "answered_sets",
        "plmfair.cloze.tables:group_tests_table",
        {"tests": set_file("{subject}", "group_tests"), "hypotheses": HYPOTHESES},
        "{subject}: does any group differ (omnibus), do gender and nativeness (2 x 2 contrasts of the four "
        "groups' means, and their interaction), and, languages pooled, does a group's gap depend on the "
        "language (group x language); each by a permutation test under its own null (the last column: which "
        "labels are permuted, or Freedman & Lane's residual permutation, whose statistics are studentized by "
        "their annotator-clustered errors). " + POLICY,
        settings=_ALPHA,
        builder_settings=("alpha",),
        digits=3,
        title="{subject}: does any annotator group differ?",
    ),
    TableSpec(
        "{subject}_construction",
        "corpora",
        "plmfair.cloze.tables:construction_table",
        {"counts": set_file("{subject}", "construction")},
        "{subject}: cloze construction, what is left after each filter, applied in order. Sentence steps count "
        "lines; word steps count pivot-language words with their aligned counterparts. A language column counts "
        "what passes the step in that language among what passed every earlier step in all languages; 'all' "
        "what passes in all of them.",
        digits=0,
        title="{subject}: cloze construction, filter by filter",
    ),
    TableSpec(
        "{subject}_alignment_quality",
        "gold_corpora",
        "plmfair.cloze.tables:alignment_quality_table",
        {"quality": set_file("{subject}", "alignment_quality")},
        "{subject}: word alignment quality of the eflomal step on hand-made gold alignments: precision "
        "|A∩P|/|A|, recall |A∩S|/|S| and alignment error rate 1 - (|A∩S| + |A∩P|)/(|A| + |S|) (Och & Ney "
        "2003), per symmetrisation, the gold sentences aligned alone (extra: none) or together with the "
        "corpus's own lines (extra: corpus); gold links outside their sentence are left out and counted.",
        digits=3,
        title="{subject}: word alignment quality on gold alignments",
    ),
)

FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec(
        "{subject}_mrr",
        "answered_sets",
        "plmfair.cloze.figures:mozart_mrr_figure",
        _METRICS,
        "Figure 1 of MozArt: mean reciprocal rank (top 5, percent) of each annotator group's answers among "
        "the model's predictions, per language (MN male native, FN female native, MNN male non-native, FNN "
        "female non-native); black lines are language means, ▲/▼ the best- and worst-off groups (every tied "
        "group marked; descriptive, not tests: the disparity and group_gaps tables say which differences are "
        "more than chance).",
        "MRR per group and language",
    ),
    FigureSpec(
        "{subject}_group_effects",
        "answered_sets",
        "plmfair.rendering.plots:effects_forest_figure",
        {"effects": set_file("{subject}", "group_gaps"), "hypotheses": HYPOTHESES},
        "Each annotator group's gap to the reference group (default MN), adjusted for batch composition (the "
        "weighted mean over the sentences both answered of the difference of the groups' mean scores), on the"
        " per-annotation reciprocal rank and P@1, per model and language and all languages pooled. Intervals:"
        " the permutation test of the gap inverted (labels of the two groups compared permuted among their "
        "annotators of each batch), at the Bonferroni level of the three gaps to the reference of one model, "
        "language and metric; filled and starred where that test is significant after Bonferroni, which is "
        "exactly when the interval excludes 0; an arrow where too few annotators leave an end unbounded. The "
        "rows are those of the group_gaps table.",
        "group effects",
        options={"title": "{subject}: each annotator group's gap to the reference group", "tie_breaks": TIE_BREAK},
        settings=_ALPHA,
    ),
    FigureSpec(
        "{subject}_breakdowns",
        "answered_sets",
        "plmfair.cloze.figures:breakdown_figure",
        {"breakdowns": set_file("{subject}", "breakdowns")},
        "MRR over the top 5 candidates (%) of each model, broken down by attributes of the sentences and "
        "answers, for every annotator group and all annotators (the four languages pooled; per language in "
        "``breakdowns.parquet``). Rows: the POS tag of the masked word; sentence length in white-space tokens"
        " and answer agreement (share of a sentence's answers equal to its most frequent one), each in up to "
        "4 buckets of equal size cut at the quartiles over the set's sentences; tokens the answer takes in "
        "the model's tokenizer; multi-word answers. Each cell shows the MRR and the number of annotations it "
        "averages; MRR, P@1 and P@5 are means of the per-annotation scores, as in the main tables.",
        "MRR by attribute bucket and group",
        options={"title": "{subject}: MRR over the top 5 (%) by attribute bucket, all languages"},
    ),
    # drawn by the job that computes its map (workflow/rules/mozart.smk, its caption workflow/report/tsne.rst)
    FigureSpec("{subject}_tsne", "tsne", "", {}, "", "t-SNE of each model's top predictions"),
)
