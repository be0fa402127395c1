"""Did a model's cloze numbers move? The same annotations scored twice (one model in two runs) compared
annotation by annotation (:data:`CLOZE_CHANGE_SCHEMA`).

On the annotations both scorings have (matched by language, sentence, annotator and answer): per
language (and all pooled) and group (and all), P@1, P@5 and MRR under each and their change, and the
change of sigma_gd across the four groups. Each change is tested by flipping the two scorings sentence by
sentence: under the null that the two scorings are exchangeable on every sentence (a model's predictions
are made per sentence; every annotator keeps their answer), every assignment of the scorings to the
sentences is as likely, and the p-value counts the assignments whose change is at least as large as the
one observed (all of them when there are at most 10,000, else random ones). The population it refers to:
sentences written as the set's were; no interval is printed (a flip test inverts into no interval of a
change of means of 0/1 and rank scores that is shown to cover). Changes within floating-point noise of
zero are zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from plmfair.cloze.annotations import GROUPS
from plmfair.cloze.group_tests import DISPARITY_METRICS
from plmfair.cloze.measures import COLUMNS, listed
from plmfair.stats.permutation import attainable, permutation_p

_KEYS = ["lang", "s_id", "u_id", "answer"]
# the most flip assignments enumerated rather than drawn
EXACT_FLIPS = 10_000

CLOZE_CHANGE_SCHEMA = {
    "set": "cloze set",
    "a": "the first scoring (run/model)",
    "b": "the second scoring",
    "lang": "language, or 'all' pooled",
    "group": "annotator group, 'all', or 'σ_gd' for the disparity across the four groups",
    "metric": f"{listed(COLUMNS)} (percent; σ_gd rows: percentage points)",
    "n": "annotations both scorings have (matched by language, sentence, annotator and answer)",
    "sentences": "sentences those annotations answer (the units the test flips)",
    "value_a": "the metric under a on those annotations",
    "value_b": "the same under b",
    "change": "value_b - value_a (percentage points)",
    "p_value": "two-sided p of the flip test of no change (a and b exchanged sentence by sentence)",
    "p_min": "the smallest p the flip test can give on these sentences (plmfair.stats.permutation.attainable: the "
    "mirror assignment, every sentence flipped, always ties with the observed one, and sentences without the row's "
    "annotations tie too)",
    "size": "the share of assignments whose p is below alpha: the rate at which the flip test rejects when its null "
    "holds, here",
    "hypothesis": "the test's id among the comparison's hypotheses",
}


def _snap(values: ArrayLike, scale: float = 100.0) -> np.ndarray:
    """Zero where a difference of percentages is floating-point noise (below 1e-9 points)."""
    values = np.asarray(values, dtype=float)
    return np.where(np.abs(values) <= 1e-11 * scale, 0.0, values)


def _flips(n_sentences: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Which scoring each sentence takes as its "a" (rows: the observed assignment first, all zeros, then
    every other one when there are at most :data:`EXACT_FLIPS`, else ``draws`` random ones); 1 swaps."""
    if 2**n_sentences <= EXACT_FLIPS:
        return np.array(list(product((0, 1), repeat=n_sentences)), dtype=float)
    random = rng.integers(0, 2, size=(draws, n_sentences)).astype(float)
    return np.vstack([np.zeros(n_sentences), random])


def _group_means(
    a: np.ndarray, b: np.ndarray, flips: np.ndarray, sentence: np.ndarray, masks: Sequence[np.ndarray]
) -> tuple:
    """Per flip assignment, the mean of each mask's annotations under the assigned a and b (percent)."""
    n_sentences = flips.shape[1]
    means_a, means_b = [], []
    for mask in masks:
        sum_a = np.bincount(sentence[mask], weights=a[mask], minlength=n_sentences)
        sum_b = np.bincount(sentence[mask], weights=b[mask], minlength=n_sentences)
        count = max(int(mask.sum()), 1)
        # a flipped sentence contributes b's scores to "a" and a's to "b"
        means_a.append(100 * (sum_a.sum() + flips @ (sum_b - sum_a)) / count)
        means_b.append(100 * (sum_b.sum() + flips @ (sum_a - sum_b)) / count)
    return np.stack(means_a, axis=1), np.stack(means_b, axis=1)


def _sigma(means: np.ndarray) -> np.ndarray:
    """sigma_gd of each row's group means (groups without an annotation left out)."""
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.nanmean((means - np.nanmean(means, axis=1, keepdims=True)) ** 2, axis=1))


def annotation_changes(
    first: pd.DataFrame, second: pd.DataFrame, *, alpha: float, permutations: int, seed: int
) -> pd.DataFrame:
    """The comparison of two scorings' annotation scores (:data:`plmfair.cloze.metrics.ANNOTATION_SCORES_SCHEMA`,
    one model each) on the annotations both have: :data:`CLOZE_CHANGE_SCHEMA` without the names and ids
    (each flip test's size at ``alpha``)."""
    both = first.merge(second, on=[*_KEYS, "group"], suffixes=("_a", "_b"))
    rng = np.random.default_rng(seed)
    rows = []
    for lang in [*pd.unique(both["lang"]), "all"]:
        part = both if lang == "all" else both[both["lang"] == lang]
        sentence = pd.factorize(part["lang"] + ":" + part["s_id"])[0]
        flips = _flips(int(sentence.max()) + 1 if len(sentence) else 0, permutations, rng)
        group = part["group"].to_numpy()
        names = [g for g in (*GROUPS, "all") if g == "all" or (group == g).any()]
        masks = [np.ones(len(part), dtype=bool) if g == "all" else group == g for g in names]
        for column, metric in DISPARITY_METRICS.items():
            a, b = part[f"{column}_a"].to_numpy(float), part[f"{column}_b"].to_numpy(float)
            means_a, means_b = _group_means(a, b, flips, sentence, masks)
            in_groups = [i for i, g in enumerate(names) if g in GROUPS]
            changes = np.column_stack(
                [means_b - means_a, _sigma(means_b[:, in_groups]) - _sigma(means_a[:, in_groups])]
            )
            changes = _snap(changes)
            p = permutation_p(changes[0], changes[1:])
            for i, name in enumerate([*names, "σ_gd"]):
                reach = attainable(changes[:, i], alpha=alpha)
                mask = masks[i] if name != "σ_gd" else np.isin(group, GROUPS)
                value_a = means_a[0, i] if name != "σ_gd" else _sigma(means_a[:1, in_groups])[0]
                value_b = means_b[0, i] if name != "σ_gd" else _sigma(means_b[:1, in_groups])[0]
                rows.append(
                    {
                        "lang": lang,
                        "group": name,
                        "metric": metric,
                        "n": int(mask.sum()),
                        "sentences": int(len(np.unique(sentence[mask]))),
                        "value_a": float(value_a),
                        "value_b": float(value_b),
                        "change": float(changes[0, i]),
                        "p_value": float(p[i]),
                        "p_min": reach.p_min,
                        "size": reach.size,
                    }
                )
    return pd.DataFrame(rows, columns=[c for c in CLOZE_CHANGE_SCHEMA if c not in ("set", "a", "b", "hypothesis")])
