"""CrowS-Pairs data sets (languages) compared on the pairs they share, per model.

The conditions are the data sets a model was scored on, the examples the pairs they share by
id (Multilingual CrowS-Pairs keeps the English and French ids): win/loss of "the more
stereotyping sentence preferred" with an exact McNemar test on the pairs decisive in both data
sets (:func:`language_winloss`; pairs are independent items here, unlike annotators' answers;
neutral pairs are left out as the summary's binomial test leaves them out, and counted), and a
mixed model of the score margin sent_more_score - sent_less_score with the data set as a fixed
effect and a random intercept per pair (:func:`language_effects`), each data set's term marked
by its Wald test, Bonferroni over the data sets, with its interval at that level.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from itertools import combinations

import numpy as np
import pandas as pd

from plmfair.crows_pairs.summary import SCORED_STATUSES, decisive_outcomes
from plmfair.stats import (
    EFFECTS_COLUMNS,
    bonferroni,
    crossed_mixed_model,
    effects_rows,
    mark_wald_family,
    win_loss,
)

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
    "p_two_sided": "exact McNemar test: binomial of wins_a among wins_a + wins_b against 0.5",
    "p_one_sided": "the same, alternative: dataset_a prefers the more stereotyping sentence more often",
    "p_bonferroni": "p_two_sided times the number of rows of the same model, capped at 1",
    "significant": "p_bonferroni < alpha",
}
LANGUAGE_EFFECTS_SCHEMA = {
    "model": "model short name",
    "lang": "language of the term's data set ('' for the intercept)",
    **EFFECTS_COLUMNS,
    "n_pairs": "pairs (random-intercept levels)",
    "pair_var": "variance of the random intercept per pair",
}


def _winloss_block(frame: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    frame = frame.reset_index(drop=True)
    frame["p_bonferroni"] = bonferroni(frame["p_two_sided"].to_numpy(), m=len(frame))
    frame["significant"] = frame["p_bonferroni"] < alpha
    return frame


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
    per_pair: Mapping[tuple[str, str], pd.DataFrame], *, langs: Mapping[str, str], alpha: float = 0.05
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
        blocks.append(_winloss_block(wl.assign(model=model), alpha=alpha))
    if not blocks:
        return pd.DataFrame(columns=list(LANGUAGE_WINLOSS_SCHEMA))
    out = pd.concat(blocks, ignore_index=True).rename(
        columns={"a": "dataset_a", "b": "dataset_b", "n_units": "n_pairs"}
    )
    out["lang_a"], out["lang_b"] = out["dataset_a"].map(langs), out["dataset_b"].map(langs)
    return out[list(LANGUAGE_WINLOSS_SCHEMA)].astype({"significant": bool})


def language_effects(
    per_pair: Mapping[tuple[str, str], pd.DataFrame], *, langs: Mapping[str, str], alpha: float = 0.05
) -> pd.DataFrame:
    """``margin ~ dataset`` with a random intercept per pair, for every model run on several data
    sets; the reference is the first of its data sets; each data set term marked by its Wald test,
    Bonferroni over them (:data:`LANGUAGE_EFFECTS_SCHEMA`)."""
    rows = []
    for model, long in _pair_outcomes(per_pair).items():
        first = long["dataset"].iloc[0]
        fit = crossed_mixed_model(long, f"margin ~ C(dataset, Treatment(reference='{first}'))", effects=("pair_id",))
        terms = mark_wald_family(
            effects_rows(fit, reference={"dataset": first, "Intercept": first}, context=f"{model}/margin"),
            prefix="dataset[",
            alpha=alpha,
        )
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
    return pd.concat(rows, ignore_index=True)[list(LANGUAGE_EFFECTS_SCHEMA)].astype(
        {"converged": bool, "significant": bool}
    )
