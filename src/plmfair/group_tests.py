"""Annotator groups compared, with the annotator as the unit: is a group gap more than chance?

In MozArt each language has batches of sentences, each batch answered by a few annotators, and
an annotator answers one batch and belongs to one group: the group is a property of the
annotator, not of the annotation. Hundreds of annotations are not hundreds of independent
observations of a group; about fifteen annotators per group and language are. Every test here
respects that (MozArt and constructed cloze sets with answers alike; the scores are each
annotation's ``rr`` and ``hit1``, :data:`plmfair.metrics.ANNOTATION_SCORES_SCHEMA`):

- **Permutation tests** (the tests the tables and figures mark): the group labels are shuffled
  among the annotators of each batch (the blocks of the sentence-annotator design,
  :func:`plmfair.stats.design_blocks`; within language when languages are pooled), every
  annotator keeping their answers; exact for a between-annotator factor, valid for binary and
  discrete scores, with no distributional assumption. Statistics: each group's gap to the
  reference group (difference of the groups' mean scores over their annotations); an omnibus
  statistic (the annotations' between-group sum of squares); the 2 x 2 of gender and nativeness
  (main effects as differences of averaged group means, and their interaction); for the pooled
  languages, the group x language interaction (the spread of each group's per-language gaps,
  weighted by their sizes).
- **Mixed model** (effect sizes and intervals): ``metric ~ group + (1|sentence) + (1|annotator)``
  by REML (:func:`plmfair.stats.crossed_mixed_model`, lme4's ``lmer``), per language and pooled
  (language a fixed effect). Its Wald p-values are reported, not marked: the scores are binary or
  take six values, and a Gaussian model's p-values are not exact for them.
- **Win/loss** (the paper-style description, as dialect-robust evaluation compares dialects):
  per sentence both groups answered, which group's mean is higher, compared exactly (rational
  scores: 1/3 against 1/3 is a tie); tested by the same permutation of annotators (the net wins),
  not by a sign test, which would take sentences answered by the same few annotators as
  independent.

Multiplicity: Holm's step-down adjustment within each family of tests (:func:`plmfair.stats.holm`),
the families being a model's three gaps to the reference in one language and metric; its three
2 x 2 tests in one language and metric; its win/loss comparisons of one metric (every pair of
groups in every language and pooled). The omnibus and group x language tests stand alone. A row is
``significant`` when its Holm-adjusted permutation p-value is below alpha.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations
from math import lcm

import numpy as np
import pandas as pd

from plmfair.annotations import GROUPS
from plmfair.stats import (
    EFFECTS_COLUMNS,
    crossed_mixed_model,
    design_blocks,
    effects_rows,
    holm,
    permutation_p,
)

log = logging.getLogger(__name__)

METRICS = ("rr", "hit1")
GROUP_PAIRS = tuple(combinations(GROUPS, 2))
# The 2 x 2 of gender (M, F) and nativeness (N, NN), as contrasts of the four group means (MN, FN, MNN, FNN)
CONTRASTS_2X2 = {
    "gender": ((0.5, -0.5, 0.5, -0.5), "men's mean minus women's (each averaged over native and non-native)"),
    "nativeness": ((0.5, 0.5, -0.5, -0.5), "natives' mean minus non-natives' (each averaged over men and women)"),
    "gender_x_nativeness": ((1.0, -1.0, -1.0, 1.0), "interaction: (MN - MNN) - (FN - FNN)"),
}

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
    "p_permutation": "two-sided permutation p of wins_a - wins_b, group labels shuffled among the annotators of "
                     "each batch (NaN without a shared sentence)",
    "p_one_sided": "the same, alternative: group_a wins more",
    "p_holm": "p_permutation, Holm-adjusted over the rows of the same model and metric",
    "significant": "p_holm < alpha",
}

GROUP_EFFECTS_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' (language then a fixed effect; sentences and annotators are (lang, id))",
    "metric": "rr or hit1 of each annotation",
    **EFFECTS_COLUMNS,
    "p_permutation": "permutation p of the group's gap to the reference (difference of mean scores), group labels "
                     "shuffled among the annotators of each batch; NaN for other terms",
    "p_holm": "p_permutation, Holm-adjusted over the group terms of the same model, language and metric",
    "significant": "p_holm < alpha (the test the tables and figures mark)",
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
    "statistic": "its observed value",
    "p_permutation": "permutation p (two-sided for contrasts, upper tail for omnibus and group_x_language)",
    "p_holm": "Holm-adjusted over gender, nativeness and their interaction (of one model, language, metric); "
              "equal to p_permutation for the tests that stand alone",
    "significant": "p_holm < alpha",
    "n_annotators": "annotators whose labels are permuted",
    "permutations": "random permutations drawn",
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

    def assignments(self, n_permutations: int, rng: np.random.Generator) -> np.ndarray:
        """Group labels per annotator: the observed ones (row 0), then ``n_permutations`` shuffles
        within strata."""
        out = np.empty((n_permutations + 1, len(self.group)), dtype=np.int64)
        out[0] = self.group
        for stratum in np.unique(self.stratum):
            members = np.flatnonzero(self.stratum == stratum)
            labels = self.group[members]
            out[1:, members] = rng.permuted(np.broadcast_to(labels, (n_permutations, len(labels))), axis=1)
        return out


def _cell_sums(weights: np.ndarray, cells: np.ndarray, n_cells: int) -> np.ndarray:
    """Per row of ``cells`` (one assignment each), the sum of ``weights`` falling in every cell."""
    rows = np.arange(cells.shape[0])[:, None] * n_cells
    return np.bincount((rows + cells).ravel(), weights=np.broadcast_to(weights, cells.shape).ravel(),
                       minlength=cells.shape[0] * n_cells).reshape(cells.shape[0], n_cells)


def _group_sums(values: np.ndarray, design: AnnotatorDesign, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per assignment (rows of ``labels``), language and group: sum of the values and annotations."""
    n_langs, g = int(design.lang.max()) + 1, len(GROUPS)
    per_annotator = np.bincount(design.annotator, weights=values, minlength=len(design.group))
    count_annotator = np.bincount(design.annotator, minlength=len(design.group)).astype(float)
    cells = design.lang[None, :] * g + labels
    sums = _cell_sums(per_annotator, cells, n_langs * g)
    counts = _cell_sums(count_annotator, cells, n_langs * g)
    return sums.reshape(len(labels), n_langs, g), counts.reshape(len(labels), n_langs, g)


def _statistics(sums: np.ndarray, counts: np.ndarray, reference: int) -> dict[str, np.ndarray]:
    """Every permutation statistic, one value per assignment (NaN where a group it needs is empty)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        total_s, total_n = sums.sum(axis=1), counts.sum(axis=1)
        means = total_s / total_n
        out = {f"gap_{GROUPS[g]}": means[:, g] - means[:, reference] for g in range(len(GROUPS)) if g != reference}
        grand = total_s.sum(axis=1) / total_n.sum(axis=1)
        present = total_n > 0
        out["omnibus"] = np.where(present.sum(axis=1) >= 2,
                                  np.nansum(total_n * (means - grand[:, None]) ** 2, axis=1), np.nan)
        for name, (weights, _) in CONTRASTS_2X2.items():
            out[name] = means @ np.asarray(weights)
        if sums.shape[1] > 1:  # languages pooled: does a group's gap depend on the language?
            lang_means = sums / counts
            gaps = lang_means - lang_means[:, :, [reference]]
            weight = 1 / (1 / counts + 1 / counts[:, :, [reference]])
            weight = np.where(np.isfinite(gaps), weight, 0.0)
            gaps = np.nan_to_num(gaps)
            centre = (weight * gaps).sum(axis=1, keepdims=True) / np.where(weight.sum(axis=1, keepdims=True) > 0,
                                                                          weight.sum(axis=1, keepdims=True), 1)
            out["group_x_language"] = (weight * (gaps - centre) ** 2).sum(axis=(1, 2))
    return out


def _exact_scale(values: np.ndarray) -> int | None:
    """The smallest integer that makes every value an integer (rr: 60), when one below 10^6 does."""
    denominators = {Fraction(float(v)).limit_denominator(1000).denominator for v in np.unique(values)}
    scale = lcm(*denominators) if denominators else 1
    if scale > 10**6 or not np.allclose(values * scale, np.round(values * scale), atol=1e-9):
        return None
    return scale


def _net_wins(values: np.ndarray, design: AnnotatorDesign, labels: np.ndarray, pairs: Sequence[tuple[int, int]]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per assignment and pair of groups: wins of the first, of the second, ties and shared units.
    Means are compared exactly (sums and counts cross-multiplied as integers) when the values are
    rationals of small denominators, else to 1e-12."""
    g = len(GROUPS)
    scale = _exact_scale(values)
    # integer sums (exact in float64 below 2^53) when the values are small rationals
    weights = np.round(values * scale) if scale else values
    cells = design.unit[None, :] * g + labels[:, design.annotator]
    sums = _cell_sums(weights, cells, design.n_units * g).reshape(len(labels), design.n_units, g)
    counts = _cell_sums(np.ones(len(values)), cells, design.n_units * g).reshape(len(labels), design.n_units, g)
    wins_a, wins_b, ties, shared = (np.zeros((len(labels), len(pairs)), dtype=np.int64) for _ in range(4))
    for k, (a, b) in enumerate(pairs):
        both = (counts[:, :, a] > 0) & (counts[:, :, b] > 0)
        left, right = sums[:, :, a] * counts[:, :, b], sums[:, :, b] * counts[:, :, a]
        if scale:
            higher, lower = left > right, left < right
        else:
            higher, lower = left > right + 1e-12, left < right - 1e-12
        wins_a[:, k] = (both & higher).sum(axis=1)
        wins_b[:, k] = (both & lower).sum(axis=1)
        shared[:, k] = both.sum(axis=1)
        ties[:, k] = shared[:, k] - wins_a[:, k] - wins_b[:, k]
    return wins_a, wins_b, ties, shared


def _blocks(scores: pd.DataFrame):
    """(model, lang or 'all', data) of every comparison, in the scores' order."""
    for model, by_model in scores.groupby("model", sort=False):
        langs = list(dict.fromkeys(by_model["lang"]))
        for lang in [*langs, "all"]:
            yield model, lang, by_model if lang == "all" else by_model[by_model["lang"] == lang]


def _rng(seed: int, lang: str) -> np.random.Generator:
    """The same permutations of a language's annotators for every model and metric (reproducible)."""
    return np.random.default_rng([seed, *lang.encode()])


def group_winloss(scores: pd.DataFrame, *, alpha: float = 0.05, permutations: int = 4999, seed: int = 2022,
                  metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """Win/loss of every two annotator groups per model, language (and all pooled) and metric
    (:data:`GROUP_WINLOSS_SCHEMA`)."""
    pairs = [(GROUPS.index(a), GROUPS.index(b)) for a, b in GROUP_PAIRS]
    rows = []
    for model, lang, data in _blocks(scores):
        design = AnnotatorDesign.of(data)
        labels = design.assignments(permutations, _rng(seed, lang))
        for metric in metrics:
            wins_a, wins_b, ties, shared = _net_wins(data[metric].to_numpy(float), design, labels, pairs)
            net = (wins_a - wins_b).astype(float)
            net[:, shared[0] == 0] = np.nan
            two = permutation_p(net[0], net[1:], two_sided=True)
            one = np.where(np.isnan(net[0]), np.nan, (1 + (net[1:] >= net[0] - 1e-12).sum(axis=0)) / (1 + permutations))
            for k, (a, b) in enumerate(GROUP_PAIRS):
                rows.append({"model": model, "lang": lang, "metric": metric, "group_a": a, "group_b": b,
                             "n_sentences": int(shared[0, k]), "wins_a": int(wins_a[0, k]), "wins_b": int(wins_b[0, k]),
                             "ties": int(ties[0, k]), "p_permutation": two[k], "p_one_sided": one[k]})
    out = pd.DataFrame(rows, columns=[c for c in GROUP_WINLOSS_SCHEMA if c not in ("p_holm", "significant")])
    out["p_holm"] = out.groupby(["model", "metric"], sort=False)["p_permutation"].transform(holm) if len(out) else []
    out["significant"] = out["p_holm"] < alpha
    return out[list(GROUP_WINLOSS_SCHEMA)].astype({"significant": bool})


def group_tests(scores: pd.DataFrame, *, reference: str = "MN", alpha: float = 0.05, permutations: int = 4999,
                seed: int = 2022, metrics: Sequence[str] = METRICS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Permutation tests of the group gaps: (the gap of each group to ``reference``, by model,
    language and metric; the omnibus, 2 x 2 and group x language tests, :data:`GROUP_TESTS_SCHEMA`)."""
    ref = GROUPS.index(reference)
    gaps, tests = [], []
    for model, lang, data in _blocks(scores):
        design = AnnotatorDesign.of(data)
        labels = design.assignments(permutations, _rng(seed, lang))
        for metric in metrics:
            stats = _statistics(*_group_sums(data[metric].to_numpy(float), design, labels), ref)
            names = list(stats)
            observed = np.array([stats[n][0] for n in names])
            null = np.column_stack([stats[n][1:] for n in names])
            upper = np.array([n in ("omnibus", "group_x_language") for n in names])
            p = np.where(upper, permutation_p(observed, null, two_sided=False), permutation_p(observed, null))
            common = {"model": model, "lang": lang, "metric": metric}
            for name, value, pv in zip(names, observed, p, strict=True):
                if name.startswith("gap_"):
                    gaps.append({**common, "term": f"group[T.{name[4:]}]", "gap": value, "p_permutation": pv})
                else:
                    tests.append({**common, "test": name, "statistic": value, "p_permutation": pv,
                                  "n_annotators": len(design.group), "permutations": permutations})
    gaps = pd.DataFrame(gaps, columns=["model", "lang", "metric", "term", "gap", "p_permutation"])
    gaps["p_holm"] = gaps.groupby(["model", "lang", "metric"], sort=False)["p_permutation"].transform(holm)
    tests = pd.DataFrame(tests, columns=["model", "lang", "metric", "test", "statistic", "p_permutation",
                                         "n_annotators", "permutations"])
    in_2x2 = tests["test"].isin(list(CONTRASTS_2X2))
    tests["p_holm"] = tests["p_permutation"]
    tests.loc[in_2x2, "p_holm"] = tests[in_2x2].groupby(["model", "lang", "metric"], sort=False)[
        "p_permutation"].transform(holm)
    tests["significant"] = tests["p_holm"] < alpha
    descriptions = {"omnibus": "between-group sum of squares of the annotations' scores (any group differs)",
                    "group_x_language": "spread of each group's per-language gap to the reference (the gaps differ "
                                        "between languages)",
                    **{name: text for name, (_, text) in CONTRASTS_2X2.items()}}
    tests["description"] = tests["test"].map(descriptions)
    return gaps, tests[list(GROUP_TESTS_SCHEMA)].astype({"significant": bool})


def group_effects(scores: pd.DataFrame, *, reference: str = "MN", alpha: float = 0.05, permutations: int = 4999,
                  seed: int = 2022, metrics: Sequence[str] = METRICS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``metric ~ group + (1|sentence) + (1|annotator)`` per model, language (and all pooled, with
    language as a fixed effect) and metric, with the permutation test of each group term
    (:data:`GROUP_EFFECTS_SCHEMA`); and the other permutation tests (:func:`group_tests`)."""
    gaps, tests = group_tests(scores, reference=reference, alpha=alpha, permutations=permutations, seed=seed,
                              metrics=metrics)
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
            fit = crossed_mixed_model(data.assign(value=data[metric].astype(float)), formula,
                                      effects=("sentence", "annotator"))
            rows.append(effects_rows(fit, reference=refs, context=context).assign(
                model=model, lang=lang, metric=metric, n_obs=len(data), n_sentences=data["sentence"].nunique(),
                n_annotators=data["annotator"].nunique(), sentence_var=fit.variances.get("sentence", np.nan),
                annotator_var=fit.variances.get("annotator", np.nan),
                residual_var=fit.variances.get("residual", np.nan)))
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["model", "lang", "metric", "term"])
    out = out.merge(gaps[["model", "lang", "metric", "term", "p_permutation", "p_holm"]], how="left",
                    on=["model", "lang", "metric", "term"])
    out["significant"] = out["p_holm"] < alpha
    return out.reindex(columns=list(GROUP_EFFECTS_SCHEMA)).astype({"converged": bool, "significant": bool}), tests
