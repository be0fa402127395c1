"""Annotator groups compared with the annotator as the unit: gaps, omnibus, 2 x 2 and win/loss, each a permutation
test under its own null within the batches of the design, and the schemas of their files; the helpers every group
test shares (the blocks of a score file, the seeded permutations, a test's attainable p). The disparity sigma_gd is
:mod:`plmfair.cloze.disparity`, the mixed-model effect sizes :mod:`plmfair.cloze.group_effects`; the design and its
assignments are :mod:`plmfair.cloze.annotator_design`; the nulls and the estimands: docs/statistics.md, "Group tests".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import combinations

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
from plmfair.cloze.measures import BY_SCORE, INTERACTION_MIN_ANNOTATORS, TESTED, listed
from plmfair.cloze.ties import TIE_BREAK, TIE_WEIGHT, gap_statistic, then_by
from plmfair.stats.permutation import (
    attainable,
    inverted_permutation_interval,
    permutation_p,
)

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
    "hypothesis": "the test's id in the run's hypotheses (results/hypotheses.parquet), which holds its family, "
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
    "hypothesis": "the test's id in the run's hypotheses (results/hypotheses.parquet)",
    "n_sentences": "sentences both groups answered",
    "n_annotators": "annotators of the two groups",
    "informative": "false when every assignment gives the same |gap| (a degenerate permutation distribution: p = 1 "
    "whatever the data)",
    "permutations": "assignments compared with the observed one: every distinct one when there are at most "
    "10,000 (the p-value is then exact), else random shuffles",
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
    "hypothesis": "the test's id in the run's hypotheses (results/hypotheses.parquet)",
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

# the largest sigma_gd of means of scores in [0, 1] (half the groups at 0, half at 1), and the largest gap
MAX_SIGMA, MAX_GAP = 0.5, 1.0


def hypothesis_id(cloze_set: str, table: str, *parts: str) -> str:
    """The id of a group test of a cloze set in the run's hypotheses."""
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


def comparison_blocks(scores: pd.DataFrame) -> Iterator[tuple[str, str, pd.DataFrame]]:
    """(model, lang or 'all', data) of every comparison, in the scores' order."""
    for model, by_model in scores.groupby("model", sort=False):
        langs = list(dict.fromkeys(by_model["lang"]))
        for lang in [*langs, "all"]:
            yield model, lang, by_model if lang == "all" else by_model[by_model["lang"] == lang]


def permutation_rng(seed: int, lang: str, test: str) -> np.random.Generator:
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
    for model, lang, data in comparison_blocks(scores):
        design = AnnotatorDesign.of(data)
        values = _score_values(data, metrics)
        for a, b in GROUP_PAIRS:
            ia, ib = GROUPS.index(a), GROUPS.index(b)
            labels = design.assignments(
                permutations, permutation_rng(seed, lang, f"{a}-{b}"), design.strata(among=(a, b))
            )
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
                        **attainable_columns(net, alpha=alpha, secondary=ties, testable=bool(shared[0])),
                        "informative": bool(shared[0]) and not all(is_degenerate(v) for v in (net, *ties)),
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
    for model, lang, data in comparison_blocks(scores):
        design = AnnotatorDesign.of(data)
        values = _score_values(data, metrics)
        for group in (g for g in GROUPS if g != reference):
            g = GROUPS.index(group)
            labels = design.assignments(
                permutations,
                permutation_rng(seed, lang, f"{min(group, reference)}-{max(group, reference)}"),
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
    degenerate = is_degenerate(gap)
    finer = TIE_BREAK.get(metric)
    statistic = gap if degenerate or not finer else np.round(gap + TIE_WEIGHT * np.nan_to_num(gaps[finer]), 10)
    shifts = inverted_permutation_interval(gap, slope, alpha=alpha)
    # the scores lie in [0, 1], so a true gap does in [-1, 1]: beyond it no value is an estimate's
    return {
        **attainable_columns(statistic, alpha=alpha),
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


def attainable_columns(
    statistic: np.ndarray,
    *,
    alpha: float,
    two_sided: bool = True,
    secondary: Sequence[np.ndarray] = (),
    testable: bool = True,
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
    design allows: :func:`attainable_columns`) from group sums and counts (and, for a studentized statistic,
    variances) whose row 0 is observed."""
    values = statistic(*parts)
    p = float(permutation_p(values[:1], values[1:, None], two_sided=two_sided)[0])
    reach = attainable_columns(values, alpha=alpha, two_sided=two_sided)
    return float(values[0]), p, is_degenerate(values, two_sided=two_sided), reach


def is_degenerate(values: np.ndarray, *, two_sided: bool = True) -> bool:
    """Every assignment gives the observed statistic (|statistic| when two-sided), to 1e-10: p = 1 whatever
    the data, so the row cannot inform."""
    values = np.asarray(values, dtype=float)
    if not np.isfinite(values[0]):
        return True
    values = np.abs(values) if two_sided else values
    return bool(np.all(np.abs(values[1:] - values[0]) <= 1e-10))


def _studentized_contrast(weights: Sequence[float]) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The contrast of the groups' means (languages pooled) over its annotator-clustered standard
    error; NaN where that error is 0."""
    w, contrast = np.asarray(weights), _contrast(weights)

    def statistic(sums: np.ndarray, counts: np.ndarray, variances: np.ndarray) -> np.ndarray:
        n = counts.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            variance = (w**2 * variances.sum(axis=1) / n**2).sum(axis=1)
            return np.where(variance > 0, contrast(sums, counts) / np.sqrt(variance), np.nan)

    return statistic


def _contrast(weights: Sequence[float]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
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
    for model, lang, data in comparison_blocks(scores):
        design = AnnotatorDesign.of(data)
        full = design.assignments(permutations, permutation_rng(seed, lang, "all"))
        by_nativeness = design.assignments(
            permutations, permutation_rng(seed, lang, "gender"), design.strata(within=_NON_NATIVE.astype(int))
        )
        by_gender = design.assignments(
            permutations, permutation_rng(seed, lang, "nativeness"), design.strata(within=_FEMALE.astype(int))
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
