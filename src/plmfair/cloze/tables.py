"""Cloze tables for people: MozArt's Tables 1-5 (Cabello Piqueras & Søgaard 2022), sigma_gd with its
tests, group gaps and tests, construction and alignment quality."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from plmfair.cloze.annotations import GROUPS
from plmfair.cloze.measures import COLUMNS, LABELS
from plmfair.rendering.labels import metric_label
from plmfair.rendering.marks import add_decisions
from plmfair.rendering.numbers import number, p_value
from plmfair.rendering.table_format import (
    held_to,
    key_columns,
    verdict_columns,
    with_coverage_warnings,
    with_display,
    with_layout,
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


def _lang_order(langs: Iterable[str]) -> list[str]:
    langs = set(langs)
    return [lang for lang in LANG_ORDER if lang in langs] + sorted(langs - set(LANG_ORDER))


def _model_block(m: pd.DataFrame, langs: list[str], metric: str, alpha: float) -> tuple[list[dict], list[dict]]:
    """The printed rows of one model in a paper table (see :func:`paper_table`) and its numbers, a row per
    cell (group or All, column, value and, for a correlation, its p)."""
    scale = 1.0 if metric in COLUMNS else 100.0
    grid = m.pivot(index="group", columns="lang", values=metric).reindex(index=[*GROUPS, "all"], columns=langs) * scale
    p_col = CORRELATION_P.get(metric)
    pvals = (
        m.pivot(index="group", columns="lang", values=p_col).reindex(index=grid.index, columns=langs) if p_col else None
    )
    groups = grid.loc[list(GROUPS)]
    col_sigma = {lang: sigma_gd(groups[lang].to_numpy()) for lang in langs}
    row_sigma = {g: sigma_gd(groups.loc[g].to_numpy()) for g in GROUPS}
    most_lang, red_rows = _most_disparate(col_sigma), _most_disparate(row_sigma)

    def cell(group: str, lang: str) -> str:
        v = grid.at[group, lang]
        if pd.isna(v):
            return ""
        text = number(v, 1)
        if pvals is not None:
            p = pvals.at[group, lang]
            text += "" if pd.isna(p) else f" ({p_value(p, alpha=alpha)})".replace("0.", ".")
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
    cells = []
    for group in [*GROUPS, "all"]:
        for lang in langs:
            p = pvals.at[group, lang] if pvals is not None else None
            cells.append({"group": group, "column": lang, "value": grid.at[group, lang], "p": p})
        values = grid.loc[group]
        cells.append({"group": group, "column": "mean", "value": values.mean(), "p": None})
        spread = row_sigma[group] if group in GROUPS else sigma_gd(values.to_numpy())
        cells.append({"group": group, "column": "σ_gd across languages", "value": spread, "p": None})
    cells += [{"group": "σ_gd across groups", "column": lang, "value": col_sigma[lang], "p": None} for lang in langs]
    return rows, cells


def paper_table(metrics: pd.DataFrame, *, metric: str, alpha: float) -> pd.DataFrame:
    """One of Tables 2-5 of the MozArt paper: a block of rows per model (in the metrics' order).

    Rows MN, FN, MNN, FNN and All; one column per language, then each row's mean with its
    sigma_gd across languages. A group's cell is the metric over that group's annotations; the
    All row is the metric over every annotation of the language pooled (the paper's language
    average: mBERT's German P@1 10.8 = 65/600, not the mean of the four groups), with the
    sigma_gd of the four groups in parentheses. Correlations are x 100 and carry their
    p-value, ``34.5 (.012)``, unmarked (scipy's, approximate: docs/statistics.md). Marks, descriptive as
    in the paper: † the worst-off group of a language, ‡ (on the All row) the language with the highest
    sigma_gd across groups, § the group with the highest sigma_gd across languages (the paper's red row);
    ties are all marked, and nothing is marked when every sigma_gd is the same (a single language). The
    CSV holds the numbers, a row per cell."""
    langs = _lang_order(metrics["lang"])
    rows, cells = [], []
    for model in dict.fromkeys(metrics["model"]):
        printed, values = _model_block(metrics[metrics["model"] == model], langs, metric, alpha)
        rows += [{"model": model, **row} for row in printed]
        cells += [{"model": model, **cell} for cell in values]
    numbers = pd.DataFrame(cells, columns=["model", "group", "column", "value", "p"])
    if metric not in CORRELATION_P:
        numbers = numbers.drop(columns="p")
    return with_layout(with_coverage_warnings(numbers, metrics), pd.DataFrame(rows))


def table1(overview: pd.DataFrame) -> pd.DataFrame:
    """Table 1 of the MozArt paper from a cloze set's overview (:data:`plmfair.cloze.metrics.OVERVIEW_SCHEMA`):
    per language, sentences, annotations and annotators, and the mean number of tokens per sentence
    in each model's tokenizer (WordPiece, SentencePiece, BPE); the CSV holds the overview's numbers."""
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
    return with_layout(overview.reset_index(drop=True), pd.DataFrame(rows))


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


def gaps_table(gaps: pd.DataFrame, hypotheses: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """Each group's sentence-adjusted gap to the reference for people (a difference of the metric's
    per-annotation means, on its 0-1 scale): the gap, the interval that inverts the permutation test of the
    gap alone at 1 - alpha, the test's p (its ties broken for P@1) and the gap alone's, and the decision on
    the run's hypotheses (``*`` where significant); a mark that only the tie-break makes, and accepted shifts
    that are not one interval, are said."""
    out = gaps[key_columns(gaps)].copy()
    out["metric"] = out["metric"].map(metric_label)
    out["comparison"] = gaps["group"] + " vs " + gaps["reference"]
    out["gap"] = gaps["gap"]
    out["low"], out["high"] = gaps["ci_low"], gaps["ci_high"]
    out["p (permutation)"] = gaps["p_permutation"]
    out["p (gap alone)"] = gaps["p_untied"]
    marks = add_decisions(out, gaps, hypotheses, untested=("low", "high"))
    holds_zero = (gaps["ci_low"] <= 0) & (gaps["ci_high"] >= 0)
    # a p below alpha, marked or nominal only, that the tie-break alone makes: said beside its interval
    below = out["low"].notna() & (gaps["p_permutation"] < alpha)
    out["note"] = [
        "; ".join(
            part
            for part in (
                text,
                "decided by the tie-break: the gap alone's test does not reject" if sig and zero else "",
                "the accepted shifts are not one interval (ties): their hull" if tested and not connected else "",
            )
            if part
        )
        for text, sig, zero, tested, connected in zip(
            out["note"], below, holds_zero, out["low"].notna(), gaps["interval_connected"], strict=True
        )
    ]
    out["sentences"] = gaps["n_sentences"]
    out["annotators"] = gaps["n_annotators"]
    return with_display(
        out.reset_index(drop=True),
        alpha=alpha,
        nulls={"gap": 0.0},
        intervals={f"interval ({number(100 * (1 - alpha), 0)}%)": ("low", "high", 0.0)},
        marks=marks,
    )


def disparity_table(disparity: pd.DataFrame, hypotheses: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """sigma_gd across the four groups per model, language (and all pooled) and metric for people
    (percentage points): the critical value it must exceed, its mean when no group differs, the debiased
    disparity, the interval of the true disparity that inverts its test, the permutation p, the run's
    decision on the run's hypotheses and a verdict that says only what the test supports."""
    out = disparity[["model", "lang"]].copy()
    out["metric"] = disparity["metric"].map(LABELS)
    out["σ_gd"] = disparity["sigma_gd"]
    out["critical value"] = disparity["critical_value"]
    out["null mean"] = disparity["null_mean"]
    out["debiased σ_gd"] = disparity["debiased"]
    out["low"], out["high"] = disparity["ci_low"], disparity["ci_high"]
    out["p (permutation)"] = disparity["p_permutation"]
    marks = add_decisions(out, disparity, hypotheses, untested=("low", "high", "critical value"))
    out["verdict"] = [
        "groups differ"
        if sig
        else ("no group differs significantly" if family in ("confirmatory", "secondary") else "")
        for sig, family in zip(out["significant"], out["family"], strict=True)
    ]
    return with_display(
        out.reset_index(drop=True),
        alpha=alpha,
        intervals={f"interval of the true σ_gd ({number(100 * (1 - alpha), 0)}%)": ("low", "high", 0.0)},
        thresholds={"σ_gd": "critical value"},
        marks=marks,
    )


def group_tests_table(tests: pd.DataFrame, hypotheses: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """The omnibus, 2 x 2 and group x language permutation tests for people, each with its null and the
    decision on the run's hypotheses (``*`` where significant)."""
    out = tests[[*key_columns(tests), "test"]].copy()
    out["metric"] = out["metric"].map(metric_label)
    out["statistic"] = tests["statistic"]
    out["p (permutation)"] = tests["p_permutation"]
    marks = add_decisions(out, tests, hypotheses)
    out["annotators"] = tests["n_annotators"]
    out["null (what is permuted)"] = tests["null"]
    return with_display(out.reset_index(drop=True), alpha=alpha, marks=marks)


def verdicts_table(robustness: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """Per model: the primary disparity verdict and whether every other metric and every annotator's removal
    shows it at the level the primary question is held to (:func:`plmfair.rendering.table_format.verdict_cells`;
    :data:`plmfair.cloze.robustness.CLOZE_ROBUSTNESS_SCHEMA`), with the annotator whose removal moves it most."""
    out = robustness[["model"]].copy()
    out["σ_gd of MRR"] = robustness["sigma_gd"]
    out["p"] = robustness["p_value"]
    out["verdict"] = robustness["verdict"]
    out["held to"] = [held_to(alpha, size) for size in robustness["family_size"]]
    cells = verdict_columns(robustness)
    out[list(cells.columns)] = cells
    out["p (all show it)"] = robustness["p_all"]
    out["removals short of it"] = robustness["removals_short"].astype(int)
    out["most influential annotator"] = robustness["most_influential"]
    out["its removal moves σ_gd by"] = robustness["largest_change"]
    return with_display(out.reset_index(drop=True), alpha=alpha)
