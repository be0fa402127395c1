"""Annotator groups compared with the annotator as the unit: gaps, omnibus, 2 x 2, win/loss and sigma_gd
disparity, each a permutation test under its own null within the batches of the design. The design,
the nulls and the estimands: docs/statistics.md, "Group tests"."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations, product
from math import factorial, lcm, prod

import numpy as np
import pandas as pd

from plmfair.cloze.annotations import GROUPS
from plmfair.cloze.ties import TIE_BREAK, TIE_WEIGHT, gap_statistic, then_by
from plmfair.stats import (
    EFFECTS_COLUMNS,
    bonferroni,
    crossed_mixed_model,
    design_blocks,
    effects_rows,
    holm,
    inverted_permutation_interval,
    mark_wald_family,
    percentile_interval,
    permutation_p,
    permutation_threshold,
)

log = logging.getLogger(__name__)

METRICS = ("rr", "hit1")
# the annotation scores whose group means are the metrics of the paper's tables (percent)
DISPARITY_METRICS = {"hit1": "p_at_1", "hit5": "p_at_5", "rr": "mrr"}
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

GROUP_WINLOSS_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' for the languages' sentences pooled",
    "metric": "rr or hit1 of each annotation",
    "group_a": "first group",
    "group_b": "second group",
    "n_sentences": "sentences both groups answered",
    "wins_a": "sentences where group_a's mean of the metric over its annotations is higher (compared exactly)",
    "wins_b": "sentences where group_b's mean is higher",
    "ties": "sentences where both means are equal",
    "p_permutation": "two-sided permutation p of wins_a - wins_b (ties in it broken by the sentence-adjusted gap, "
    f"{then_by()}), {_PAIR_NULL} (NaN without a shared sentence)",
    "p_one_sided": "the same, alternative: group_a wins more",
    "p_holm": "p_permutation, Holm-adjusted over the rows of the same model and metric",
    "significant": "p_holm < alpha",
}

GROUP_GAPS_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' for the languages pooled (sentences are (lang, s_id))",
    "metric": "rr or hit1 of each annotation",
    "group": "the group compared with the reference",
    "reference": "the reference group",
    "gap": "weighted mean over the sentences both answered of (group's mean - reference's mean) on the sentence, "
    "weight n_group n_reference / (n_group + n_reference): the gap adjusted for batch composition",
    "ci_low": "lower end of the interval: the smallest shift of the group's scores the permutation test does not "
    "reject at the Bonferroni level (-inf when the permutations cannot bound it)",
    "ci_high": "upper end of that interval",
    "ci_level": "confidence level of the interval, 1 - alpha / family size",
    "p_permutation": "two-sided permutation p of the gap (" + gap_statistic() + ", which breaks ties), " + _PAIR_NULL,
    "p_bonferroni": "p_permutation times the family size (the group terms of one model, language and metric), "
    "capped at 1",
    "significant": "p_bonferroni < alpha: exactly when the interval excludes 0",
    "n_sentences": "sentences both groups answered",
    "n_annotators": "annotators of the two groups",
    "informative": "false when the row cannot inform about a gap: every assignment gives the same |gap| (a "
    "degenerate permutation distribution: p = 1 whatever the data) or the permutations cannot bound the interval",
    "permutations": "assignments compared with the observed one: every distinct one when there are at most "
    "10,000 (the p-value is then exact), else random shuffles",
}

GROUP_EFFECTS_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' (language then a fixed effect; sentences and annotators are (lang, id))",
    "metric": "rr or hit1 of each annotation",
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
    "metric": "rr or hit1 of each annotation",
    "test": "omnibus, gender, nativeness, gender_x_nativeness, or group_x_language (pooled only)",
    "description": "what the statistic measures",
    "null": "the null hypothesis and how its permutations respect it",
    "statistic": "its observed value",
    "p_permutation": "permutation p (two-sided for contrasts, upper tail for omnibus and group_x_language)",
    "p_holm": "Holm-adjusted over gender, nativeness and their interaction (of one model, language, metric); "
    "equal to p_permutation for the tests that stand alone",
    "significant": "p_holm < alpha",
    "n_annotators": "annotators whose labels are permuted",
    "permutations": "assignments compared with the observed one: every distinct one when there are at most "
    "10,000 (the p-value is then exact), else random shuffles",
}

GROUP_DISPARITY_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' for the languages pooled",
    "metric": "p_at_1, p_at_5 or mrr (percent)",
    "sigma_gd": "population standard deviation of the metric across the four groups (equation 1 of MozArt; "
    "percentage points)",
    "ci_low": "bootstrap percentile interval of sigma_gd (sentences resampled within batch, annotators within group "
    "and batch), lower end",
    "ci_high": "upper end",
    "ci_level": "confidence level of the bootstrap interval",
    "null_mean": "mean of sigma_gd when no group differs (its permutation distribution): sigma_gd is positive even "
    "then, from the sampling of annotators and sentences",
    "debiased": "sqrt(max(0, sigma_gd^2 - the mean of sigma_gd^2 when no group differs)): the disparity beyond "
    "what sampling alone gives",
    "debiased_low": "the same bootstrap's percentile interval of the debiased value, lower end",
    "debiased_high": "upper end",
    "critical_value": "the value sigma_gd must exceed to be significant: the quantile of its permutation "
    "distribution at the family's Bonferroni level",
    "p_permutation": "permutation p of sigma_gd, labels permuted among all the annotators of each batch (the omnibus "
    "null: all four groups exchangeable)",
    "p_bonferroni": "p_permutation times the family size (the languages and pooled of one model and metric), "
    "capped at 1",
    "significant": "p_bonferroni < alpha: exactly when sigma_gd exceeds critical_value",
    "n_annotators": "annotators",
    "n_sentences": "sentences",
    "permutations": "assignments compared with the observed one: every distinct one when there are at most "
    "10,000 (the p-value is then exact), else random shuffles",
    "bootstrap": "bootstrap replicates drawn",
}


@dataclass(frozen=True)
class AnnotatorDesign:
    """The annotations of one model's scores on one language (or all pooled), indexed for permutation:
    per annotation its annotator and unit (sentence); per annotator its group, language and stratum
    (batch within language), within which labels are shuffled."""

    annotator: np.ndarray
    unit: np.ndarray
    group: np.ndarray
    lang: np.ndarray
    stratum: np.ndarray
    n_units: int

    @classmethod
    def of(cls, data: pd.DataFrame) -> AnnotatorDesign:
        sentence = (data["lang"].astype(str) + ":" + data["s_id"].astype(str)).to_numpy()
        annotator = (data["lang"].astype(str) + ":" + data["u_id"].astype(str)).to_numpy()
        codes, levels = pd.factorize(annotator)
        first = pd.Series(range(len(codes))).groupby(codes).first().to_numpy()
        group = pd.Categorical(data["group"].to_numpy()[first], categories=GROUPS).codes
        if (group < 0).any():
            raise ValueError(f"unknown annotator group(s) {sorted(set(data['group']) - set(GROUPS))}")
        units, _ = pd.factorize(sentence)
        lang = pd.factorize(data["lang"].to_numpy()[first])[0]
        blocks = design_blocks(sentence, annotator)[first]
        stratum = pd.factorize(pd.Series(lang).astype(str) + ":" + pd.Series(blocks).astype(str))[0]
        return cls(codes, units, group, lang, stratum, int(units.max()) + 1 if len(units) else 0)

    def strata(self, *, among: Sequence[str] = GROUPS, within: np.ndarray | None = None) -> np.ndarray:
        """Per annotator, the stratum its label is shuffled in: its batch, split further by
        ``within`` (an attribute of its group, e.g. nativeness); -1 (label kept) for annotators of
        groups not ``among`` those shuffled."""
        keyed = self.stratum * 2 + (within[self.group] if within is not None else 0)
        return np.where(np.isin(self.group, [GROUPS.index(g) for g in among]), keyed, -1)

    def assignments(
        self, n_permutations: int, rng: np.random.Generator, strata: np.ndarray | None = None
    ) -> np.ndarray:
        """Group labels per annotator: the observed ones (row 0), then the assignments compared with
        them, shuffled within ``strata`` (default: the batches; an annotator of stratum -1 keeps its
        label). When the strata allow at most :data:`EXACT_LIMIT` distinct assignments, all of them but
        one copy of the observed one (so that (1 + count) / (1 + rows) is the exact p); otherwise
        ``n_permutations`` random shuffles."""
        strata = self.stratum if strata is None else strata
        shuffled = [np.flatnonzero(strata == s) for s in np.unique(strata[strata >= 0])]
        if distinct_assignments([self.group[m] for m in shuffled]) <= EXACT_LIMIT:
            return self._enumerated(shuffled)
        out = np.empty((n_permutations + 1, len(self.group)), dtype=np.int64)
        out[:] = self.group
        for members in shuffled:
            labels = self.group[members]
            out[1:, members] = rng.permuted(np.broadcast_to(labels, (n_permutations, len(labels))), axis=1)
        return out

    def _enumerated(self, shuffled: list[np.ndarray]) -> np.ndarray:
        """Every distinct assignment within the strata, the observed one first and not repeated."""
        per_stratum = [list(_arrangements(tuple(self.group[m]))) for m in shuffled]
        rows = [self.group.copy()]
        observed = tuple(tuple(self.group[m]) for m in shuffled)
        for combination in product(*per_stratum):
            if combination == observed:
                continue
            row = self.group.copy()
            for members, labels in zip(shuffled, combination, strict=True):
                row[members] = labels
            rows.append(row)
        return np.array(rows, dtype=np.int64)


# the most distinct label assignments a permutation test enumerates rather than samples
EXACT_LIMIT = 10_000


def distinct_assignments(strata_labels: Sequence[np.ndarray]) -> int:
    """How many distinct ways the labels can be arranged within each stratum: the product of the
    multinomial coefficients n! / (n_1! ... n_k!)."""
    total = 1
    for labels in strata_labels:
        counts = np.unique(labels, return_counts=True)[1]
        total *= factorial(int(counts.sum())) // prod(factorial(int(c)) for c in counts)
        if total > EXACT_LIMIT:
            return total
    return total


def _arrangements(labels: tuple) -> Iterator[tuple]:
    """The distinct orderings of a multiset of labels."""
    if not labels:
        yield ()
        return
    for first in sorted(set(labels)):
        rest = list(labels)
        rest.remove(first)
        for tail in _arrangements(tuple(rest)):
            yield (first, *tail)


def _cell_sums(weight_sets: Sequence[np.ndarray], cells: np.ndarray, n_cells: int) -> list[np.ndarray]:
    """For each of ``weight_sets``, per row of ``cells`` (one assignment each), the sum of the weights
    falling in every cell (the rows' cells flattened once for all of them)."""
    n_rows = cells.shape[0]
    index = (np.arange(n_rows)[:, None] * n_cells + cells).ravel()
    return [
        np.bincount(index, weights=np.tile(weights, n_rows), minlength=n_rows * n_cells).reshape(n_rows, n_cells)
        for weights in weight_sets
    ]


def _group_sums(values: np.ndarray, design: AnnotatorDesign, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per assignment (rows of ``labels``), language and group: sum of the values and annotations."""
    n_langs, g = int(design.lang.max()) + 1, len(GROUPS)
    per_annotator = np.bincount(design.annotator, weights=values, minlength=len(design.group))
    count_annotator = np.bincount(design.annotator, minlength=len(design.group)).astype(float)
    cells = design.lang[None, :] * g + labels
    sums, counts = _cell_sums([per_annotator, count_annotator], cells, n_langs * g)
    return sums.reshape(len(labels), n_langs, g), counts.reshape(len(labels), n_langs, g)


def _group_means(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per assignment, the four groups' means over every language's annotations."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums.sum(axis=1) / counts.sum(axis=1)


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


def _sentence_gap(
    value_sets: Sequence[np.ndarray], design: AnnotatorDesign, labels: np.ndarray, a: int, b: int
) -> tuple[list[np.ndarray], np.ndarray]:
    """Per assignment, for each of ``value_sets``, the gap of group ``a`` to group ``b`` adjusted for
    sentence (:func:`_weighted_gap`), and the number of sentences both answered."""
    per_annotation = labels[:, design.annotator]
    side = np.where(per_annotation == a, 0, np.where(per_annotation == b, 1, 2))
    cells = np.where(side < 2, design.unit[None, :] * 2 + side, 2 * design.n_units)
    n_cells = 2 * design.n_units + 1
    counts, *value_sums = (
        sums[:, :-1].reshape(len(labels), -1, 2)
        for sums in _cell_sums([np.ones(len(design.annotator)), *value_sets], cells, n_cells)
    )
    gaps = [_weighted_gap(sums[:, :, 0], counts[:, :, 0], sums[:, :, 1], counts[:, :, 1]) for sums in value_sums]
    return gaps, ((counts[:, :, 0] > 0) & (counts[:, :, 1] > 0)).sum(axis=1)


def _weighted_gap(sum_a: np.ndarray, n_a: np.ndarray, sum_b: np.ndarray, n_b: np.ndarray) -> np.ndarray:
    """Per assignment (rows; columns the sentences), sum over the sentences both groups answered of
    w_s (mean_a,s - mean_b,s) / sum of w_s, w_s = n_a n_b / (n_a + n_b); NaN where none was."""
    both = (n_a > 0) & (n_b > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = np.where(both, n_a * n_b / (n_a + n_b), 0.0)
        total = weight.sum(axis=1)
        diff = np.where(both, sum_a / np.where(both, n_a, 1) - sum_b / np.where(both, n_b, 1), 0.0)
        return np.where(total > 0, (weight * diff).sum(axis=1) / np.where(total > 0, total, 1), np.nan)


def _exact_scale(values: np.ndarray) -> int | None:
    """The smallest integer that makes every value an integer (rr: 60), when one below 10^6 does."""
    denominators = {Fraction(float(v)).limit_denominator(1000).denominator for v in np.unique(values)}
    scale = lcm(*denominators) if denominators else 1
    if scale > 10**6 or not np.allclose(values * scale, np.round(values * scale), atol=1e-9):
        return None
    return scale


def _net_wins(
    value_sets: Sequence[np.ndarray], design: AnnotatorDesign, labels: np.ndarray, a: int, b: int
) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], np.ndarray]:
    """Per assignment, for groups ``a`` and ``b`` and each of ``value_sets``: (wins of a, wins of b, the
    sentence-adjusted gap of a to b, :func:`_weighted_gap` from the same sums); and the shared units.
    Means are compared exactly (sums and counts cross-multiplied as integers) when the values are
    rationals of small denominators, else to 1e-12."""
    g = len(GROUPS)
    cells = design.unit[None, :] * g + labels[:, design.annotator]
    scales = [_exact_scale(values) for values in value_sets]
    # integer sums (exact in float64 below 2^53) when the values are small rationals
    weight_sets = [
        np.round(values * scale) if scale else values for values, scale in zip(value_sets, scales, strict=True)
    ]
    counts, *value_sums = (
        sums.reshape(len(labels), design.n_units, g)
        for sums in _cell_sums([np.ones(len(design.annotator)), *weight_sets], cells, design.n_units * g)
    )
    both = (counts[:, :, a] > 0) & (counts[:, :, b] > 0)
    out = []
    for sums, scale in zip(value_sums, scales, strict=True):
        left, right = sums[:, :, a] * counts[:, :, b], sums[:, :, b] * counts[:, :, a]
        tolerance = 0 if scale else 1e-12
        wins_a = (both & (left > right + tolerance)).sum(axis=1)
        wins_b = (both & (left < right - tolerance)).sum(axis=1)
        gap = _weighted_gap(sums[:, :, a], counts[:, :, a], sums[:, :, b], counts[:, :, b]) / (scale or 1)
        out.append((wins_a, wins_b, gap))
    return out, both.sum(axis=1)


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
    alpha: float = 0.05,
    permutations: int = 4999,
    seed: int = 2022,
    metrics: Sequence[str] = METRICS,
) -> pd.DataFrame:
    """Win/loss of every two annotator groups per model, language (and all pooled) and metric
    (:data:`GROUP_WINLOSS_SCHEMA`), each pair tested by permuting its own two groups' labels."""
    rows = []
    for model, lang, data in _blocks(scores):
        design = AnnotatorDesign.of(data)
        values = _score_values(data, metrics)
        for a, b in GROUP_PAIRS:
            ia, ib = GROUPS.index(a), GROUPS.index(b)
            labels = design.assignments(permutations, _rng(seed, lang, f"{a}-{b}"), design.strata(among=(a, b)))
            counted, shared = _net_wins(list(values.values()), design, labels, ia, ib)
            counted = dict(zip(values, counted, strict=True))
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
                    }
                )
    out = pd.DataFrame(rows, columns=[c for c in GROUP_WINLOSS_SCHEMA if c not in ("p_holm", "significant")])
    out["p_holm"] = out.groupby(["model", "metric"], sort=False)["p_permutation"].transform(holm) if len(out) else []
    out["significant"] = out["p_holm"] < alpha
    return out[list(GROUP_WINLOSS_SCHEMA)].astype({"significant": bool})


def group_gaps(
    scores: pd.DataFrame,
    *,
    reference: str = "MN",
    alpha: float = 0.05,
    permutations: int = 4999,
    seed: int = 2022,
    metrics: Sequence[str] = METRICS,
) -> pd.DataFrame:
    """Each group's sentence-adjusted gap to ``reference`` per model, language (and all pooled) and
    metric, with its permutation test and the interval that inverts it (:data:`GROUP_GAPS_SCHEMA`)."""
    ref = GROUPS.index(reference)
    others = [g for g in GROUPS if g != reference]
    level = 1 - alpha / len(others)
    rows = []
    for model, lang, data in _blocks(scores):
        design = AnnotatorDesign.of(data)
        values = _score_values(data, metrics)
        for group in others:
            g = GROUPS.index(group)
            labels = design.assignments(
                permutations,
                _rng(seed, lang, f"{min(group, reference)}-{max(group, reference)}"),
                design.strata(among=(group, reference)),
            )
            # the shift model: group's scores minus delta; the statistic is linear in it (c - delta d)
            shifted = (design.group[design.annotator] == g).astype(float)
            (d, *gaps), shared = _sentence_gap([shifted, *values.values()], design, labels, g, ref)
            # gaps that are equal as numbers (rational scores summed in another order) are ties
            d, gaps = np.round(d, 10), dict(zip(values, np.round(gaps, 10), strict=True))
            for metric in metrics:
                gap = gaps[metric]
                degenerate = (
                    bool(np.all(np.abs(np.abs(gap[1:]) - abs(gap[0])) <= 1e-10)) if np.isfinite(gap[0]) else True
                )
                # the statistic: the gap, its ties broken by the finer score's gap (not when the gap
                # alone cannot vary: the row stays uninformative rather than a test of the finer score)
                finer = TIE_BREAK.get(metric)
                c = gap if degenerate or not finer else np.round(gap + TIE_WEIGHT * np.nan_to_num(gaps[finer]), 10)
                p = permutation_p(c[:1], c[1:, None])[0]
                significant = bool(bonferroni([p], m=len(others))[0] < alpha)
                low, high = inverted_permutation_interval(c, d, alpha=alpha, family=len(others))
                # the accepted shifts need not be one interval (each permutation's extreme set is solved
                # exactly): 0 accepted outside their hull is added to it; 0 rejected inside it is reported
                if not np.isnan(p) and not significant and not low <= 0 <= high:
                    low, high = min(low, 0.0), max(high, 0.0)
                elif significant and low <= 0 <= high:
                    log.warning(
                        "%s/%s/%s %s vs %s: no gap (0) is rejected but lies between accepted shifts; the "
                        "interval drawn holds it",
                        model,
                        lang,
                        metric,
                        group,
                        reference,
                    )
                rows.append(
                    {
                        "model": model,
                        "lang": lang,
                        "metric": metric,
                        "group": group,
                        "reference": reference,
                        "gap": gap[0] + 0.0,
                        "informative": not degenerate and bool(np.isfinite(low) and np.isfinite(high)),
                        "ci_low": low + 0.0,
                        "ci_high": high + 0.0,
                        "ci_level": level,
                        "p_permutation": p,
                        "n_sentences": int(shared[0]),
                        "n_annotators": int(np.isin(design.group, [g, ref]).sum()),
                        "permutations": len(labels) - 1,
                    }
                )
    out = pd.DataFrame(rows, columns=[c for c in GROUP_GAPS_SCHEMA if c not in ("p_bonferroni", "significant")])
    out["p_bonferroni"] = bonferroni(out["p_permutation"].to_numpy(), m=len(others))
    out["significant"] = out["p_bonferroni"] < alpha
    return out[list(GROUP_GAPS_SCHEMA)].astype({"significant": bool})


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
    :func:`_group_sums`). A cell whose annotators' residuals agree (two annotators with the same
    answers) gets exactly 0, not the rounding error of the expansion, which would weigh it a billion
    times over the others."""
    n_langs, g = int(design.lang.max()) + 1, len(GROUPS)
    r = np.bincount(design.annotator, weights=residuals, minlength=len(design.group))
    n = np.bincount(design.annotator, minlength=len(design.group)).astype(float)
    cells = design.lang[None, :] * g + labels
    size = n_langs * g
    r2, nr, n2 = _cell_sums([r * r, n * r, n * n], cells, size)
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
    sums_fit, counts = _group_sums(fitted, design, labels[:1])
    sums_res, counts_res = _group_sums(residuals, design, labels)
    variances = _cluster_variance(residuals, design, labels, sums_res, counts_res)
    return sums_fit + sums_res, np.broadcast_to(counts, sums_res.shape), variances


def _permutation_test(
    statistic: Callable[..., np.ndarray], parts: tuple[np.ndarray, ...], *, two_sided: bool
) -> tuple[float, float]:
    """(observed statistic, permutation p) from group sums and counts (and, for a studentized statistic,
    variances) whose row 0 is observed."""
    values = statistic(*parts)
    return float(values[0]), float(permutation_p(values[:1], values[1:, None], two_sided=two_sided)[0])


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
    return lambda sums, counts: _group_means(sums, counts) @ np.asarray(weights)


def group_tests(
    scores: pd.DataFrame,
    *,
    reference: str = "MN",
    alpha: float = 0.05,
    permutations: int = 4999,
    seed: int = 2022,
    metrics: Sequence[str] = METRICS,
) -> pd.DataFrame:
    """The omnibus, 2 x 2 and group x language permutation tests, each under its own null
    (:data:`GROUP_TESTS_SCHEMA`)."""
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
            runs = {
                "omnibus": (_omnibus, _group_sums(values, design, full), False),
                "gender": (_contrast(CONTRASTS_2X2["gender"][0]), _group_sums(values, design, by_nativeness), True),
                "nativeness": (_contrast(CONTRASTS_2X2["nativeness"][0]), _group_sums(values, design, by_gender), True),
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
                observed, p = _permutation_test(statistic, parts, two_sided=two_sided)
                drawn = len(parts[0]) - 1
                tests.append(
                    {
                        "model": model,
                        "lang": lang,
                        "metric": metric,
                        "test": name,
                        "statistic": observed,
                        "p_permutation": p,
                        "n_annotators": len(design.group),
                        "permutations": drawn,
                    }
                )
    tests = pd.DataFrame(
        tests, columns=["model", "lang", "metric", "test", "statistic", "p_permutation", "n_annotators", "permutations"]
    )
    in_2x2 = tests["test"].isin(list(CONTRASTS_2X2))
    tests["p_holm"] = tests["p_permutation"]
    tests.loc[in_2x2, "p_holm"] = (
        tests[in_2x2].groupby(["model", "lang", "metric"], sort=False)["p_permutation"].transform(holm)
    )
    tests["significant"] = tests["p_holm"] < alpha
    descriptions = {
        "omnibus": "between-group sum of squares of the annotations' scores (any group differs)",
        "group_x_language": "Cochran's Q of each group's per-language gap to the reference, each gap weighted by "
        "the inverse of its annotator-clustered variance (the gaps differ between languages)",
        **{name: text for name, (_, text) in CONTRASTS_2X2.items()},
        "gender_x_nativeness": "interaction (MN - MNN) - (FN - FNN) over its annotator-clustered standard error",
    }
    tests["description"] = tests["test"].map(descriptions)
    tests["null"] = tests["test"].map(TEST_NULLS)
    return tests[list(GROUP_TESTS_SCHEMA)].astype({"significant": bool})


def _sigma_gd(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per row, the population standard deviation (x 100) of the groups' means (groups without an annotation left "
    "out)."""
    means = 100 * _group_means(sums, counts)
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.nanmean((means - np.nanmean(means, axis=1, keepdims=True)) ** 2, axis=1))


def _bootstrap_weights(design: AnnotatorDesign, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """How often each annotation is drawn in each bootstrap replicate (replicates x annotations): the
    sentences of each batch resampled with replacement, and within each batch the annotators of each
    group; an annotation is drawn as often as its sentence times its annotator. Both sources of
    variation are resampled, so a positive sigma_gd does not get a zero-width interval because every
    annotator of a small cell is drawn alike."""
    n_annotators = len(design.group)
    by_annotator = np.zeros((replicates, n_annotators))
    cells = pd.factorize(pd.Series(design.stratum).astype(str) + ":" + pd.Series(design.group).astype(str))[0]
    for cell in np.unique(cells):
        members = np.flatnonzero(cells == cell)
        drawn = members[rng.integers(0, len(members), size=(replicates, len(members)))]
        np.add.at(by_annotator, (np.arange(replicates)[:, None], drawn), 1.0)
    # the batch of each sentence: that of its annotators (a sentence is answered within one batch)
    unit_stratum = np.zeros(design.n_units, dtype=np.int64)
    unit_stratum[design.unit] = design.stratum[design.annotator]
    by_unit = np.zeros((replicates, design.n_units))
    for stratum in np.unique(unit_stratum):
        members = np.flatnonzero(unit_stratum == stratum)
        drawn = members[rng.integers(0, len(members), size=(replicates, len(members)))]
        np.add.at(by_unit, (np.arange(replicates)[:, None], drawn), 1.0)
    return by_annotator[:, design.annotator] * by_unit[:, design.unit]


def group_disparity(
    scores: pd.DataFrame,
    *,
    alpha: float = 0.05,
    permutations: int = 4999,
    bootstrap: int = 999,
    seed: int = 2022,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """sigma_gd of P@1, P@5 and MRR across the four groups per model and language (and all pooled),
    with a bootstrap interval, its debiased value, its null mean, its critical value and its
    permutation test (:data:`GROUP_DISPARITY_SCHEMA`)."""
    rows = []
    for model, lang, data in _blocks(scores):
        design = AnnotatorDesign.of(data)
        labels = design.assignments(permutations, _rng(seed, lang, "all"))
        weights = _bootstrap_weights(design, bootstrap, _rng(seed, lang, "bootstrap"))
        one_hot = np.eye(len(GROUPS))[design.group[design.annotator]]  # annotations x groups
        boot_counts = (weights @ one_hot)[:, None, :]
        for column, metric in DISPARITY_METRICS.items():
            values = data[column].to_numpy(float)
            sigma = _sigma_gd(*_group_sums(values, design, labels))
            boot = _sigma_gd((weights @ (values[:, None] * one_hot))[:, None, :], boot_counts)
            null_square = float(np.nanmean(sigma[1:] ** 2))
            low, high = percentile_interval(boot, confidence=confidence)
            debiased_low, debiased_high = percentile_interval(
                np.sqrt(np.maximum(0.0, boot**2 - null_square)), confidence=confidence
            )
            rows.append(
                {
                    "model": model,
                    "lang": lang,
                    "metric": metric,
                    "sigma_gd": sigma[0],
                    "null": sigma[1:],
                    "ci_low": low,
                    "ci_high": high,
                    "ci_level": confidence,
                    "null_mean": float(np.nanmean(sigma[1:])),
                    "debiased": float(np.sqrt(max(0.0, sigma[0] ** 2 - null_square))),
                    "debiased_low": debiased_low,
                    "debiased_high": debiased_high,
                    "p_permutation": permutation_p(sigma[:1], sigma[1:, None], two_sided=False)[0],
                    "n_annotators": len(design.group),
                    "n_sentences": design.n_units,
                    "permutations": len(labels) - 1,
                    "bootstrap": bootstrap,
                }
            )
    out = pd.DataFrame(rows)
    if out.empty:
        return pd.DataFrame(columns=list(GROUP_DISPARITY_SCHEMA))
    family = out.groupby(["model", "metric"], sort=False)["p_permutation"].transform("size").to_numpy()
    out["p_bonferroni"] = np.minimum(1.0, out["p_permutation"] * family)
    out["critical_value"] = [
        permutation_threshold(null, alpha=alpha, family=m) for null, m in zip(out["null"], family, strict=True)
    ]
    out["significant"] = out["p_bonferroni"] < alpha
    return out[list(GROUP_DISPARITY_SCHEMA)].astype({"significant": bool})


def group_effects(
    scores: pd.DataFrame, *, reference: str = "MN", alpha: float = 0.05, metrics: Sequence[str] = METRICS
) -> pd.DataFrame:
    """``metric ~ group + (1|sentence) + (1|annotator)`` per model, language (and all pooled, with
    language as a fixed effect) and metric, each group term marked by the model's own Wald test,
    Bonferroni over the group terms, the interval at the same level (:data:`GROUP_EFFECTS_SCHEMA`)."""
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
            terms = mark_wald_family(effects_rows(fit, reference=refs, context=context), prefix="group[", alpha=alpha)
            rows.append(
                terms.assign(
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
    return out.reindex(columns=list(GROUP_EFFECTS_SCHEMA)).astype({"converged": bool, "significant": bool})
