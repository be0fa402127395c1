"""Annotator groups compared with the annotator as the unit: gaps, omnibus, 2 x 2, win/loss and sigma_gd
disparity, each a permutation test under its own null within the batches of the design, and the schemas of
their files. The design and its assignments are :mod:`plmfair.cloze.annotator_design`; the nulls and the
estimands: docs/statistics.md, "Group tests"."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from itertools import combinations
from typing import NamedTuple

import numpy as np
import pandas as pd

from plmfair.cloze.annotations import GROUPS
from plmfair.cloze.annotator_design import (
    AnnotatorDesign,
    cell_sums,
    group_means,
    group_sums,
    net_wins,
    sentence_gap,
)
from plmfair.cloze.measures import BY_SCORE, COLUMNS, INTERACTION_MIN_ANNOTATORS, TESTED, listed
from plmfair.cloze.ties import TIE_BREAK, TIE_WEIGHT, gap_statistic, then_by
from plmfair.stats.mixed_models import EFFECTS_COLUMNS, crossed_mixed_model, effects_rows
from plmfair.stats.permutation import (
    accepted_extent,
    attainable,
    inverted_permutation_interval,
    permutation_p,
    permutation_threshold,
)

log = logging.getLogger(__name__)

# the annotation scores the tests test (plmfair.cloze.measures)
METRICS = TESTED
# the annotation scores whose group means are the metrics (percent), by score
DISPARITY_METRICS = BY_SCORE
GROUP_PAIRS = tuple(combinations(GROUPS, 2))
# the 2 x 2 of gender (M, F) and nativeness (N, NN), as contrasts of the four group means (MN, FN, MNN, FNN)
CONTRASTS_2X2 = {
    "gender": ((0.5, -0.5, 0.5, -0.5), "men's mean minus women's (each averaged over native and non-native)"),
    "nativeness": ((0.5, 0.5, -0.5, -0.5), "natives' mean minus non-natives' (each averaged over men and women)"),
    "gender_x_nativeness": ((1.0, -1.0, -1.0, 1.0), "interaction: (MN - MNN) - (FN - FNN)"),
}
_FEMALE = np.array([g.startswith("F") for g in GROUPS])
_NON_NATIVE = np.array([g.endswith("NN") for g in GROUPS])
TEST_NULLS = {
    "omnibus": "all four groups exchangeable: labels permuted among all the annotators of each batch",
    "gender": "no gender difference: labels permuted within batch x nativeness",
    "nativeness": "no nativeness difference: labels permuted within batch x gender",
    "gender_x_nativeness": "additive gender and nativeness: Freedman-Lane, residuals of score ~ sentence + gender + "
    "nativeness permuted as whole annotators within batches, the statistic studentized in every permutation",
    "group_x_language": "the same group gaps in every language: Freedman-Lane, residuals of score ~ sentence + group "
    "permuted as whole annotators within batches, the statistic studentized in every permutation",
}
_PAIR_NULL = "the two groups are exchangeable: their labels permuted among their annotators of each batch"

# what a permutation test can give on its design, whatever the data (plmfair.stats.permutation.attainable)
ATTAINABLE_SCHEMA = {
    "p_min": "the smallest p the test can give on this design: that of data as extreme as the most extreme "
    "assignment (1 / (1 + permutations) unless the design forces ties)",
    "size": "the share of assignments whose p is below alpha: the rate at which the test rejects at alpha when its "
    "null holds, on this design (below alpha where ties crowd its permutation distribution)",
}
GROUP_WINLOSS_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' for the languages' sentences pooled",
    "metric": f"{listed(TESTED)} of each annotation",
    "group_a": "first group",
    "group_b": "second group",
    "n_sentences": "sentences both groups answered",
    "wins_a": "sentences where group_a's mean of the metric over its annotations is higher (compared exactly)",
    "wins_b": "sentences where group_b's mean is higher",
    "ties": "sentences where both means are equal",
    "p_permutation": "two-sided permutation p of wins_a - wins_b (ties in it broken by the sentence-adjusted gap, "
    f"{then_by()}), {_PAIR_NULL} (NaN without a shared sentence)",
    "p_one_sided": "the same, alternative: group_a wins more",
    "permutations": "assignments compared with the observed one (every distinct one when there are at most 10,000)",
    **ATTAINABLE_SCHEMA,
    "informative": "false when every assignment gives the same net wins and gaps (p = 1 whatever the data)",
    "hypothesis": "the test's id in the run's analysis plan (results/analysis_plan.parquet), which holds its family, "
    "adjusted p and mark",
}

GROUP_GAPS_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' for the languages pooled (sentences are (lang, s_id))",
    "metric": f"{listed(TESTED)} of each annotation",
    "group": "the group compared with the reference",
    "reference": "the reference group",
    "gap": "weighted mean over the sentences both answered of (group's mean - reference's mean) on the sentence, "
    "weight n_group n_reference / (n_group + n_reference): the gap adjusted for batch composition",
    "ci_low": "lower end of the interval: the smallest shift of the group's scores that the permutation test of "
    "the gap itself (without a tie-break) does not reject at alpha, within [-1, 1] (where a gap of scores in [0, 1] "
    "lies: -1 or 1 when the permutations cannot bound it)",
    "ci_high": "upper end of that interval",
    "ci_level": "confidence level of the interval, 1 - alpha",
    "interval_connected": "the shifts the test does not reject form one interval; false when ties make it accept an "
    "isolated shift (or reject one inside), and the interval printed is their hull",
    "p_permutation": "two-sided permutation p of the gap (" + gap_statistic() + ", which breaks ties), " + _PAIR_NULL,
    "p_untied": "the same test of the gap alone, without the tie-break: the test the interval inverts",
    **ATTAINABLE_SCHEMA,
    "hypothesis": "the test's id in the run's analysis plan (results/analysis_plan.parquet)",
    "n_sentences": "sentences both groups answered",
    "n_annotators": "annotators of the two groups",
    "informative": "false when every assignment gives the same |gap| (a degenerate permutation distribution: p = 1 "
    "whatever the data)",
    "permutations": "assignments compared with the observed one: every distinct one when there are at most "
    "10,000 (the p-value is then exact), else random shuffles",
}

GROUP_EFFECTS_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' (language then a fixed effect; sentences and annotators are (lang, id))",
    "metric": f"{listed(TESTED)} of each annotation",
    **EFFECTS_COLUMNS,
    "n_sentences": "sentences (random-intercept levels)",
    "n_annotators": "annotators (random-intercept levels)",
    "sentence_var": "variance of the random intercept per sentence",
    "annotator_var": "variance of the random intercept per annotator",
    "residual_var": "residual variance",
}

GROUP_TESTS_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' for the languages pooled",
    "metric": f"{listed(TESTED)} of each annotation",
    "test": "omnibus, gender, nativeness, gender_x_nativeness, or group_x_language (pooled only)",
    "description": "what the statistic measures",
    "null": "the null hypothesis and how its permutations respect it",
    "statistic": "its observed value",
    "p_permutation": "permutation p (two-sided for contrasts, upper tail for omnibus and group_x_language)",
    **ATTAINABLE_SCHEMA,
    "informative": "false when every assignment gives the same statistic (p = 1 whatever the data) or none can be "
    "computed",
    "hypothesis": "the test's id in the run's analysis plan (results/analysis_plan.parquet)",
    "n_annotators": "annotators whose labels are permuted",
    "permutations": "assignments compared with the observed one: every distinct one when there are at most "
    "10,000 (the p-value is then exact), else random shuffles",
    "limit": "why this design cannot support the test's level ('' when it can): Freedman & Lane's interaction "
    "tests on P@1 below FREEDMAN_LANE_MIN_ANNOTATORS annotators of a group in a batch",
}

# Freedman & Lane's residual permutation is exact only approximately. bench-stats shows the interaction
# tests at their level on MozArt's real design (14 to 17 annotators of each group in each language) and on
# the demo's two for MRR, but on P@1 with two they rejected 0.007 (gender x nativeness) and 0 (group x
# language) of 400 null data sets: on P@1 they need the real design's smallest cell (docs/statistics.md).
FREEDMAN_LANE = ("gender_x_nativeness", "group_x_language")
FREEDMAN_LANE_MIN_ANNOTATORS = INTERACTION_MIN_ANNOTATORS

GROUP_DISPARITY_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' for the languages pooled",
    "metric": f"{listed(COLUMNS)} (percent)",
    "sigma_gd": "population standard deviation of the metric across the four groups (equation 1 of MozArt; "
    "percentage points)",
    "null_mean": "mean of sigma_gd when no group differs (its permutation distribution): sigma_gd is positive even "
    "then, from the sampling of annotators and sentences",
    "debiased": "sqrt(max(0, sigma_gd^2 - the mean of sigma_gd^2 when no group differs)): the disparity beyond "
    "what sampling alone gives",
    "ci_low": "interval of the groups' true disparity (the sigma_gd of their true means) at ci_level: the smallest "
    "sigma_gd of the group effects that the permutation test of those effects does not reject (0 exactly when the "
    "test of no disparity does not reject); at most 50, the largest sigma_gd of percentages (reached where the "
    "permutations cannot bound it)",
    "ci_high": "the largest such sigma_gd",
    "ci_level": "1 - alpha",
    "critical_value": "the value sigma_gd must exceed for its permutation test to reject at alpha (unadjusted): the "
    "quantile of its permutation distribution",
    "p_permutation": "permutation p of sigma_gd, labels permuted among all the annotators of each batch (the omnibus "
    "null: all four groups exchangeable)",
    **ATTAINABLE_SCHEMA,
    "informative": "false when every assignment gives the same sigma_gd (every score equal, say): p = 1 whatever the "
    "data",
    "hypothesis": "the test's id in the run's analysis plan (results/analysis_plan.parquet)",
    "n_annotators": "annotators",
    "n_sentences": "sentences",
    "permutations": "assignments compared with the observed one: every distinct one when there are at most "
    "10,000 (the p-value is then exact), else random shuffles",
}


def hypothesis_id(cloze_set: str, table: str, *parts: str) -> str:
    """The id of a group test of a cloze set in the run's analysis plan."""
    return "/".join(["cloze", cloze_set, table, *map(str, parts)])


def _omnibus(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The annotations' between-group sum of squares (NaN with fewer than two groups)."""
    total_s, total_n = sums.sum(axis=1), counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = total_s / total_n
        grand = total_s.sum(axis=1) / total_n.sum(axis=1)
    return np.where((total_n > 0).sum(axis=1) >= 2, np.nansum(total_n * (means - grand[:, None]) ** 2, axis=1), np.nan)


def _group_x_language(sums: np.ndarray, counts: np.ndarray, variances: np.ndarray, reference: int) -> np.ndarray:
    """Languages pooled: Cochran's Q of each group's per-language gap to the reference, each gap
    weighted by the inverse of its variance (the two cells' annotator-clustered variances,
    :func:`_cluster_variance`); a gap without a positive variance is left out."""
    with np.errstate(invalid="ignore", divide="ignore"):
        lang_means = sums / counts
        gaps = lang_means - lang_means[:, :, [reference]]
        cell = variances / counts**2
        weight = 1 / (cell + cell[:, :, [reference]])
    weight = np.where(np.isfinite(gaps) & np.isfinite(weight), weight, 0.0)
    gaps = np.nan_to_num(gaps)
    total = weight.sum(axis=1, keepdims=True)
    centre = (weight * gaps).sum(axis=1, keepdims=True) / np.where(total > 0, total, 1)
    return (weight * (gaps - centre) ** 2).sum(axis=(1, 2))


def _score_values(data: pd.DataFrame, metrics: Sequence[str]) -> dict[str, np.ndarray]:
    """Each annotation's scores of the metrics and of the scores that break their ties, each once."""
    needed = dict.fromkeys([*metrics, *(TIE_BREAK[m] for m in metrics if m in TIE_BREAK)])
    return {m: data[m].to_numpy(float) for m in needed}


def _blocks(scores: pd.DataFrame):
    """(model, lang or 'all', data) of every comparison, in the scores' order."""
    for model, by_model in scores.groupby("model", sort=False):
        langs = list(dict.fromkeys(by_model["lang"]))
        for lang in [*langs, "all"]:
            yield model, lang, by_model if lang == "all" else by_model[by_model["lang"] == lang]


def _rng(seed: int, lang: str, test: str) -> np.random.Generator:
    """The same permutations of a language's annotators for every model and metric (reproducible),
    a stream of its own for each test."""
    return np.random.default_rng([seed, *lang.encode(), 0, *test.encode()])


def group_winloss(
    scores: pd.DataFrame,
    *,
    cloze_set: str,
    alpha: float,
    permutations: int,
    seed: int,
    metrics: Sequence[str] = METRICS,
) -> pd.DataFrame:
    """Win/loss of every two annotator groups per model, language (and all pooled) and metric
    (:data:`GROUP_WINLOSS_SCHEMA`), each pair tested by permuting its own two groups' labels (its size
    at ``alpha``)."""
    rows = []
    for model, lang, data in _blocks(scores):
        design = AnnotatorDesign.of(data)
        values = _score_values(data, metrics)
        for a, b in GROUP_PAIRS:
            ia, ib = GROUPS.index(a), GROUPS.index(b)
            labels = design.assignments(permutations, _rng(seed, lang, f"{a}-{b}"), design.strata(among=(a, b)))
            won, shared = net_wins(list(values.values()), design, labels, ia, ib)
            counted = dict(zip(values, won, strict=True))
            for metric in metrics:
                wins_a, wins_b, _ = counted[metric]
                net = wins_a - wins_b
                # net wins of a 0/1 metric take few values: counting every tie as extreme made the
                # test far stricter than its level (0.018 at alpha 0.05, docs/statistics.md), so
                # ties are broken by the sentence-adjusted gap of the same two groups, then by the
                # gap of the metric's tie-break
                ties = [np.nan_to_num(np.round(counted[m][2], 10)) for m in (metric, TIE_BREAK.get(metric)) if m]
                two, one = (
                    permutation_p(
                        net[:1], net[1:, None], two_sided=side, secondary=[(t[:1], t[1:, None]) for t in ties]
                    )[0]
                    if shared[0]
                    else np.nan
                    for side in (True, False)
                )
                rows.append(
                    {
                        "model": model,
                        "lang": lang,
                        "metric": metric,
                        "group_a": a,
                        "group_b": b,
                        "n_sentences": int(shared[0]),
                        "wins_a": int(wins_a[0]),
                        "wins_b": int(wins_b[0]),
                        "ties": int(shared[0] - wins_a[0] - wins_b[0]),
                        "p_permutation": two,
                        "p_one_sided": one,
                        "permutations": len(labels) - 1,
                        **_attainable(net, alpha=alpha, secondary=ties, testable=bool(shared[0])),
                        "informative": bool(shared[0]) and not all(_degenerate(v) for v in (net, *ties)),
                        "hypothesis": hypothesis_id(cloze_set, "group_winloss", model, lang, metric, f"{a}-{b}"),
                    }
                )
    return pd.DataFrame(rows, columns=list(GROUP_WINLOSS_SCHEMA)).astype({"informative": bool})


def group_gaps(
    scores: pd.DataFrame,
    *,
    cloze_set: str,
    reference: str = "MN",
    alpha: float,
    permutations: int,
    seed: int,
    metrics: Sequence[str] = METRICS,
) -> pd.DataFrame:
    """Each group's sentence-adjusted gap to ``reference`` per model, language (and all pooled) and
    metric, with its permutation test and the interval that inverts the test of the gap alone at 1 -
    ``alpha`` (:data:`GROUP_GAPS_SCHEMA`)."""
    ref = GROUPS.index(reference)
    rows = []
    for model, lang, data in _blocks(scores):
        design = AnnotatorDesign.of(data)
        values = _score_values(data, metrics)
        for group in (g for g in GROUPS if g != reference):
            g = GROUPS.index(group)
            labels = design.assignments(
                permutations,
                _rng(seed, lang, f"{min(group, reference)}-{max(group, reference)}"),
                design.strata(among=(group, reference)),
            )
            # the shift model: group's scores minus delta; the statistic is linear in it (c - delta d)
            shifted = (design.group[design.annotator] == g).astype(float)
            (d, *sentence_gaps), shared = sentence_gap([shifted, *values.values()], design, labels, g, ref)
            # gaps that are equal as numbers (rational scores summed in another order) are ties
            d, gaps = np.round(d, 10), dict(zip(values, np.round(sentence_gaps, 10), strict=True))
            for metric in metrics:
                row = _gap_test(gaps, metric, d, alpha=alpha)
                rows.append(
                    {
                        "model": model,
                        "lang": lang,
                        "metric": metric,
                        "group": group,
                        "reference": reference,
                        **row,
                        "ci_level": 1 - alpha,
                        "hypothesis": hypothesis_id(cloze_set, "group_gaps", model, lang, metric, group, reference),
                        "n_sentences": int(shared[0]),
                        "n_annotators": int(np.isin(design.group, [g, ref]).sum()),
                        "permutations": len(labels) - 1,
                    }
                )
    return pd.DataFrame(rows, columns=list(GROUP_GAPS_SCHEMA)).astype({"informative": bool, "interval_connected": bool})


def _gap_test(gaps: dict[str, np.ndarray], metric: str, slope: np.ndarray, *, alpha: float) -> dict:
    """One gap row's numbers from every assignment's gaps (row 0 observed) and the slope of the metric's gap
    in a shift of the group's scores: the gap, its test (its ties broken by the finer score's gap, not when
    the gap alone cannot vary: the row stays uninformative rather than a test of the finer score), the test
    of the gap alone and the interval that inverts it."""
    gap = gaps[metric]
    degenerate = _degenerate(gap)
    finer = TIE_BREAK.get(metric)
    statistic = gap if degenerate or not finer else np.round(gap + TIE_WEIGHT * np.nan_to_num(gaps[finer]), 10)
    shifts = inverted_permutation_interval(gap, slope, alpha=alpha)
    # the scores lie in [0, 1], so a true gap does in [-1, 1]: beyond it no value is an estimate's
    return {
        **_attainable(statistic, alpha=alpha),
        "gap": gap[0] + 0.0,
        "ci_low": max(shifts.low, -MAX_GAP) + 0.0,
        "ci_high": min(shifts.high, MAX_GAP) + 0.0,
        "interval_connected": shifts.connected,
        "p_permutation": permutation_p(statistic[:1], statistic[1:, None])[0],
        "p_untied": permutation_p(gap[:1], gap[1:, None])[0],
        "informative": not degenerate,
    }


def _additive_fit(values: np.ndarray, design: AnnotatorDesign, columns: np.ndarray) -> np.ndarray:
    """Fitted values of ``values ~ sentence + columns`` (per-annotator covariates, least squares)."""
    x = np.zeros((len(values), design.n_units + columns.shape[1]))
    x[np.arange(len(values)), design.unit] = 1.0
    x[:, design.n_units :] = columns[design.annotator]
    beta, *_ = np.linalg.lstsq(x, values, rcond=None)
    return x @ beta


def _cluster_variance(
    residuals: np.ndarray, design: AnnotatorDesign, labels: np.ndarray, sums: np.ndarray, counts: np.ndarray
) -> np.ndarray:
    """Per assignment (rows of ``labels``), language and group: the annotator-clustered variance of
    the cell's sum of residuals, sum over the annotators it holds of (R_k - n_k r)^2, where R_k is an
    annotator's sum of residuals, n_k its annotations and r the cell's mean residual (CR0; ``sums``
    and ``counts``: the cells' residual sums and annotations under the same labels,
    :func:`group_sums`). A cell whose annotators' residuals agree (two annotators with the same
    answers) gets exactly 0, not the rounding error of the expansion, which would weigh it a billion
    times over the others."""
    n_langs, g = int(design.lang.max()) + 1, len(GROUPS)
    r = np.bincount(design.annotator, weights=residuals, minlength=len(design.group))
    n = np.bincount(design.annotator, minlength=len(design.group)).astype(float)
    cells = design.lang[None, :] * g + labels
    size = n_langs * g
    r2, nr, n2 = cell_sums([r * r, n * r, n * n], cells, size)
    total_r, total_n = sums.reshape(len(labels), size), counts.reshape(len(labels), size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(total_n > 0, total_r / total_n, 0.0)
    variance = r2 - 2 * mean * nr + mean**2 * n2
    rounding = 1e-9 * (r2 + mean**2 * n2)  # the expansion's cancellation error is about 1e-16 of its terms
    return np.where(variance > rounding, variance, 0.0).reshape(len(labels), n_langs, g)


def _freedman_lane(
    values: np.ndarray, design: AnnotatorDesign, labels: np.ndarray, columns: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group sums, counts and clustered variances under Freedman & Lane's permutation: the observed
    labels' sums of the additive model's fitted values plus the permuted labels' sums of its
    residuals (each annotator's residuals moving as a block), and the variance of each cell's sum from
    the residual blocks it holds (:func:`_cluster_variance`), so that the statistic can be studentized
    in every permutation; row 0 is the observed data."""
    fitted = _additive_fit(values, design, columns)
    residuals = values - fitted
    sums_fit, counts = group_sums(fitted, design, labels[:1])
    sums_res, counts_res = group_sums(residuals, design, labels)
    variances = _cluster_variance(residuals, design, labels, sums_res, counts_res)
    return sums_fit + sums_res, np.broadcast_to(counts, sums_res.shape), variances


def _attainable(
    statistic: np.ndarray, *, alpha: float, two_sided: bool = True, secondary=(), testable: bool = True
) -> dict:
    """A row's p_min and size (:data:`ATTAINABLE_SCHEMA`, :func:`plmfair.stats.permutation.attainable`); a test with
    nothing to compare (no statistic, no shared sentence) can give nothing but p = 1."""
    if not testable or not np.isfinite(statistic).any():
        return {"p_min": 1.0, "size": 0.0}
    reach = attainable(statistic, alpha=alpha, two_sided=two_sided, secondary=secondary)
    return {"p_min": reach.p_min, "size": reach.size}


def _permutation_test(
    statistic: Callable[..., np.ndarray], parts: tuple[np.ndarray, ...], *, two_sided: bool, alpha: float
) -> tuple[float, float, bool, dict]:
    """(observed statistic, permutation p, whether its permutation distribution is degenerate, what the
    design allows: :func:`_attainable`) from group sums and counts (and, for a studentized statistic,
    variances) whose row 0 is observed."""
    values = statistic(*parts)
    p = float(permutation_p(values[:1], values[1:, None], two_sided=two_sided)[0])
    reach = _attainable(values, alpha=alpha, two_sided=two_sided)
    return float(values[0]), p, _degenerate(values, two_sided=two_sided), reach


def _degenerate(values: np.ndarray, *, two_sided: bool = True) -> bool:
    """Every assignment gives the observed statistic (|statistic| when two-sided), to 1e-10: p = 1 whatever
    the data, so the row cannot inform."""
    values = np.asarray(values, dtype=float)
    if not np.isfinite(values[0]):
        return True
    values = np.abs(values) if two_sided else values
    return bool(np.all(np.abs(values[1:] - values[0]) <= 1e-10))


def _studentized_contrast(weights) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The contrast of the groups' means (languages pooled) over its annotator-clustered standard
    error; NaN where that error is 0."""
    w, contrast = np.asarray(weights), _contrast(weights)

    def statistic(sums: np.ndarray, counts: np.ndarray, variances: np.ndarray) -> np.ndarray:
        n = counts.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            variance = (w**2 * variances.sum(axis=1) / n**2).sum(axis=1)
            return np.where(variance > 0, contrast(sums, counts) / np.sqrt(variance), np.nan)

    return statistic


def _contrast(weights) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    return lambda sums, counts: group_means(sums, counts) @ np.asarray(weights)


def group_tests(
    scores: pd.DataFrame,
    *,
    cloze_set: str,
    reference: str = "MN",
    alpha: float,
    permutations: int,
    seed: int,
    metrics: Sequence[str] = METRICS,
) -> pd.DataFrame:
    """The omnibus, 2 x 2 and group x language permutation tests, each under its own null
    (:data:`GROUP_TESTS_SCHEMA`; their size at ``alpha``)."""
    ref = GROUPS.index(reference)
    tests = []
    for model, lang, data in _blocks(scores):
        design = AnnotatorDesign.of(data)
        full = design.assignments(permutations, _rng(seed, lang, "all"))
        by_nativeness = design.assignments(
            permutations, _rng(seed, lang, "gender"), design.strata(within=_NON_NATIVE.astype(int))
        )
        by_gender = design.assignments(
            permutations, _rng(seed, lang, "nativeness"), design.strata(within=_FEMALE.astype(int))
        )
        additive = np.column_stack([_FEMALE, _NON_NATIVE]).astype(float)
        per_group = np.eye(len(GROUPS))[:, [g for g in range(len(GROUPS)) if g != ref]]
        for metric in metrics:
            values = data[metric].to_numpy(float)
            runs: dict[str, tuple[Callable[..., np.ndarray], tuple[np.ndarray, ...], bool]] = {
                "omnibus": (_omnibus, group_sums(values, design, full), False),
                "gender": (_contrast(CONTRASTS_2X2["gender"][0]), group_sums(values, design, by_nativeness), True),
                "nativeness": (_contrast(CONTRASTS_2X2["nativeness"][0]), group_sums(values, design, by_gender), True),
                "gender_x_nativeness": (
                    _studentized_contrast(CONTRASTS_2X2["gender_x_nativeness"][0]),
                    _freedman_lane(values, design, full, additive[design.group]),
                    True,
                ),
            }
            if lang == "all" and len(set(data["lang"])) > 1:
                runs["group_x_language"] = (
                    lambda s, n, v: _group_x_language(s, n, v, ref),
                    _freedman_lane(values, design, full, per_group[design.group]),
                    False,
                )
            for name, (statistic, parts, two_sided) in runs.items():
                observed, p, degenerate, reach = _permutation_test(statistic, parts, two_sided=two_sided, alpha=alpha)
                drawn = len(parts[0]) - 1
                tests.append(
                    {
                        "model": model,
                        "lang": lang,
                        "metric": metric,
                        "test": name,
                        "statistic": observed,
                        "p_permutation": p,
                        **reach,
                        "informative": not degenerate and not np.isnan(p),
                        "hypothesis": hypothesis_id(cloze_set, "group_tests", model, lang, metric, name),
                        "n_annotators": len(design.group),
                        "permutations": drawn,
                        "limit": _freedman_lane_limit(name, metric, design),
                    }
                )
    tests = pd.DataFrame(tests, columns=[c for c in GROUP_TESTS_SCHEMA if c not in ("description", "null")])
    descriptions = {
        "omnibus": "between-group sum of squares of the annotations' scores (any group differs)",
        "group_x_language": "Cochran's Q of each group's per-language gap to the reference, each gap weighted by "
        "the inverse of its annotator-clustered variance (the gaps differ between languages)",
        **{name: text for name, (_, text) in CONTRASTS_2X2.items()},
        "gender_x_nativeness": "interaction (MN - MNN) - (FN - FNN) over its annotator-clustered standard error",
    }
    tests["description"] = tests["test"].map(descriptions)
    tests["null"] = tests["test"].map(TEST_NULLS)
    return tests[list(GROUP_TESTS_SCHEMA)].astype({"informative": bool})


def _freedman_lane_limit(test: str, metric: str, design: AnnotatorDesign) -> str:
    """Why ``design`` cannot support a Freedman & Lane test's level on ``metric`` ('' when it can): fewer
    annotators of some group in some batch than :data:`FREEDMAN_LANE_MIN_ANNOTATORS` asks."""
    need = FREEDMAN_LANE_MIN_ANNOTATORS.get(metric)
    if test not in FREEDMAN_LANE or need is None:
        return ""
    cells = pd.Series(1, index=pd.MultiIndex.from_arrays([design.stratum, design.group])).groupby(level=[0, 1]).sum()
    fewest = int(cells.min()) if len(cells) else 0
    if fewest >= need:
        return ""
    return (
        f"Freedman & Lane's test on P@1 holds its level with {need} or more annotators of each group in each "
        f"batch (bench-stats); this design has {fewest}"
    )


def _sigma_gd(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per row, the population standard deviation (x 100) of the groups' means (groups without an annotation left "
    "out)."""
    means = 100 * group_means(sums, counts)
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.nanmean((means - np.nanmean(means, axis=1, keepdims=True)) ** 2, axis=1))


def _sphere(dimensions: int, count: int) -> np.ndarray:
    """About ``count`` directions spread evenly over a half of the unit sphere in ``dimensions`` (1 to 3):
    a line's one direction, a half circle's angles, a Fibonacci lattice on a hemisphere (the other half
    is the same lines walked the other way)."""
    if dimensions == 1:
        return np.ones((1, 1))
    if dimensions == 2:
        angle = np.pi * (np.arange(count) + 0.5) / count
        return np.column_stack([np.cos(angle), np.sin(angle)])
    i = np.arange(count) + 0.5
    z = i / count  # the upper hemisphere, evenly in height (Archimedes: evenly in area)
    turn = np.pi * (1 + 5**0.5) * i
    radius = np.sqrt(1 - z**2)
    return np.column_stack([radius * np.cos(turn), radius * np.sin(turn), z])


# directions along which the disparity interval looks for the group effects the test accepts (the demo's
# pooled upper ends move by 0.5% or less between 60, 120, 400 and 1,600 of them: docs/statistics.md), and how
# many of them are swept at once (memory: directions x assignments x 8 events)
DISPARITY_DIRECTIONS = 120
DIRECTION_CHUNK = 25
# the largest sigma_gd of means of scores in [0, 1] (half the groups at 0, half at 1), and the largest gap
MAX_SIGMA, MAX_GAP = 0.5, 1.0


def _disparity_interval(
    values: np.ndarray, design: AnnotatorDesign, labels: np.ndarray, *, alpha: float
) -> tuple[float, float]:
    """The interval of the groups' true disparity (sigma_gd of their true means, percentage points) that
    inverts sigma_gd's permutation test: every vector of group effects delta whose test is not rejected,
    the test of delta permuting the labels of the data with delta taken off each annotator's scores (its
    own group's), which makes them exchangeable when the effects are delta. The accepted effects are
    found along :data:`DISPARITY_DIRECTIONS` lines through no effect, each solved exactly
    (:func:`plmfair.stats.permutation.accepted_extent`), and their sigma_gd's range is the interval: it holds 0
    exactly when the test of no disparity does not reject, and covers at least as often as the test
    holds its level (a projection: conservative)."""
    g = len(GROUPS)
    n = np.bincount(design.annotator, minlength=len(design.group)).astype(float)
    y = np.bincount(design.annotator, weights=values, minlength=len(design.group))
    origin = np.eye(g)[design.group] * n[:, None]  # per annotator, its annotations in its own group's column
    sums, counts, *moved = cell_sums([y, n, *origin.T], labels, g)
    present = counts[0] > 0
    k = int(present.sum())
    if k < 2:
        return float("nan"), float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (sums / counts)[:, present]  # (assignments, k)
        share = (np.stack(moved, axis=2) / counts[:, :, None])[:, present][:, :, present]  # (assignments, k, k)
    # sum-zero directions, scaled so that sigma_gd(direction) = 1: spread evenly, and the contrasts an effect
    # is most often planted along (one group against the others, one group against another)
    basis = np.linalg.svd(np.eye(k) - 1 / k)[0][:, : k - 1]
    contrasts = [np.eye(k)[i] - 1 / k for i in range(k)]
    contrasts += [np.eye(k)[i] - np.eye(k)[j] for i, j in combinations(range(k), 2)]
    directions = np.column_stack([basis @ _sphere(k - 1, DISPARITY_DIRECTIONS).T, *contrasts])
    directions = directions / np.sqrt((directions**2).mean(axis=0))  # (k, D), each of sigma_gd 1

    def spread(v):  # population variance across the groups (axis 1)
        return ((v - v.mean(axis=1, keepdims=True)) ** 2).mean(axis=1)

    def covariance(a, b):
        return ((a - a.mean(axis=1, keepdims=True)) * (b - b.mean(axis=1, keepdims=True))).mean(axis=1)

    slopes = np.einsum("rgh,hd->rgd", share, directions)  # each assignment's adjusted means move by -r x this
    qa = spread(slopes) - 1.0  # observed: its own labels, so its means move by -r x direction, spread 1
    qb = -2 * (covariance(means[:, :, None], slopes) - covariance(means[:1, :, None], directions[None]))
    qc = spread(means) - spread(means[:1])
    qc = np.where(np.abs(qc) <= 1e-9 * max(float(spread(means[:1])[0]), 1e-300), 0.0, qc)
    qc = np.broadcast_to(qc[:, None], qa.shape)
    near_parts, far_parts = [], []
    for chunk in range(0, directions.shape[1], DIRECTION_CHUNK):  # lines x permutations x 8 events at a time
        part = slice(chunk, chunk + DIRECTION_CHUNK)
        near, far = accepted_extent(qa[1:, part].T, qb[1:, part].T, qc[1:, part].T, alpha=alpha)
        near_parts.append(near)
        far_parts.append(far)
    nearest, farthest = np.concatenate(near_parts), np.concatenate(far_parts)
    # no effect is accepted exactly when the test of no disparity does not reject (the data's own statistic)
    no_effect = (1 + np.sum(qc[1:, 0] >= 0)) / len(qc) >= alpha
    low = 0.0 if no_effect else float(np.nanmin(nearest))
    high = float(np.nanmax(farthest)) if np.isfinite(farthest).any() or np.isinf(farthest).any() else np.nan
    # scores lie in [0, 1], so the groups' true means do, and their sigma_gd is at most 0.5: the interval
    # holds no value it could not be (which leaves its coverage as it is)
    return 100 * min(low, MAX_SIGMA), 100 * min(high, MAX_SIGMA)


def group_disparity(
    scores: pd.DataFrame,
    *,
    cloze_set: str,
    alpha: float,
    permutations: int,
    seed: int,
) -> pd.DataFrame:
    """sigma_gd of P@1, P@5 and MRR across the four groups per model and language (and all pooled),
    with its debiased value, its null mean, its critical value, its permutation test and the interval
    of the true disparity that inverts it (:data:`GROUP_DISPARITY_SCHEMA`)."""
    rows = []
    for model, lang, metric, values, design, labels, sigma in _disparities(
        scores, permutations=permutations, seed=seed
    ):
        null_square = float(np.nanmean(sigma[1:] ** 2))
        degenerate = _degenerate(sigma, two_sided=False)
        low, high = (np.nan, np.nan) if degenerate else _disparity_interval(values, design, labels, alpha=alpha)
        rows.append(
            {
                "model": model,
                "lang": lang,
                "metric": metric,
                "sigma_gd": sigma[0],
                "null_mean": float(np.nanmean(sigma[1:])),
                "debiased": float(np.sqrt(max(0.0, sigma[0] ** 2 - null_square))),
                "ci_low": low,
                "ci_high": high,
                "ci_level": 1 - alpha,
                "critical_value": permutation_threshold(sigma[1:], alpha=alpha),
                "p_permutation": permutation_p(sigma[:1], sigma[1:, None], two_sided=False)[0],
                **_attainable(sigma, alpha=alpha, two_sided=False),
                "informative": not degenerate,
                "hypothesis": hypothesis_id(cloze_set, "group_disparity", model, lang, metric),
                "n_annotators": len(design.group),
                "n_sentences": design.n_units,
                "permutations": len(labels) - 1,
            }
        )
    return pd.DataFrame(rows, columns=list(GROUP_DISPARITY_SCHEMA)).astype({"informative": bool})


class _Disparity(NamedTuple):
    """sigma_gd of one metric of a model in one language (or all pooled) under the groups observed (first) and
    under each permutation of them, with what it was computed from."""

    model: str
    lang: str
    metric: str
    values: np.ndarray
    design: AnnotatorDesign
    labels: np.ndarray
    sigma: np.ndarray


def _disparities(
    scores: pd.DataFrame,
    *,
    permutations: int,
    seed: int,
    pooled_only: bool = False,
    metrics: Sequence[str] | None = None,
) -> Iterator[_Disparity]:
    """Each block's sigma_gd and its permutation null (:class:`_Disparity`), the languages pooled only with
    ``pooled_only``, of the ``metrics`` named (None: every one of :data:`DISPARITY_METRICS`): the same
    permutations whether the table (:func:`group_disparity`) or the robustness analysis asks."""
    for model, lang, data in _blocks(scores):
        if pooled_only and lang != "all":
            continue
        design = AnnotatorDesign.of(data)
        labels = design.assignments(permutations, _rng(seed, lang, "all"))
        for column, metric in DISPARITY_METRICS.items():
            if metrics is None or metric in metrics:
                values = data[column].to_numpy(float)
                sigma = _sigma_gd(*group_sums(values, design, labels))
                yield _Disparity(model, lang, metric, values, design, labels, sigma)


def pooled_disparity(
    scores: pd.DataFrame, *, alpha: float, permutations: int, seed: int, metrics: Sequence[str] | None = None
) -> pd.DataFrame:
    """sigma_gd of each metric (``metrics``: those named, by the name :data:`DISPARITY_METRICS` gives; None:
    every one) with the languages pooled, per model, and its permutation test's p (the same permutations as
    :func:`group_disparity`'s pooled rows), without the interval: the statistic the robustness analysis
    recomputes many times (:mod:`plmfair.cloze.robustness`). ``differ``: p < alpha."""
    rows = []
    for block in _disparities(scores, permutations=permutations, seed=seed, pooled_only=True, metrics=metrics):
        p = float(permutation_p(block.sigma[:1], block.sigma[1:, None], two_sided=False)[0])
        informative = not _degenerate(block.sigma, two_sided=False)
        rows.append(
            {
                "model": block.model,
                "metric": block.metric,
                "sigma_gd": block.sigma[0],
                "p_value": p,
                "differ": informative and p < alpha,
            }
        )
    return pd.DataFrame(rows, columns=["model", "metric", "sigma_gd", "p_value", "differ"])


def group_effects(scores: pd.DataFrame, *, reference: str = "MN", metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """``metric ~ group + (1|sentence) + (1|annotator)`` per model, language (and all pooled, with
    language as a fixed effect) and metric: the group terms as effect sizes with their standard errors,
    no test (:data:`GROUP_EFFECTS_SCHEMA`; the gaps' permutation tests carry the marks)."""
    rows = []
    for model, lang, data in _blocks(scores):
        data = data.assign(sentence=data["lang"] + ":" + data["s_id"], annotator=data["lang"] + ":" + data["u_id"])
        for metric in metrics:
            context = f"{model}/{lang}/{metric}"
            if reference not in set(data["group"]):
                log.warning("%s: no annotation of the reference group %s; no mixed model fitted", context, reference)
                continue
            formula = f"value ~ C(group, Treatment(reference='{reference}'))"
            refs = {"group": reference, "Intercept": reference}
            if lang == "all":
                formula += " + C(lang)"
                refs["lang"] = sorted(set(data["lang"]))[0]
                refs["Intercept"] = f"{reference}, {refs['lang']}"
            fit = crossed_mixed_model(
                data.assign(value=data[metric].astype(float)), formula, effects=("sentence", "annotator")
            )
            rows.append(
                effects_rows(fit, reference=refs, context=context).assign(
                    model=model,
                    lang=lang,
                    metric=metric,
                    n_obs=len(data),
                    n_sentences=data["sentence"].nunique(),
                    n_annotators=data["annotator"].nunique(),
                    sentence_var=fit.variances.get("sentence", np.nan),
                    annotator_var=fit.variances.get("annotator", np.nan),
                    residual_var=fit.variances.get("residual", np.nan),
                )
            )
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=list(GROUP_EFFECTS_SCHEMA))
    return out.reindex(columns=list(GROUP_EFFECTS_SCHEMA)).astype({"converged": bool})
