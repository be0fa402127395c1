"""Cloze tables for people: MozArt's Tables 1-5 (Cabello Piqueras & Søgaard 2022), sigma_gd with its
tests, group gaps and tests, construction and alignment quality."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from plmfair.cloze.annotations import GROUPS
from plmfair.rendering.labels import PAPER_METRIC_LABELS, metric_label
from plmfair.rendering.numbers import number, p_value
from plmfair.rendering.table_format import (
    add_estimate_with_test,
    key_columns,
    with_coverage_warnings,
    with_display,
)

LANG_ORDER = ("en", "es", "de", "fr")


CORRELATION_P = {"spearman_rho": "spearman_p", "kendall_tau": "kendall_p"}


def sigma_gd(values: Sequence[float]) -> float:
    """Group disparity: population standard deviation (divide by G), equation (1) of the paper."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    return float(np.sqrt(np.mean((v - v.mean()) ** 2))) if len(v) else math.nan


def _most_disparate(sigmas: Mapping[str, float]) -> set[str]:
    """The keys with the highest sigma_gd (ties all kept); none when every sigma is the same."""
    values = {k: v for k, v in sigmas.items() if not pd.isna(v)}
    if len(set(values.values())) < 2:
        return set()
    top = max(values.values())
    return {k for k, v in values.items() if v == top}


def _lang_order(langs) -> list[str]:
    langs = set(langs)
    return [lang for lang in LANG_ORDER if lang in langs] + sorted(langs - set(LANG_ORDER))


def _model_block(m: pd.DataFrame, langs: list[str], metric: str, alpha: float) -> list[dict]:
    """The rows of one model in a paper table (see :func:`paper_table`)."""
    scale = 1.0 if metric in ("p_at_1", "p_at_5", "mrr") else 100.0
    grid = m.pivot(index="group", columns="lang", values=metric).reindex(index=[*GROUPS, "all"], columns=langs) * scale
    p_col = CORRELATION_P.get(metric)
    pvals = (
        m.pivot(index="group", columns="lang", values=p_col).reindex(index=grid.index, columns=langs) if p_col else None
    )
    groups = grid.loc[list(GROUPS)]
    col_sigma = {lang: sigma_gd(groups[lang].to_numpy()) for lang in langs}
    row_sigma = {g: sigma_gd(groups.loc[g].to_numpy()) for g in GROUPS}
    most_lang, red_rows = _most_disparate(col_sigma), _most_disparate(row_sigma)

    def cell(group, lang):
        v = grid.at[group, lang]
        if pd.isna(v):
            return ""
        text = number(v, 1)
        if pvals is not None:
            p = pvals.at[group, lang]
            text += ("°" if pd.isna(p) or p >= alpha else "") + (
                "" if pd.isna(p) else f" ({p_value(p, alpha=alpha)})".replace("0.", ".")
            )
        if group in GROUPS and v == groups[lang].min():
            text += "†"
        return text

    def mean_sigma(values: pd.Series, sigma: float) -> str:
        # a row with a blank cell averages fewer languages: said, not hidden
        covered = int(values.notna().sum())
        return f"{number(values.mean(), 1)} ({number(sigma, 1)})" + (
            f", {covered} of {len(values)} languages" if covered < len(values) else ""
        )

    rows = []
    for group in GROUPS:
        row = {"group": group + ("§" if group in red_rows else "")}
        row.update({lang.upper(): cell(group, lang) for lang in langs})
        row["mean (σ_gd)"] = mean_sigma(groups.loc[group], row_sigma[group])
        rows.append(row)
    pooled = {"group": "All"}
    pooled.update(
        {
            lang.upper(): cell("all", lang) + f" ({number(col_sigma[lang], 1)})" + ("‡" if lang in most_lang else "")
            for lang in langs
        }
    )
    pooled["mean (σ_gd)"] = mean_sigma(grid.loc["all"], sigma_gd(grid.loc["all"].to_numpy()))
    rows.append(pooled)
    return rows


def paper_table(metrics: pd.DataFrame, *, metric: str, alpha: float = 0.05) -> pd.DataFrame:
    """One of Tables 2-5 of the MozArt paper: a block of rows per model (in the metrics' order).

    Rows MN, FN, MNN, FNN and All; one column per language, then each row's mean with its
    sigma_gd across languages. A group's cell is the metric over that group's annotations; the
    All row is the metric over every annotation of the language pooled (the paper's language
    average: mBERT's German P@1 10.8 = 65/600, not the mean of the four groups), with the
    sigma_gd of the four groups in parentheses. Correlations are x 100 and carry their
    p-value, ``34.5 (.012)``, ``°`` when p >= alpha. Marks: † the worst-off group of a
    language, ‡ (on the All row) the language with the highest sigma_gd across groups, § the
    group with the highest sigma_gd across languages (the paper's red row); ties are all
    marked, and nothing is marked when every sigma_gd is the same (a single language)."""
    langs = _lang_order(metrics["lang"])
    rows = []
    for model in dict.fromkeys(metrics["model"]):
        rows += [
            {"model": model, **row} for row in _model_block(metrics[metrics["model"] == model], langs, metric, alpha)
        ]
    return with_coverage_warnings(pd.DataFrame(rows), metrics)


def table1(overview: pd.DataFrame) -> pd.DataFrame:
    """Table 1 of the MozArt paper from a cloze set's overview (:data:`plmfair.cloze.scoring_job.OVERVIEW_SCHEMA`):
    per language, sentences, annotations and annotators, and the mean number of tokens per sentence
    in each model's tokenizer (WordPiece, SentencePiece, BPE)."""
    langs = _lang_order(overview["lang"])
    rows = []
    for (statistic, model), g in overview.groupby(["statistic", "model"], sort=False, dropna=False):
        values = dict(zip(g["lang"], g["value"], strict=True))
        if pd.isna(model):
            rows.append({"": statistic.capitalize(), **{lang.upper(): str(int(values[lang])) for lang in langs}})
        elif statistic == "too_long":
            rows.append(
                {
                    "": f"Skipped, longer than {model} accepts (sentences and answers)",
                    **{lang.upper(): str(int(values.get(lang, 0))) for lang in langs},
                }
            )
        else:
            rows.append(
                {
                    "": f"Tokens per sentence ({model})",
                    **{lang.upper(): number(values[lang], 1) if lang in values else "" for lang in langs},
                }
            )
    return pd.DataFrame(rows)


def construction_table(counts: pd.DataFrame) -> pd.DataFrame:
    """What each construction step of a corpus leaves: one row per step, one column per language and 'all'."""
    order = list(dict.fromkeys(counts["lang"]))
    wide = counts.pivot_table(
        index=["step", "unit", "description"], columns="lang", values="count", aggfunc="first", sort=False
    )
    wide = wide.reindex(columns=[c for c in order if c in wide.columns])
    wide.columns.name = None
    return wide.reset_index()


def alignment_quality_table(quality: pd.DataFrame) -> pd.DataFrame:
    """One row per gold set, extra text and symmetrisation: links, precision, recall, AER, and the gold
    links left out because they fall outside their sentence."""
    out = quality[
        [
            "gold",
            "lang",
            "extra",
            "extra_lines",
            "symmetrisation",
            "sentences",
            "predicted",
            "sure",
            "possible",
            "precision",
            "recall",
            "aer",
            "dropped_gold_links",
        ]
    ].rename(
        columns={
            "extra_lines": "extra lines",
            "predicted": "|A|",
            "sure": "|S|",
            "possible": "|P|",
            "aer": "AER",
            "dropped_gold_links": "gold links left out",
        }
    )
    return out.reset_index(drop=True)


def gaps_table(gaps: pd.DataFrame) -> pd.DataFrame:
    """Each group's sentence-adjusted gap to the reference for people (a difference of the metric's
    per-annotation means, on its 0-1 scale): the gap, the interval that inverts its permutation test
    (Bonferroni level), the p-values, ``*`` exactly when the interval excludes 0; a row that cannot
    inform (degenerate permutations, unbounded interval) says so."""
    out = gaps[key_columns(gaps)].copy()
    out["metric"] = out["metric"].map(metric_label)
    out["comparison"] = gaps["group"] + " vs " + gaps["reference"]
    rules = add_estimate_with_test(out, gaps, estimate="gap", p="p_permutation", test="permutation")
    out["test"] = [_informative(r) for _, r in gaps.iterrows()]
    out["sentences"] = gaps["n_sentences"]
    out["annotators"] = gaps["n_annotators"]
    return with_display(out.reset_index(drop=True), **rules)


def _informative(gap) -> str:
    """'' for a gap row that can inform, else why it cannot."""
    if gap["informative"]:
        return ""
    if np.isfinite(gap["ci_low"]) and np.isfinite(gap["ci_high"]):
        return "uninformative: every assignment gives the same |gap|"
    return "uninformative: the permutations cannot bound the interval"


def disparity_table(disparity: pd.DataFrame) -> pd.DataFrame:
    """sigma_gd across the four groups per model, language (and all pooled) and metric for people
    (percentage points): its bootstrap interval, the critical value it must exceed, its mean when no
    group differs, the debiased disparity with its interval, the permutation p and a verdict that says
    only what the test supports."""
    out = disparity[["model", "lang"]].copy()
    out["metric"] = disparity["metric"].map(PAPER_METRIC_LABELS)
    out["σ_gd"] = disparity["sigma_gd"]
    out["low"], out["high"] = disparity["ci_low"], disparity["ci_high"]
    out["critical value"] = disparity["critical_value"]
    out["null mean"] = disparity["null_mean"]
    out["debiased σ_gd"] = disparity["debiased"]
    out["debiased_low"], out["debiased_high"] = disparity["debiased_low"], disparity["debiased_high"]
    out["p (permutation)"] = disparity["p_permutation"]
    out["p Bonferroni"] = disparity["p_bonferroni"]
    out["significant"] = disparity["significant"]
    out["verdict"] = ["groups differ" if sig else "no group differs significantly" for sig in disparity["significant"]]
    return with_display(
        out.reset_index(drop=True),
        intervals={
            "bootstrap interval": ("low", "high", 0.0),
            "debiased interval": ("debiased_low", "debiased_high", 0.0),
        },
        thresholds={"σ_gd": "critical value"},
        marks={"p Bonferroni": "significant"},
    )


def group_tests_table(tests: pd.DataFrame) -> pd.DataFrame:
    """The omnibus, 2 x 2 and group x language permutation tests for people, each with its null
    (``*``: Holm-adjusted p < alpha)."""
    out = tests[[*key_columns(tests), "test"]].copy()
    out["metric"] = out["metric"].map(metric_label)
    out["statistic"] = tests["statistic"]
    out["p (permutation)"] = tests["p_permutation"]
    out["p Holm"] = tests["p_holm"]
    out["significant"] = tests["significant"]
    out["annotators"] = tests["n_annotators"]
    out["note"] = np.where(
        tests["p_permutation"].isna(),
        "untestable: fewer than two groups, or no variation within the groups to studentize by",
        "",
    )
    out["null (what is permuted)"] = tests["null"]
    return with_display(out.reset_index(drop=True), marks={"p Holm": "significant"})
