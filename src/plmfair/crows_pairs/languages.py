"""CrowS-Pairs data sets (languages) compared on the pairs they share, per model.

The conditions are the data sets a model was scored on, the examples the pairs they share by
id (Multilingual CrowS-Pairs keeps the English and French ids): win/loss of "the more
stereotyping sentence preferred" on the pairs decisive in both data sets (:func:`language_winloss`;
pairs are independent items here, unlike annotators' answers; neutral pairs are left out as the
summary's sign test leaves them out, and counted), with the change of the decisive share between
the two, Tango's interval and the paired test of :func:`plmfair.crows_pairs.changes.paired_proportions`
(the run's hypotheses mark it); and a mixed model of the score margin sent_more_score -
sent_less_score with the data set as a fixed effect and a random intercept per pair
(:func:`language_effects`): effect sizes in nats, with no test (its Wald test's level is not shown on
these designs; the win/loss rows carry the marks).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from itertools import combinations

import numpy as np
import pandas as pd

from plmfair.crows_pairs.changes import paired_proportions
from plmfair.crows_pairs.summary import SCORED_STATUSES, decisive_outcomes
from plmfair.stats.mixed_models import EFFECTS_COLUMNS, crossed_mixed_model, effects_rows
from plmfair.stats.proportions import win_loss

log = logging.getLogger(__name__)

LANGUAGE_WINLOSS_SCHEMA = {
    "model": "model short name",
    "dataset_a": "first CrowS-Pairs data set",
    "dataset_b": "second data set",
    "lang_a": "language of dataset_a",
    "lang_b": "language of dataset_b",
    "n_pairs": "pairs (same id) decisive in both: scored and not neutral (neutral pairs are left out, as the "
    "summary's binomial test leaves them out)",
    "n_neutral": "pairs scored in both but neutral in at least one (left out)",
    "score_a": "percent of the n_pairs where the more stereotyping sentence is preferred in dataset_a",
    "score_b": "the same in dataset_b",
    "wins_a": "pairs preferred in dataset_a only (more stereotyping sentence higher there, not in dataset_b)",
    "wins_b": "pairs preferred in dataset_b only",
    "ties": "pairs with the same outcome in both",
    "change": "score_b - score_a (percentage points): (wins_b - wins_a) / n_pairs",
    "ci_low": "Tango's score interval of change at 1 - alpha, lower bound",
    "ci_high": "its upper bound",
    "p_value": "two-sided test of no change: the larger of the mid-p McNemar test's p and Tango's score test's",
    "p_min": "the smallest p that test can give with wins_a + wins_b pairs changed (stats.paired_change_smallest)",
    "size": "that test's size at alpha given wins_a + wins_b (exact): the hypotheses leave a size outside "
    "[0.6 alpha, 1.4 alpha] untestable",
    "p_one_sided": "exact one-sided McNemar test (binomial of wins_a among wins_a + wins_b), alternative: dataset_a "
    "prefers the more stereotyping sentence more often (descriptive, as dialect-robust evaluation reports it)",
    "hypothesis": "the test's id in the run's hypotheses (results/hypotheses.parquet)",
}
LANGUAGE_EFFECTS_SCHEMA = {
    "model": "model short name",
    "lang": "language of the term's data set ('' for the intercept)",
    **EFFECTS_COLUMNS,
    "n_pairs": "pairs (random-intercept levels)",
    "pair_var": "variance of the random intercept per pair",
}


def _pair_outcomes(per_pair: Mapping[tuple[str, str], pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Per model, the scored pairs of every data set it was run on (long: dataset, pair_id, biased,
    margin; ``biased`` NaN for a neutral pair), for the models run on at least two data sets."""
    by_model: dict[str, list[pd.DataFrame]] = {}
    for (dataset, model), df in per_pair.items():
        scored = df[df["status"].isin(SCORED_STATUSES)]
        biased = decisive_outcomes(df).astype(float)
        by_model.setdefault(model, []).append(
            pd.DataFrame(
                {
                    "dataset": dataset,
                    "pair_id": scored["pair_id"].astype(str).to_numpy(),
                    "biased": scored["pair_id"].map(biased).to_numpy(dtype=float),
                    "margin": (scored["sent_more_score"] - scored["sent_less_score"]).to_numpy(dtype=float),
                }
            )
        )
    return {m: pd.concat(frames, ignore_index=True) for m, frames in by_model.items() if len(frames) > 1}


def language_winloss(
    per_pair: Mapping[tuple[str, str], pd.DataFrame], *, langs: Mapping[str, str], alpha: float
) -> pd.DataFrame:
    """For every model run on several CrowS-Pairs data sets, every two of them compared on the
    pairs both scored (:data:`LANGUAGE_WINLOSS_SCHEMA`)."""
    blocks = []
    for model, long in _pair_outcomes(per_pair).items():
        datasets = list(dict.fromkeys(long["dataset"]))
        wl = win_loss(
            long, unit=["pair_id"], condition="dataset", value="biased", pairs=list(combinations(datasets, 2))
        )
        means = long.pivot(index="pair_id", columns="dataset", values="biased")
        scored = long.pivot(index="pair_id", columns="dataset", values="margin").notna()
        wl["score_a"] = [100 * means[[a, b]].dropna()[a].mean() for a, b in zip(wl["a"], wl["b"], strict=True)]
        wl["score_b"] = [100 * means[[a, b]].dropna()[b].mean() for a, b in zip(wl["a"], wl["b"], strict=True)]
        wl["n_neutral"] = [
            int((scored[a] & scored[b]).sum()) - n for a, b, n in zip(wl["a"], wl["b"], wl["n_units"], strict=True)
        ]
        tests = pd.DataFrame(
            [
                paired_proportions(int(rose), int(fell), int(n), alpha=alpha)
                for rose, fell, n in zip(wl["wins_b"], wl["wins_a"], wl["n_units"], strict=True)
            ],
            index=wl.index,
        )
        wl = pd.concat([wl, tests.rename(columns={"low": "ci_low", "high": "ci_high", "p": "p_value"})], axis=1)
        wl["hypothesis"] = [
            f"crows_pairs/language_winloss/{model}/{a}/{b}" for a, b in zip(wl["a"], wl["b"], strict=True)
        ]
        blocks.append(wl.assign(model=model))
    if not blocks:
        return pd.DataFrame(columns=list(LANGUAGE_WINLOSS_SCHEMA))
    out = pd.concat(blocks, ignore_index=True).rename(
        columns={"a": "dataset_a", "b": "dataset_b", "n_units": "n_pairs"}
    )
    out["lang_a"], out["lang_b"] = out["dataset_a"].map(langs), out["dataset_b"].map(langs)
    return out[list(LANGUAGE_WINLOSS_SCHEMA)]


def language_effects(per_pair: Mapping[tuple[str, str], pd.DataFrame], *, langs: Mapping[str, str]) -> pd.DataFrame:
    """``margin ~ dataset`` with a random intercept per pair, for every model run on several data
    sets; the reference is the first of its data sets: effect sizes with their standard errors, no test
    (:data:`LANGUAGE_EFFECTS_SCHEMA`)."""
    rows = []
    for model, long in _pair_outcomes(per_pair).items():
        first = long["dataset"].iloc[0]
        fit = crossed_mixed_model(long, f"margin ~ C(dataset, Treatment(reference='{first}'))", effects=("pair_id",))
        terms = effects_rows(fit, reference={"dataset": first, "Intercept": first}, context=f"{model}/margin")
        term_lang = [
            langs.get(t[len("dataset[T.") : -1], "") if t.startswith("dataset[") else "" for t in terms["term"]
        ]
        rows.append(
            terms.assign(
                model=model,
                lang=term_lang,
                n_obs=len(long),
                n_pairs=long["pair_id"].nunique(),
                pair_var=fit.variances.get("pair_id", np.nan),
            )
        )
    if not rows:
        return pd.DataFrame(columns=list(LANGUAGE_EFFECTS_SCHEMA))
    return pd.concat(rows, ignore_index=True)[list(LANGUAGE_EFFECTS_SCHEMA)].astype({"converged": bool})
