"""Group disparity that can be tested: conditions compared on the same examples.

A gap between annotator groups (or languages) is only worth reporting when it is more than
chance, and it is confounded when the conditions saw different examples (in MozArt each
group answered 70 to 100 of a language's 100 sentences). Following dialect-robust
evaluation, conditions are compared on the examples they share:

- **win/loss** (:func:`group_winloss`, :func:`language_winloss`): per example, each
  condition's mean score; over the examples both conditions have, wins, losses and ties,
  with an exact sign test (binomial, p = 0.5) of the wins among the decisive examples and a
  Bonferroni correction over all the comparisons of a model and metric;
- **mixed effects** (:func:`group_effects`, :func:`language_effects`): a linear mixed model
  of the score with the condition as a fixed effect (treatment coding against a reference)
  and a random intercept per example (statsmodels ``MixedLM``, REML).

MozArt and constructed cloze sets: the conditions are the annotator groups, the examples the
sentences, the scores each annotation's ``rr`` and ``hit1`` (:data:`plmfair.metrics.ANNOTATION_SCORES_SCHEMA`);
every language alone and all languages pooled (``lang = "all"``: examples are (lang, s_id),
language a fixed effect). CrowS-Pairs: the conditions are the data sets (languages) a model
was scored on, the examples the pairs they share by id; win/loss of "the more stereotyping
sentence preferred" (an exact McNemar test) and a mixed model of the score margin
sent_more_score - sent_less_score.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from plmfair.data import GROUPS
from plmfair.stats import bonferroni, mixed_effects, win_loss

log = logging.getLogger(__name__)

WINLOSS_METRICS = ("rr", "hit1")
GROUP_PAIRS = tuple(combinations(GROUPS, 2))

GROUP_WINLOSS_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' for the languages' sentences pooled",
    "metric": "rr or hit1 of each annotation",
    "group_a": "first group",
    "group_b": "second group",
    "n_sentences": "sentences both groups answered",
    "wins_a": "sentences where group_a's mean of the metric over its annotations is higher",
    "wins_b": "sentences where group_b's mean is higher",
    "ties": "sentences where both means are equal",
    "p_two_sided": "exact binomial test of wins_a among wins_a + wins_b against 0.5 (NaN without a shared sentence)",
    "p_one_sided": "the same, alternative: group_a wins more",
    "p_bonferroni": "p_two_sided times the number of rows of the same model and metric, capped at 1",
    "significant": "p_bonferroni < alpha",
}

EFFECTS_COLUMNS = {
    "term": "fixed-effect term: Intercept, group[T.<group>] or lang[T.<lang>] (dataset[T.<name>] for CrowS-Pairs)",
    "reference": "the level the term is measured against",
    "estimate": "fixed-effect estimate (REML)",
    "std_err": "its standard error",
    "ci_low": "95% confidence interval, lower bound",
    "ci_high": "95% confidence interval, upper bound",
    "p_value": "two-sided Wald p-value",
    "n_obs": "rows the model was fitted on",
    "converged": "statsmodels reported convergence and every standard error is finite (kept either way)",
}
GROUP_EFFECTS_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' (language then a fixed effect, random intercept per (lang, s_id))",
    "metric": "rr or hit1 of each annotation",
    **EFFECTS_COLUMNS,
    "n_sentences": "sentences (random-intercept levels)",
    "sentence_var": "variance of the random intercept per sentence",
    "annotator_var": "variance component per annotator (NaN unless analysis.annotator_variance)",
}

LANGUAGE_WINLOSS_SCHEMA = {
    "model": "model short name",
    "dataset_a": "first CrowS-Pairs data set",
    "dataset_b": "second data set",
    "lang_a": "language of dataset_a",
    "lang_b": "language of dataset_b",
    "n_pairs": "pairs (same id) scored in both",
    "score_a": "percent of those pairs where the more stereotyping sentence is preferred in dataset_a",
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


def _term_name(raw: str) -> str:
    """``C(group, Treatment(reference='MN'))[T.FN]`` -> ``group[T.FN]``."""
    return re.sub(r"^C\((\w+).*?\)\[", r"\1[", raw)


def _winloss_block(frame: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    frame = frame.reset_index(drop=True)
    frame["p_bonferroni"] = bonferroni(frame["p_two_sided"].to_numpy(), m=len(frame))
    frame["significant"] = frame["p_bonferroni"] < alpha
    return frame


def group_winloss(scores: pd.DataFrame, *, alpha: float = 0.05,
                  metrics: Sequence[str] = WINLOSS_METRICS) -> pd.DataFrame:
    """Win/loss of every two annotator groups per model, language (and all pooled) and metric
    (:data:`GROUP_WINLOSS_SCHEMA`), from annotation scores."""
    blocks = []
    for model, by_model in scores.groupby("model", sort=False):
        langs = list(dict.fromkeys(by_model["lang"]))
        for metric in metrics:
            parts = []
            for lang, unit, data in [(lang, ["s_id"], by_model[by_model["lang"] == lang]) for lang in langs] + [
                    ("all", ["lang", "s_id"], by_model)]:
                wl = win_loss(data, unit=unit, condition="group", value=metric, pairs=GROUP_PAIRS)
                parts.append(wl.assign(model=model, lang=lang, metric=metric))
            blocks.append(_winloss_block(pd.concat(parts, ignore_index=True), alpha=alpha))
    out = pd.concat(blocks, ignore_index=True) if blocks else pd.DataFrame(columns=["a", "b", "n_units"])
    out = out.rename(columns={"a": "group_a", "b": "group_b", "n_units": "n_sentences"})
    return out.reindex(columns=list(GROUP_WINLOSS_SCHEMA)).astype({"significant": bool})


def _effects_rows(fit, *, reference: Mapping[str, str], context: str) -> pd.DataFrame:
    if not fit.converged:
        log.warning("%s: the mixed model did not converge (%s); its rows are kept with converged = false", context,
                    fit.message or "no standard errors")
    terms = fit.terms.assign(term=[_term_name(t) for t in fit.terms["term"]])
    terms["reference"] = [reference.get(t.split("[")[0], reference.get("Intercept", "")) for t in terms["term"]]
    return terms.assign(converged=fit.converged)


def group_effects(scores: pd.DataFrame, *, reference: str = "MN", annotator_variance: bool = False,
                  metrics: Sequence[str] = WINLOSS_METRICS) -> pd.DataFrame:
    """``metric ~ group`` with a random intercept per sentence, per model, language (and all
    pooled, with language as a fixed effect) and metric (:data:`GROUP_EFFECTS_SCHEMA`).
    ``annotator_variance`` adds a variance component per annotator (crossed with sentences)."""
    rows = []
    for model, by_model in scores.groupby("model", sort=False):
        langs = list(dict.fromkeys(by_model["lang"]))
        for metric in metrics:
            for lang in [*langs, "all"]:
                data = by_model if lang == "all" else by_model[by_model["lang"] == lang]
                data = data.assign(sentence=data["lang"] + ":" + data["s_id"], value=data[metric].astype(float))
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
                vc = {"sentence": "0 + C(sentence)", "annotator": "0 + C(u_id)"} if annotator_variance else None
                fit = mixed_effects(data, formula, groups="sentence", variance_components=vc)
                terms = _effects_rows(fit, reference=refs, context=context)
                rows.append(terms.assign(
                    model=model, lang=lang, metric=metric, n_obs=len(data), n_sentences=data["sentence"].nunique(),
                    sentence_var=fit.variances.get("sentence", np.nan),
                    annotator_var=fit.variances.get("annotator", np.nan),
                ))
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    return out.reindex(columns=list(GROUP_EFFECTS_SCHEMA)).astype({"converged": bool})


def _pair_outcomes(per_pair: Mapping[tuple[str, str], pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Per model, the scored pairs of every data set it was run on (long: dataset, pair_id, biased, margin),
    for the models run on at least two data sets."""
    from plmfair.crows_pairs import SCORED_STATUSES

    by_model: dict[str, list[pd.DataFrame]] = {}
    for (dataset, model), df in per_pair.items():
        scored = df[df["status"].isin(SCORED_STATUSES)]
        by_model.setdefault(model, []).append(pd.DataFrame({
            "dataset": dataset, "pair_id": scored["pair_id"].astype(str).to_numpy(),
            "biased": scored["biased"].astype(float).to_numpy(),
            "margin": (scored["sent_more_score"] - scored["sent_less_score"]).to_numpy(dtype=float),
        }))
    return {m: pd.concat(frames, ignore_index=True) for m, frames in by_model.items() if len(frames) > 1}


def language_winloss(per_pair: Mapping[tuple[str, str], pd.DataFrame], *, langs: Mapping[str, str],
                     alpha: float = 0.05) -> pd.DataFrame:
    """For every model run on several CrowS-Pairs data sets, every two of them compared on the
    pairs both scored (:data:`LANGUAGE_WINLOSS_SCHEMA`)."""
    blocks = []
    for model, long in _pair_outcomes(per_pair).items():
        datasets = list(dict.fromkeys(long["dataset"]))
        wl = win_loss(long, unit=["pair_id"], condition="dataset", value="biased",
                      pairs=list(combinations(datasets, 2)))
        means = long.pivot(index="pair_id", columns="dataset", values="biased")
        wl["score_a"] = [100 * means[[a, b]].dropna()[a].mean() for a, b in zip(wl["a"], wl["b"], strict=True)]
        wl["score_b"] = [100 * means[[a, b]].dropna()[b].mean() for a, b in zip(wl["a"], wl["b"], strict=True)]
        blocks.append(_winloss_block(wl.assign(model=model), alpha=alpha))
    if not blocks:
        return pd.DataFrame(columns=list(LANGUAGE_WINLOSS_SCHEMA))
    out = pd.concat(blocks, ignore_index=True).rename(columns={"a": "dataset_a", "b": "dataset_b", "n_units": "n_pairs"})
    out["lang_a"], out["lang_b"] = out["dataset_a"].map(langs), out["dataset_b"].map(langs)
    return out[list(LANGUAGE_WINLOSS_SCHEMA)].astype({"significant": bool})


def language_effects(per_pair: Mapping[tuple[str, str], pd.DataFrame], *, langs: Mapping[str, str]) -> pd.DataFrame:
    """``margin ~ dataset`` with a random intercept per pair, for every model run on several data
    sets; the reference is the first of its data sets (:data:`LANGUAGE_EFFECTS_SCHEMA`)."""
    rows = []
    for model, long in _pair_outcomes(per_pair).items():
        first = long["dataset"].iloc[0]
        fit = mixed_effects(long, f"margin ~ C(dataset, Treatment(reference='{first}'))", groups="pair_id")
        terms = _effects_rows(fit, reference={"dataset": first, "Intercept": first}, context=f"{model}/margin")
        term_lang = [langs.get(t[len("dataset[T."):-1], "") if t.startswith("dataset[") else "" for t in terms["term"]]
        rows.append(terms.assign(model=model, lang=term_lang, n_obs=len(long), n_pairs=long["pair_id"].nunique(),
                                 pair_var=fit.variances.get("pair_id", np.nan)))
    if not rows:
        return pd.DataFrame(columns=list(LANGUAGE_EFFECTS_SCHEMA))
    return pd.concat(rows, ignore_index=True)[list(LANGUAGE_EFFECTS_SCHEMA)].astype({"converged": bool})
