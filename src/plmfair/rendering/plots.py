"""Figures (PNG and PDF) for the Snakemake report."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.colors import Normalize, TwoSlopeNorm  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from plmfair.io.atomic import atomic_path  # noqa: E402
from plmfair.rendering.labels import contrast_label, metric_label, metric_name  # noqa: E402
from plmfair.rendering.marks import TESTED, decisions  # noqa: E402
from plmfair.rendering.numbers import level, number  # noqa: E402

# Okabe & Ito's colour-blind-safe palette.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
LANGUAGE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h")


# matplotlib's words when a layout engine gives up (axes squeezed to nothing, a legend wider than the figure):
# the picture it saves anyway is unreadable, so a figure job fails instead
LAYOUT_WARNINGS = r".*(constrained_layout not applied|[Tt]ight layout not applied|tight_layout cannot make).*"


def save_figure(fig: Figure, png: str | os.PathLike, pdf: str | os.PathLike) -> None:
    """Save ``fig`` atomically as PNG (150 dpi) and PDF, laid out once for both, then close it; a layout that collapsed
    (:data:`LAYOUT_WARNINGS`) is an error: its job fails rather than publish an unreadable picture."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=LAYOUT_WARNINGS)
            # the tight box, laid out once for both formats (bbox_inches="tight" lays it out again in each)
            fig.draw_without_rendering()
            box = fig.get_tightbbox().padded(plt.rcParams["savefig.pad_inches"])
            # the layout is in inches and points, the same at every dpi: kept as laid out, not redone per format
            fig.set_layout_engine("none")
            with atomic_path(png) as tmp:
                fig.savefig(tmp, format="png", dpi=150, bbox_inches=box)
            with atomic_path(pdf) as tmp:
                fig.savefig(tmp, format="pdf", bbox_inches=box)
    finally:
        plt.close(fig)


def _forest_rows(effects: pd.DataFrame, hypotheses: pd.DataFrame | None) -> pd.DataFrame:
    """The rows a forest plot draws, whatever their analysis: (model, label, metric, estimate, ci_low,
    ci_high, significant, tested, drawable). Group gaps (``gap``), with the decision on the run's hypotheses
    on each: "EN: FN vs MN", an untested row without its interval; mixed-model effects: the compared
    terms (group or data set), not the intercept nor the language controls, as effect sizes (no interval,
    no mark)."""
    if "gap" in effects.columns:  # a gap that cannot inform is not drawn (its table says why)
        rows = effects[effects["informative"].astype(bool)].assign(estimate=lambda d: d["gap"], converged=True)
        decided = decisions(rows, hypotheses)
        rows["tested"] = decided["family"].isin(TESTED).to_numpy()
        rows["significant"] = decided["significant"].to_numpy(dtype=bool)
        contrasts = [f"{g} vs {r}" for g, r in zip(rows["group"], rows["reference"], strict=True)]
    else:
        rows = effects[effects["term"].str.startswith(("group[", "dataset["))].copy()
        rows["tested"], rows["significant"] = False, False
        rows["ci_low"] = rows["ci_high"] = np.nan
        contrasts = [contrast_label(t, r) for t, r in zip(rows["term"], rows["reference"], strict=True)]
    if "metric" in rows.columns:  # annotator groups, by language: "EN: FN vs MN"
        where = ["all languages" if lang == "all" else lang.upper() for lang in rows["lang"]]
        rows["label"] = [f"{w}: {c}" for w, c in zip(where, contrasts, strict=True)]
        rows["metric"] = rows["metric"].map(metric_label)
    else:  # CrowS-Pairs data sets against the first: "demo_de vs demo_en"
        rows["label"] = contrasts
        rows["metric"] = metric_label("margin")
    rows["drawable"] = rows["converged"].astype(bool) & rows["estimate"].notna()
    rows["with_interval"] = rows["drawable"] & rows["tested"] & rows["ci_low"].notna()
    return rows


def effects_forest_figure(
    effects: pd.DataFrame,
    png: str | os.PathLike,
    pdf: str | os.PathLike,
    *,
    title: str,
    hypotheses: pd.DataFrame | None = None,
    tie_breaks: Mapping[str, str] | None = None,
    alpha: float,
) -> None:
    """Forest plot of a comparison's rows: one row of panels per model, one column per metric, a line per
    language x contrast. Group gaps are drawn with the interval of their own test (at 1 - ``alpha``) and
    the mark of the run's ``hypotheses``, filled and starred where significant; an untested row (untestable)
    hollow, without an interval; an end the permutations cannot bound runs to the panel's edge with an
    arrow. Mixed-model effects are effect sizes, points without an interval or a mark; "not converged"
    where a fit did not reach its optimum. ``tie_breaks`` (metric -> the finer score whose gap breaks its
    ties in the gap test) is said in the note under the figure for each such metric drawn."""
    terms = _forest_rows(effects, hypotheses)
    models = list(dict.fromkeys(terms["model"])) or [""]
    metrics = list(dict.fromkeys(terms["metric"])) or [""]
    kinds = sorted(set(terms["label"].str.split(": ").str[-1]))
    colour = {t: OKABE_ITO[i % len(OKABE_ITO)] for i, t in enumerate(kinds)}
    heights = [max(1, terms.loc[terms["model"] == m, "label"].nunique()) for m in models]
    ends = ["estimate", "ci_low", "ci_high"]
    finite = np.concatenate(
        [terms.loc[terms["with_interval"], ends].to_numpy(float).ravel(), terms.loc[terms["drawable"], "estimate"]]
    )
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
        span = np.concatenate(
            [sub.loc[sub["with_interval"], ends].to_numpy(float).ravel(), sub.loc[sub["drawable"], "estimate"]]
        )
        span = span[np.isfinite(span)]
        span = span if len(span) else (finite if len(finite) else np.array([-1.0, 1.0]))
        pad = 0.08 * max(float(np.ptp(np.append(span, 0.0))), 1e-9)
        limits = (min(span.min(), 0.0) - pad, max(span.max(), 0.0) + pad)
        for col, metric in enumerate(metrics):
            ax = axes[row, col]
            for _, r in sub[sub["metric"] == metric].iterrows():
                _forest_line(ax, r, y[r["label"]], colour[r["label"].split(": ")[-1]], limits)
            ax.axvline(0, color="grey", lw=1, ls="--")
            ax.set_xlim(limits)
            ax.set_ylim(-0.6, len(labels) - 0.4)
            ax.set_yticks(list(y.values()))
            ax.set_yticklabels(list(y.keys()) if col == 0 else [], fontsize=8)
            if row == 0:
                ax.set_title(metric, fontsize=10)
            if col == 0:
                ax.set_ylabel(model, fontsize=9)
    gaps = "gap" in effects.columns
    # the unit of the difference: a metric's per-annotation scale, or a CrowS-Pairs log-probability margin
    unit = "points of the metric's 0-1 scale" if gaps else "log-probability"
    # once for every column (one label per column ran into the next), above the note on the test; room
    # for both kept in inches, whatever the figure's height
    height = fig.get_figheight()
    fig.supxlabel(
        f"difference from the reference ({unit}; {level(1 - alpha)} interval); filled, *: significant after the "
        "run's adjustment; hollow without interval: untestable"
        if gaps
        else f"difference from the reference ({unit}): effect sizes of the mixed model, no test, no interval",
        fontsize=9,
        y=0.4 / height,
        va="bottom",
    )
    fig.suptitle(title, fontsize=11)
    # the test behind the marks, its family and correction, in the figure itself (it travels without its caption)
    fig.text(0.01, 0.05 / height, _forest_note(effects, tie_breaks), fontsize=7, ha="left", va="bottom", wrap=True)
    fig.tight_layout(rect=(0, 0.7 / height, 1, 0.98))
    save_figure(fig, png, pdf)


def _forest_line(ax: Axes, r: pd.Series, yi: float, c: str, limits: tuple[float, float]) -> None:
    """One row of a forest plot: its point, and its interval and mark where it was tested."""
    if not r["drawable"]:
        ax.annotate(
            "not converged", (0.02, yi), xycoords=("axes fraction", "data"), fontsize=7, color="grey", va="center"
        )
        return
    if not r["with_interval"]:
        ax.plot([r["estimate"]], [yi], marker="o", ms=5, ls="", color=c, markerfacecolor="white")
        return
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


def _forest_note(effects: pd.DataFrame, tie_breaks: Mapping[str, str] | None) -> str:
    """The note under a forest plot: the test behind its marks, and the rows it does not draw."""
    if "gap" not in effects.columns:
        return "Mixed model of the score margin: effect sizes; the data sets are tested in the win/loss table."
    method = (
        "Permutation test of the two groups compared (their labels permuted within batches); interval: the test "
        "of the gap alone inverted; marks: the run's hypotheses (Benjamini-Yekutieli over the whole report)."
    )
    drawn_metrics = set(effects.get("metric", ()))
    for metric, finer in (tie_breaks or {}).items():
        if metric in drawn_metrics:
            method += (
                f" {metric_name(metric)}: the test's ties broken by the gap in {metric_name(finer)}; a row that "
                "tie-break alone marks has an interval that holds 0 (its table says so)."
            )
    left_out = int((~effects["informative"].astype(bool)).sum())
    if left_out:
        method += (
            f" {left_out} uninformative row(s) not drawn (every assignment gives the same |gap|): listed in the table."
        )
    return method


# the widest a heatmap grows (inches) before its panels wrap onto another line
HEATMAP_WIDTH = 10.5
# the longest column name a heatmap slants (30 degrees); longer ones stand upright
SLANTED_LABEL_LENGTH = 12


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
    count: str = "n",
    count_label: str = "n",
    empty_label: str = "",
) -> None:
    """Heatmap of ``value`` (0-100) per attribute bucket (rows: attributes in the order the table lists
    them, its breakdowns job's registry order; buckets in their order) x ``columns`` (in
    ``column_order``, else as they come), one panel per ``panels``; every cell shows its value and the
    ``count`` column, the value's denominator (``count_label``: what it counts), a cell with items but no
    value ``empty_label``. The colour
    scale is sequential, or diverging around ``centre`` (the null value: a cell reads above or
    below it). Panels have their own rows, or with ``shared_rows`` every panel has every row
    (buckets common to all panels); a bucket no item falls in (n = 0 everywhere) is left out.

    Long because it is one figure's drawing (panels, colour scale, cell labels, counts, empty cells, legend) in
    matplotlib's order.
    """
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
    same_rows = all(rows == per_panel[0][2] for _, _, rows in per_panel)  # then only each line's first is labelled
    # panels wrap onto more lines rather than widen the figure past HEATMAP_WIDTH: shrunk to a report pane's or a
    # page's width, a wider one's cell numbers could not be read
    per_line = max(1, min(len(names), int((HEATMAP_WIDTH - 3.6) // (0.8 * len(cols) + (0 if same_rows else 2.4)))))
    lines = -(-len(names) // per_line)
    label_width = 2.4 if same_rows else 2.4 * per_line
    # constrained layout keeps the row labels of a panel clear of its neighbour and of the colour bar
    fig, grid = plt.subplots(
        lines,
        per_line,
        figsize=(0.8 * len(cols) * per_line + label_width + 1.2, (0.34 * n_rows + 1.3) * lines + 0.5),
        squeeze=False,
        layout="constrained",
    )
    axes = grid.reshape(1, -1)
    # a long column name (a model's) slanted would reach into the panel on its left: upright instead
    slanted = max(len(str(c)) for c in cols) <= SLANTED_LABEL_LENGTH
    column_labels = {"rotation": 30, "ha": "right"} if slanted else {"rotation": 90, "ha": "center"}
    for ax in axes[0, len(names) :]:
        ax.set_visible(False)
    first_of_line = {id(grid[line, 0]) for line in range(lines)}
    # perceptually uniform and colour-blind safe; diverging (purple-orange) around a null value
    cmap = plt.get_cmap("viridis" if centre is None else "PuOr_r")
    norm = Normalize(0, 100) if centre is None else TwoSlopeNorm(vcenter=centre, vmin=0, vmax=100)
    for ax, (name, sub, rows) in zip(axes[0, : len(names)], per_panel, strict=True):
        vals = np.full((len(rows), len(cols)), np.nan)
        ns = np.zeros((len(rows), len(cols)), dtype=int)
        for i, (a, b) in enumerate(rows):
            for j, c in enumerate(cols):
                if (a, b, c) in sub.index:
                    vals[i, j] = sub.loc[(a, b, c), value]
                    ns[i, j] = sub.loc[(a, b, c), count]
        im = ax.imshow(vals, aspect="auto", cmap=cmap, norm=norm)
        for i in range(len(rows)):
            for j in range(len(cols)):
                v = vals[i, j]
                counted = f"{count_label}={ns[i, j]}"
                text = f"{empty_label}\n{counted}" if np.isnan(v) else f"{number(v, 0, keep=(centre,))}\n{counted}"
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
        ax.set_xticklabels(cols, fontsize=8, **column_labels)
        ax.set_yticks(range(len(rows)))
        labelled = id(ax) in first_of_line or not same_rows
        ax.set_yticklabels([f"{a}: {b}" for a, b in rows] if labelled else [], fontsize=8)
        ax.set_title(str(name), fontsize=9)
    fig.suptitle(title, fontsize=10)
    fig.colorbar(im, ax=axes[0, : len(names)].tolist(), shrink=0.8, label=value_label)
    save_figure(fig, png, pdf)
