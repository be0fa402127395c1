"""Figures (PNG and PDF) for the Snakemake report."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import Normalize, TwoSlopeNorm  # noqa: E402

from plmfair.io.atomic import atomic_path  # noqa: E402
from plmfair.rendering.labels import contrast_label, metric_label, metric_name  # noqa: E402
from plmfair.rendering.numbers import level, number  # noqa: E402

# Okabe & Ito's colour-blind-safe palette.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
LANGUAGE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h")


def save_figure(fig, png: str | os.PathLike, pdf: str | os.PathLike) -> None:
    """Save ``fig`` atomically as PNG (150 dpi) and PDF, then close it."""
    with atomic_path(png) as tmp:
        fig.savefig(tmp, format="png", dpi=150, bbox_inches="tight")
    with atomic_path(pdf) as tmp:
        fig.savefig(tmp, format="pdf", bbox_inches="tight")
    plt.close(fig)


def _forest_rows(effects: pd.DataFrame) -> pd.DataFrame:
    """The rows a forest plot draws, whatever their analysis: (model, label, metric, estimate, ci_low,
    ci_high, ci_level, significant, drawable). Group gaps (``gap``): "EN: FN vs MN"; mixed-model
    effects: the compared terms (group or data set), not the intercept nor the language controls."""
    if "gap" in effects.columns:  # a gap that cannot inform is not drawn (its table says why)
        rows = effects[effects["informative"].astype(bool)].assign(estimate=lambda d: d["gap"], converged=True)
        contrasts = [f"{g} vs {r}" for g, r in zip(rows["group"], rows["reference"], strict=True)]
    else:
        rows = effects[effects["term"].str.startswith(("group[", "dataset["))].copy()
        contrasts = [contrast_label(t, r) for t, r in zip(rows["term"], rows["reference"], strict=True)]
    if "metric" in rows.columns:  # annotator groups, by language: "EN: FN vs MN"
        where = ["all languages" if lang == "all" else lang.upper() for lang in rows["lang"]]
        rows["label"] = [f"{w}: {c}" for w, c in zip(where, contrasts, strict=True)]
        rows["metric"] = rows["metric"].map(metric_label)
    else:  # CrowS-Pairs data sets against the first: "demo_de vs demo_en"
        rows["label"] = contrasts
        rows["metric"] = metric_label("margin")
    rows["drawable"] = rows["converged"].astype(bool) & rows["estimate"].notna() & rows["ci_low"].notna()
    return rows


def effects_forest_figure(
    effects: pd.DataFrame,
    png: str | os.PathLike,
    pdf: str | os.PathLike,
    *,
    title: str,
    tie_breaks: Mapping[str, str] | None = None,
) -> None:
    """Forest plot of a comparison's rows with their intervals: one row of panels per model, one
    column per metric, a line per language x contrast. Each row is drawn with its own analysis's
    interval and mark, filled and starred exactly where its ``significant`` is set (which the
    analysis sets exactly when that interval excludes 0); an end the permutations cannot bound runs
    to the panel's edge with an arrow; "not converged" where a fit did not reach its optimum.
    ``tie_breaks`` (metric -> the finer score whose gap breaks its ties in the gap test) is said in
    the note under the figure for each such metric drawn."""
    terms = _forest_rows(effects)
    models = list(dict.fromkeys(terms["model"])) or [""]
    metrics = list(dict.fromkeys(terms["metric"])) or [""]
    kinds = sorted(set(terms["label"].str.split(": ").str[-1]))
    colour = {t: OKABE_ITO[i % len(OKABE_ITO)] for i, t in enumerate(kinds)}
    heights = [max(1, terms.loc[terms["model"] == m, "label"].nunique()) for m in models]
    finite = terms.loc[terms["drawable"], ["estimate", "ci_low", "ci_high"]].to_numpy(dtype=float)
    finite = finite[np.isfinite(finite)]
    # each model on its own scale: CrowS-Pairs margins are in each model's own units
    fig, axes = plt.subplots(
        len(models),
        len(metrics),
        squeeze=False,
        figsize=(4.8 * len(metrics) + 1.5, 1.4 + 0.3 * sum(heights) + 0.4 * len(models)),
        gridspec_kw={"height_ratios": heights},
    )
    for row, model in enumerate(models):
        sub = terms[terms["model"] == model]
        labels = list(dict.fromkeys(sub["label"]))
        y = {label: i for i, label in enumerate(reversed(labels))}
        span = sub.loc[sub["drawable"], ["estimate", "ci_low", "ci_high"]].to_numpy(dtype=float)
        span = span[np.isfinite(span)]
        span = span if len(span) else (finite if len(finite) else np.array([-1.0, 1.0]))
        pad = 0.08 * max(float(np.ptp(np.append(span, 0.0))), 1e-9)
        limits = (min(span.min(), 0.0) - pad, max(span.max(), 0.0) + pad)
        for col, metric in enumerate(metrics):
            ax = axes[row, col]
            for _, r in sub[sub["metric"] == metric].iterrows():
                yi = y[r["label"]]
                if not r["drawable"]:
                    ax.annotate(
                        "not converged",
                        (0.02, yi),
                        xycoords=("axes fraction", "data"),
                        fontsize=7,
                        color="grey",
                        va="center",
                    )
                    continue
                c = colour[r["label"].split(": ")[-1]]
                low, high = max(r["ci_low"], limits[0]), min(r["ci_high"], limits[1])
                significant = bool(r["significant"])
                ax.errorbar(
                    r["estimate"],
                    yi,
                    xerr=[[r["estimate"] - low], [high - r["estimate"]]],
                    fmt="o",
                    ms=5,
                    capsize=2,
                    color=c,
                    markerfacecolor=c if significant else "white",
                )
                for end, edge, marker in ((r["ci_low"], limits[0], "<"), (r["ci_high"], limits[1], ">")):
                    if not np.isfinite(end) or abs(end) > abs(edge) and np.sign(end) == np.sign(edge):
                        ax.plot([edge], [yi], marker=marker, color=c, ms=5, clip_on=False)
                if significant:
                    ax.annotate("*", (high, yi), xytext=(3, -3), textcoords="offset points", fontsize=10)
            ax.axvline(0, color="grey", lw=1, ls="--")
            ax.set_xlim(limits)
            ax.set_ylim(-0.6, len(labels) - 0.4)
            ax.set_yticks(list(y.values()))
            ax.set_yticklabels(list(y.keys()) if col == 0 else [], fontsize=8)
            if row == 0:
                ax.set_title(metric, fontsize=10)
            if col == 0:
                ax.set_ylabel(model, fontsize=9)
    levels = "/".join(level(v, alpha=0.05) for v in sorted(set(terms["ci_level"].dropna()))) or "95%"
    # the unit of the difference: a metric's per-annotation scale, or a CrowS-Pairs log-probability margin
    unit = "points of the metric's 0-1 scale" if "metric" in effects.columns else "log-probability"
    # once for every column (one label per column ran into the next), above the note on the test; room
    # for both kept in inches, whatever the figure's height
    height = fig.get_figheight()
    fig.supxlabel(
        f"difference from the reference ({unit}; {levels} interval); filled, *: significant (interval excludes 0)",
        fontsize=9,
        y=0.4 / height,
        va="bottom",
    )
    fig.suptitle(title, fontsize=11)
    # the test behind the marks, its family and correction, in the figure itself (it travels without its caption)
    if "gap" not in effects.columns:
        method = "Wald test of the mixed model; Bonferroni over the compared terms of one fit, interval at that level."
    else:
        method = (
            "Permutation test of the two groups compared (their labels permuted within batches); interval: that "
            "test inverted; Bonferroni over the three gaps to the reference of one model, language and metric."
        )
        drawn_metrics = set(effects.get("metric", ()))
        for metric, finer in (tie_breaks or {}).items():
            if metric in drawn_metrics:
                method += (
                    f" {metric_name(metric)}: ties broken by the gap in {metric_name(finer)}; a row marked by that "
                    "tie-break can have an interval that ends close to 0 (a shifted score has no ties to break)."
                )
    left_out = int((~effects["informative"].astype(bool)).sum()) if "informative" in effects.columns else 0
    if left_out:
        method += (
            f" {left_out} uninformative row(s) not drawn (every assignment gives the same |gap|, or the "
            "permutations cannot bound the interval): listed in the table."
        )
    fig.text(0.01, 0.05 / height, method, fontsize=7, ha="left", va="bottom", wrap=True)
    fig.tight_layout(rect=(0, 0.7 / height, 1, 0.98))
    save_figure(fig, png, pdf)


def breakdown_heatmap(
    table: pd.DataFrame,
    png: str | os.PathLike,
    pdf: str | os.PathLike,
    *,
    value: str,
    columns: str,
    panels: str,
    title: str,
    value_label: str,
    column_order: Sequence[str] | None = None,
    shared_rows: bool = False,
    centre: float | None = None,
    count_label: str = "n",
    empty_label: str = "",
) -> None:
    """Heatmap of ``value`` (0-100) per attribute bucket (rows: attributes in the order the table lists
    them, its breakdowns job's registry order; buckets in their order) x ``columns`` (in
    ``column_order``, else as they come), one panel per ``panels``; every cell shows its value and n
    (``count_label``: what n counts), a cell with items but no value ``empty_label``. The colour
    scale is sequential, or diverging around ``centre`` (the null value: a cell reads above or
    below it). Panels have their own rows, or with ``shared_rows`` every panel has every row
    (buckets common to all panels); a bucket no item falls in (n = 0 everywhere) is left out."""
    table = table[table["n"] > 0]
    names = list(dict.fromkeys(table[panels]))
    present = list(dict.fromkeys(table[columns]))
    cols = [c for c in column_order if c in present] if column_order is not None else present
    rank = {a: i for i, a in enumerate(dict.fromkeys(table["attribute"]))}
    per_panel = []
    for name in names:
        sub = table[table[panels] == name]
        rows = (
            (table if shared_rows else sub)[["attribute", "bucket", "bucket_order"]]
            .drop_duplicates()
            .assign(a=lambda d: d["attribute"].map(rank))
            .sort_values(["a", "bucket_order", "bucket"], kind="stable")
        )
        cells = sub.set_index(["attribute", "bucket", columns])
        per_panel.append((name, cells, list(zip(rows["attribute"], rows["bucket"], strict=True))))
    n_rows = max(len(rows) for _, _, rows in per_panel)
    same_rows = all(rows == per_panel[0][2] for _, _, rows in per_panel)  # then only the first panel is labelled
    label_width = 2.4 if same_rows else 2.4 * len(names)
    # constrained layout keeps the row labels of a panel clear of its neighbour and of the colour bar
    fig, axes = plt.subplots(
        1,
        len(names),
        figsize=(0.8 * len(cols) * len(names) + label_width + 1.2, 0.34 * n_rows + 1.8),
        squeeze=False,
        layout="constrained",
    )
    # perceptually uniform and colour-blind safe; diverging (purple-orange) around a null value
    cmap = plt.get_cmap("viridis" if centre is None else "PuOr_r")
    norm = Normalize(0, 100) if centre is None else TwoSlopeNorm(vcenter=centre, vmin=0, vmax=100)
    for ax, (name, sub, rows) in zip(axes[0], per_panel, strict=True):
        vals = np.full((len(rows), len(cols)), np.nan)
        ns = np.zeros((len(rows), len(cols)), dtype=int)
        for i, (a, b) in enumerate(rows):
            for j, c in enumerate(cols):
                if (a, b, c) in sub.index:
                    vals[i, j] = sub.loc[(a, b, c), value]
                    ns[i, j] = sub.loc[(a, b, c), "n"]
        im = ax.imshow(vals, aspect="auto", cmap=cmap, norm=norm)
        for i in range(len(rows)):
            for j in range(len(cols)):
                v = vals[i, j]
                count = f"{count_label}={ns[i, j]}"
                text = f"{empty_label}\n{count}" if np.isnan(v) else f"{number(v, 0, keep=(centre,))}\n{count}"
                # dark text on the light middle of the scale, white on its dark ends
                light = not np.isnan(v) and (abs(norm(v) - 0.5) < 0.3 if centre is not None else v >= 60)
                ax.text(
                    j,
                    i,
                    text,
                    ha="center",
                    va="center",
                    fontsize=6.5,
                    color="black" if light else ("grey" if np.isnan(v) else "white"),
                )
        ax.set_xticks(range(len(cols)))
        ax.set_xticklabels(cols, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([f"{a}: {b}" for a, b in rows] if ax is axes[0, 0] or not same_rows else [], fontsize=8)
        ax.set_title(str(name), fontsize=9)
    fig.suptitle(title, fontsize=10)
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label=value_label)
    save_figure(fig, png, pdf)
