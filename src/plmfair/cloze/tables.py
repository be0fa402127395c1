"""Cloze tables for people: MozArt's Tables 1-5 (Cabello Piqueras & Søgaard 2022), sigma_gd with its
tests, group gaps and tests, construction and alignment quality."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from plmfair.cloze.annotations import GROUPS
from plmfair.cloze.metrics import sigma_gd
from plmfair.rendering.labels import PAPER_METRIC_LABELS, format_p, metric_label
from plmfair.rendering.table_format import (
    add_estimate_with_test,
    interval_text,
    key_columns,
    marked_p,
    with_coverage_warnings,
)

LANG_ORDER = ("en", "es", "de", "fr")


CORRELATION_P = {"spearman_rho": "spearman_p", "kendall_tau": "kendall_p"}


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
        text = f"{v:.1f}"
        if pvals is not None:
            p = pvals.at[group, lang]
            text += ("°" if pd.isna(p) or p >= alpha else "") + (
                "" if pd.isna(p) else f" ({format_p(p)})".replace("0.", ".")
            )
        if group in GROUPS and v == groups[lang].min():
            text += "†"
        return text

    def mean_sigma(values: pd.Series, sigma: float) -> str:
        # a row with a blank cell averages fewer languages: said, not hidden
        covered = int(values.notna().sum())
        return f"{values.mean():.1f} ({sigma:.1f})" + (
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
            lang.upper(): cell("all", lang) + f" ({col_sigma[lang]:.1f})" + ("‡" if lang in most_lang else "")
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
                    **{lang.upper(): f"{values[lang]:.1f}" if lang in values else "" for lang in langs},
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
    """Each group's sentence-adjusted gap to the reference for people: the gap, the interval that
    inverts its permutation test (Bonferroni level), the p-values, ``*`` exactly when the interval
    excludes 0."""
    out = gaps[key_columns(gaps)].copy()
    out["metric"] = out["metric"].map(metric_label)
    out["comparison"] = gaps["group"] + " vs " + gaps["reference"]
    add_estimate_with_test(out, gaps, estimate="gap", p="p_permutation", test="permutation")
    out["sentences"] = gaps["n_sentences"]
    out["annotators"] = gaps["n_annotators"]
    return out.reset_index(drop=True)


def disparity_table(disparity: pd.DataFrame) -> pd.DataFrame:
    """sigma_gd across the four groups per model, language (and all pooled) and metric for people:
    its bootstrap interval, the chance level it must exceed, the permutation p and a verdict that
    says only what the test supports."""
    out = disparity[["model", "lang"]].copy()
    out["metric"] = disparity["metric"].map(PAPER_METRIC_LABELS)
    out["σ_gd"] = disparity["sigma_gd"]
    out["bootstrap interval"] = interval_text(disparity["ci_low"], disparity["ci_high"], digits=2)
    out["chance level"] = disparity["chance_level"]
    out["p (permutation)"] = disparity["p_permutation"]
    out["p Bonferroni"] = marked_p(disparity["p_bonferroni"], disparity["significant"])
    out["verdict"] = ["groups differ" if sig else "no group differs significantly" for sig in disparity["significant"]]
    return out.reset_index(drop=True)


def group_tests_table(tests: pd.DataFrame) -> pd.DataFrame:
    """The omnibus, 2 x 2 and group x language permutation tests for people, each with its null
    (``*``: Holm-adjusted p < alpha)."""
    out = tests[[*key_columns(tests), "test"]].copy()
    out["metric"] = out["metric"].map(metric_label)
    out["statistic"] = tests["statistic"]
    out["p (permutation)"] = tests["p_permutation"]
    out["p Holm"] = marked_p(tests["p_holm"], tests["significant"])
    out["annotators"] = tests["n_annotators"]
    out["null (what is permuted)"] = tests["null"]
    return out.reset_index(drop=True)
