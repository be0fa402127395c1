"""Tables for people: wide tables in the papers' layouts, rendered as CSV, Markdown and LaTeX.

- CrowS-Pairs: Table 4 (:func:`table4`) and Table 5 (:func:`table5`) of Névéol et al. (2022)
  from the summary of :mod:`plmfair.crows_pairs`;
- MozArt: Tables 2-5 (:func:`paper_table`) of Cabello Piqueras & Søgaard (2022) from the
  metrics of :mod:`plmfair.metrics`;
- cloze construction: what each filter leaves (:func:`construction_table`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import pandas as pd

from plmfair.data import BIAS_TYPES, GROUPS
from plmfair.io import read_parquet, write_csv, write_text
from plmfair.metrics import sigma_gd


def _fmt(value, digits: int) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def to_markdown(df: pd.DataFrame, *, digits: int = 2) -> str:
    """A GitHub-flavoured Markdown table (first column left-aligned, the rest right-aligned)."""
    header = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v, digits).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines) + "\n"


_LATEX_ESCAPES = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in str(text))


def to_latex(df: pd.DataFrame, *, digits: int = 2, caption: str = "", label: str = "") -> str:
    """A booktabs LaTeX table."""
    cols = "l" + "r" * (len(df.columns) - 1)
    out = [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{cols}}}", r"\toprule"]
    out.append(" & ".join(latex_escape(c) for c in df.columns) + r" \\")
    out.append(r"\midrule")
    for row in df.itertuples(index=False):
        out.append(" & ".join(latex_escape(_fmt(v, digits)) for v in row) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        out.append(rf"\caption{{{latex_escape(caption)}}}")
    if label:
        out.append(rf"\label{{{label}}}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def write_table(df: pd.DataFrame, *, csv: str | os.PathLike, md: str | os.PathLike, tex: str | os.PathLike,
                caption: str, label: str, digits: int = 2) -> None:
    """Write one table as CSV (full precision), Markdown and LaTeX (``digits`` decimals)."""
    write_csv(df, csv)
    write_text(f"{caption}\n\n" + to_markdown(df, digits=digits), md)
    write_text(to_latex(df, digits=digits, caption=caption, label=label), tex)


ROW_LABELS = {"metric": "Metric score", "stereo": "Stereo score", "antistereo": "Anti-stereo score"}


def _cell(row) -> str:
    if pd.isna(row["score"]):
        return ""
    return f"{row['score']:.2f}" + ("*" if row["significant"] else "")


def table4(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 4 of Névéol et al. (2022): rows metric/stereo/anti-stereo score, run time, then each
    bias type; per data set an ``n`` column and one column per model. ``*``: adjusted p < alpha."""
    datasets = list(dict.fromkeys(summary["dataset"]))
    row_keys = [("overall", "metric"), ("direction", "stereo"), ("direction", "antistereo"), ("runtime", ""),
                ("skipped", "")]
    present = set(summary.loc[summary["subset_kind"] == "bias_type", "subset"])
    row_keys += [("bias_type", bt) for bt in BIAS_TYPES if bt in present]
    labels = {"runtime": "Run time (s)", "skipped": "Pairs skipped"}
    table: dict[str, list] = {"": [labels.get(k, ROW_LABELS.get(s, s)) for k, s in row_keys]}
    for ds in datasets:
        sub = summary[summary["dataset"] == ds]
        first = sub[sub["model"] == sub["model"].iloc[0]].set_index(["subset_kind", "subset"])
        table[f"{ds} n"] = [
            "" if k in labels else (int(first.loc[(k, s), "n_pairs"]) if (k, s) in first.index else "")
            for k, s in row_keys
        ]
        for model in dict.fromkeys(sub["model"]):
            m = sub[sub["model"] == model].set_index(["subset_kind", "subset"])
            col = []
            for k, s in row_keys:
                if k == "runtime":
                    col.append(f"{m['wall_time_s'].iloc[0]:.1f}")
                elif k == "skipped":
                    col.append(str(int(m.loc[("overall", "metric"), "n_skipped"])))
                else:
                    col.append(_cell(m.loc[(k, s)]) if (k, s) in m.index else "")
            table[f"{ds} {model}"] = col
    return pd.DataFrame(table)


def table5(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 5 of Névéol et al. (2022): metric score on native vs translated pairs, per data set and model."""
    sub = summary[summary["subset_kind"] == "origin"]
    rows = []
    for (ds, origin), g in sub.groupby(["dataset", "subset"], sort=False):
        row = {"dataset": ds, "pairs": origin, "n": int(g["n_pairs"].iloc[0])}
        for _, r in g.iterrows():
            row[r["model"]] = _cell(r)
        rows.append(row)
    return pd.DataFrame(rows).fillna("")


def write_crows_pairs_tables(summary_path, mcnemar_path, *, table4_csv, table4_md, table4_tex, table5_csv, table5_md,
                 table5_tex, mcnemar_csv) -> None:
    """Render Table 4, Table 5 and the McNemar comparisons (CSV, Markdown, LaTeX)."""
    summary = read_parquet(summary_path)
    alpha_note = "* : significantly different from 50% (exact binomial test; bias types Bonferroni-adjusted per model)."
    write_table(
        table4(summary), csv=table4_csv, md=table4_md, tex=table4_tex,
        caption=f"CrowS-Pairs scores (% of pairs preferring the more stereotyping sentence). {alpha_note}",
        label="tab:crows_pairs",
    )
    write_table(
        table5(summary), csv=table5_csv, md=table5_md, tex=table5_tex,
        caption=f"CrowS-Pairs metric score on native vs translated pairs. {alpha_note}",
        label="tab:crows_pairs_origin",
    )
    write_csv(read_parquet(mcnemar_path), mcnemar_csv)


TABLES = {"p_at_1": "Table 2 (P@1)", "spearman_rho": "Table 3 (Spearman)", "p_at_5": "Table 4 (P@5)",
          "kendall_tau": "Table 5 (Kendall)"}
LANG_ORDER = ("en", "es", "de", "fr")


def paper_table(metrics: pd.DataFrame, *, model: str, metric: str) -> pd.DataFrame:
    """One of Tables 2-5 for one model: rows MN FN MNN FNN (+ Avg for correlations), columns per
    language, each row's mean with sigma_gd across languages, a last row of each column's mean
    with sigma_gd across groups. † marks the worst-off group of a language; ‡ the language with
    the highest disparity."""
    m = metrics[(metrics["model"] == model) & metrics["group"].isin(GROUPS)]
    langs = [lang for lang in LANG_ORDER if lang in set(m["lang"])] + sorted(set(m["lang"]) - set(LANG_ORDER))
    grid = m.pivot(index="group", columns="lang", values=metric).reindex(index=list(GROUPS), columns=langs)
    scale = 1.0 if metric in ("p_at_1", "p_at_5", "mrr") else 100.0
    grid = grid * scale
    col_sigma = {lang: sigma_gd(grid[lang].to_numpy()) for lang in langs}
    worst_lang = max(col_sigma, key=lambda lang: -1 if pd.isna(col_sigma[lang]) else col_sigma[lang])
    rows = []
    for group in GROUPS:
        vals = grid.loc[group]
        row = {"group": group}
        for lang in langs:
            cell = "" if pd.isna(vals[lang]) else f"{vals[lang]:.1f}"
            if cell and vals[lang] == grid[lang].min():
                cell += "†"
            row[lang.upper() + ("‡" if lang == worst_lang else "")] = cell
        row["mean (σ_gd)"] = f"{vals.mean():.1f} ({sigma_gd(vals.to_numpy()):.1f})"
        rows.append(row)
    if metric in ("spearman_rho", "kendall_tau"):
        avg = {"group": "Avg"}
        for lang in langs:
            avg[lang.upper() + ("‡" if lang == worst_lang else "")] = f"{grid[lang].mean():.1f}"
        avg["mean (σ_gd)"] = ""
        rows.append(avg)
    last = {"group": "mean (σ_gd)"}
    for lang in langs:
        last[lang.upper() + ("‡" if lang == worst_lang else "")] = f"{grid[lang].mean():.1f} ({col_sigma[lang]:.1f})"
    last["mean (σ_gd)"] = ""
    rows.append(last)
    return pd.DataFrame(rows)


def write_paper_tables(metrics_path, *, out_dir_files: dict[str, dict[str, str]], disparity_csv: str) -> None:
    """Tables 2-5 for every model (CSV, Markdown, LaTeX) and the sigma_gd table."""
    from plmfair.metrics import disparity_table

    metrics = read_parquet(metrics_path)
    for key, files in out_dir_files.items():
        model, metric = key.split("|")
        write_table(
            paper_table(metrics, model=model, metric=metric), **files,
            caption=f"MozArt {TABLES[metric]} for {model}: rows are annotator groups (M/F x native/non-native), "
                    f"cells in percent (correlations x 100); each row and column mean with its group disparity sigma_gd in parentheses; "
                    f"† worst-off group of a language, ‡ language with the highest disparity.",
            label=f"tab:mozart_{metric}_{model}", digits=1,
        )
    write_csv(disparity_table(metrics), disparity_csv)


def construction_table(counts: pd.DataFrame) -> pd.DataFrame:
    """Wide table for people: one row per corpus and step, one column per language and 'all'."""
    order = list(dict.fromkeys(counts["lang"]))
    wide = counts.pivot_table(index=["corpus", "step", "unit", "description"], columns="lang", values="count",
                              aggfunc="first", sort=False)
    wide = wide.reindex(columns=[c for c in order if c in wide.columns])
    wide.columns.name = None
    return wide.reset_index()


def write_construction_table(count_files: Sequence[str | os.PathLike], *, csv: str, md: str, tex: str) -> None:
    """``results/tables/cloze_construction.{csv,md,tex}``: what each filter leaves, per corpus and language."""
    counts = pd.concat([read_parquet(p) for p in count_files], ignore_index=True)
    write_table(
        construction_table(counts), csv=csv, md=md, tex=tex, digits=0,
        caption="Cloze construction: what is left after each filter, applied in order. Sentence steps count lines; "
                "word steps count pivot-language words with their aligned counterparts. A language column counts what "
                "passes the step in that language among what passed every earlier step in all languages; 'all' what "
                "passes in all of them.",
        label="tab:cloze_construction",
    )
