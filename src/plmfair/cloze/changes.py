"""Did a model's cloze numbers move? The same annotations scored twice (one model in two runs) compared
annotation by annotation (:data:`CLOZE_CHANGE_SCHEMA`).

On the annotations both scorings have (matched by language, sentence, annotator and answer): per
language (and all pooled) and group (and all), P@1, P@5 and MRR under each and their change, and
the change of sigma_gd across the four groups, each with a 95% percentile interval from a paired
bootstrap that resamples annotators and sentences within their language (neither an annotator's
answers nor a sentence's are independent draws; the same draw weighs both scorings). Descriptive:
no test, no mark. Changes within floating-point noise of zero are zero.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from plmfair.cloze.annotations import GROUPS
from plmfair.cloze.group_tests import DISPARITY_METRICS
from plmfair.stats import bootstrap_counts, percentile_interval

BOOTSTRAP_REPLICATES = 2000
_KEYS = ["lang", "s_id", "u_id", "answer"]

CLOZE_CHANGE_SCHEMA = {
    "set": "cloze set",
    "a": "the first scoring (run/model)",
    "b": "the second scoring",
    "lang": "language, or 'all' pooled",
    "group": "annotator group, 'all', or 'σ_gd' for the disparity across the four groups",
    "metric": "p_at_1, p_at_5 or mrr (percent; σ_gd rows: percentage points)",
    "n": "annotations both scorings have (matched by language, sentence, annotator and answer)",
    "value_a": "the metric under a on those annotations",
    "value_b": "the same under b",
    "change": "value_b - value_a (percentage points)",
    "low": "paired bootstrap 95% percentile interval of change (annotators resampled within language), lower end",
    "high": "its upper end",
}


def _weights(frame: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap weights of each annotation (replicates x annotations): the annotators and the sentences
    of each language drawn with replacement, an annotation weighing as often as its annotator was
    drawn times as often as its sentence was."""
    weights = np.ones((BOOTSTRAP_REPLICATES, len(frame)))
    for lang in pd.unique(frame["lang"]):
        rows = np.flatnonzero((frame["lang"] == lang).to_numpy())
        for unit in ("u_id", "s_id"):
            codes, levels = pd.factorize(frame[unit].to_numpy()[rows])
            drawn = bootstrap_counts(rng, len(levels), BOOTSTRAP_REPLICATES)
            weights[:, rows] *= drawn[:, codes]
    return weights


def _mean(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return 100 * (weights * values).sum(axis=-1) / weights.sum(axis=-1)


def _sigma(values: np.ndarray, weights: np.ndarray, group: np.ndarray) -> np.ndarray:
    """sigma_gd of the four groups' weighted means, per row of ``weights``."""
    means = np.stack([_mean(values[group == g], weights[..., group == g]) for g in GROUPS], axis=-1)
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.nanmean((means - np.nanmean(means, axis=-1, keepdims=True)) ** 2, axis=-1))


def _snap(values, scale: float = 100.0):
    """Zero where a difference of percentages is floating-point noise (below 1e-9 points)."""
    values = np.asarray(values, dtype=float)
    return np.where(np.abs(values) <= 1e-11 * scale, 0.0, values)


def _row(lang: str, group: str, metric: str, n: int, value_a: float, value_b: float, draws: np.ndarray) -> dict:
    """One comparison row: the two values, their change and the bootstrap's interval of it."""
    low, high = percentile_interval(_snap(draws))
    change = float(_snap(value_b - value_a))
    return {
        "lang": lang,
        "group": group,
        "metric": metric,
        "n": n,
        "value_a": value_a,
        "value_b": value_b,
        "change": change,
        "low": low,
        "high": high,
    }


def annotation_changes(first: pd.DataFrame, second: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    """The comparison of two scorings' annotation scores (:data:`plmfair.cloze.metrics.ANNOTATION_SCORES_SCHEMA`,
    one model each) on the annotations both have: :data:`CLOZE_CHANGE_SCHEMA` without the names."""
    both = first.merge(second, on=[*_KEYS, "group"], suffixes=("_a", "_b"))
    weights = _weights(both, np.random.default_rng(seed))
    ones = np.ones(len(both))
    rows = []
    for lang in [*pd.unique(both["lang"]), "all"]:
        in_lang = np.ones(len(both), dtype=bool) if lang == "all" else (both["lang"] == lang).to_numpy()
        group = both["group"].to_numpy()[in_lang]
        w = weights[:, in_lang]
        for column, metric in DISPARITY_METRICS.items():
            a, b = both[f"{column}_a"].to_numpy(float)[in_lang], both[f"{column}_b"].to_numpy(float)[in_lang]
            for name in (*GROUPS, "all"):
                keep = np.ones(len(group), dtype=bool) if name == "all" else group == name
                if not keep.any():
                    continue
                value_a, value_b = float(_mean(a[keep], ones[: keep.sum()])), float(_mean(b[keep], ones[: keep.sum()]))
                draws = _mean(b[keep], w[:, keep]) - _mean(a[keep], w[:, keep])
                rows.append(_row(lang, name, metric, int(keep.sum()), value_a, value_b, draws))
            sigma_a, sigma_b = float(_sigma(a, np.ones(len(a)), group)), float(_sigma(b, np.ones(len(b)), group))
            draws = _sigma(b, w, group) - _sigma(a, w, group)
            rows.append(_row(lang, "σ_gd", metric, int(in_lang.sum()), sigma_a, sigma_b, draws))
    return pd.DataFrame(rows, columns=[c for c in CLOZE_CHANGE_SCHEMA if c not in ("set", "a", "b")])
