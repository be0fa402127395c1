"""Cloze figures: MozArt's Figure 1 (MRR per group and language) and the t-SNE maps of predictions."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import os
import textwrap

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from plmfair.cloze.annotations import GROUPS
from plmfair.rendering.labels import GROUP_NAMES
from plmfair.rendering.plots import LANGUAGE_MARKERS, OKABE_ITO, breakdown_heatmap, save_figure

# the annotator groups: natives in dark blue / vermillion, non-natives in the light tones of the same hues
GROUP_COLOURS = {"MN": "#0072B2", "FN": "#D55E00", "MNN": "#56B4E9", "FNN": "#E69F00"}
MRR_PANELS_A_LINE = 4


def _extremes(values: pd.Series) -> tuple[set, set]:
    """The groups with the highest and the lowest value, ties all kept; none when every value is the same."""
    values = values.dropna()
    if values.nunique() < 2:
        return set(), set()
    return set(values.index[values == values.max()]), set(values.index[values == values.min()])


def mozart_mrr_figure(metrics: pd.DataFrame, png: str | os.PathLike, pdf: str | os.PathLike) -> None:
    """Figure 1 of the MozArt paper: MRR per group per language, each language's mean as a
    horizontal line, the best-off (▲) and worst-off (▼) groups of each language marked (every tied
    group; descriptive marks, not tests); a panel where no answer is in any top 5 says so."""
    models = list(dict.fromkeys(metrics["model"]))
    # panels wrap onto more lines past MRR_PANELS_A_LINE: a dozen models side by side would be 50 inches wide
    per_line = min(len(models), MRR_PANELS_A_LINE)
    lines = -(-len(models) // per_line)
    fig, grid = plt.subplots(
        lines, per_line, figsize=(4.2 * per_line, 3.8 * lines + 0.8), squeeze=False, sharey=True, layout="constrained"
    )
    axes = grid.reshape(1, -1)
    for ax in axes[0, len(models) :]:
        ax.set_visible(False)
    groups = list(GROUP_COLOURS)
    top = max(float(np.nanmax(metrics["mrr"].to_numpy(dtype=float), initial=0.0)), 1.0)
    for ax, model in zip(axes[0, : len(models)], models, strict=True):
        m = metrics[(metrics["model"] == model) & metrics["group"].isin(groups)]
        langs = list(dict.fromkeys(m["lang"]))  # the data's languages, in the data's order
        offsets = np.linspace(-0.3, 0.3, len(groups))
        for x, lang in enumerate(langs):
            g = m[m["lang"] == lang].set_index("group").reindex(groups)
            for off, grp in zip(offsets, groups, strict=True):
                ax.bar(
                    x + off,
                    g.loc[grp, "mrr"],
                    width=0.6 / len(groups),
                    color=GROUP_COLOURS[grp],
                    label=f"{grp} ({GROUP_NAMES[grp]})" if x == 0 else None,
                )
            ax.hlines(g["mrr"].mean(), x - 0.4, x + 0.4, colors="black", lw=1.2)
            best, worst = _extremes(g["mrr"])
            for grp in groups:
                for marked, sym in ((best, "▲"), (worst, "▼")):
                    if grp in marked:
                        ax.annotate(
                            sym,
                            (x + offsets[groups.index(grp)], g.loc[grp, "mrr"]),
                            ha="center",
                            va="bottom",
                            fontsize=8,
                        )
        if not (m["mrr"].fillna(0) > 0).any():
            ax.text(
                0.5,
                0.5,
                "no hit in the top 5",
                transform=ax.transAxes,
                ha="center",
                va="center",
                fontsize=10,
                color="grey",
            )
        ax.set_xticks(range(len(langs)))
        ax.set_xticklabels([lang.upper() for lang in langs])
        ax.set_title(model)
    axes[0, 0].set_ylim(0, top * 1.12)  # shared: an all-zero panel keeps the others' scale, not -0.04..0.04
    for line in range(lines):
        grid[line, 0].set_ylabel("MRR over the top 5 (%)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    handles += [
        Line2D([], [], color="black", lw=1.2),
        Line2D([], [], color="black", marker="^", ls=""),
        Line2D([], [], color="black", marker="v", ls=""),
    ]
    labels += [
        "mean of the groups",
        "best-off group(s), descriptive: no test",
        "worst-off group(s), descriptive: no test (the group tests are in the tables)",
    ]
    # under one panel, two columns of wrapped labels: a row of four would be wider than the panel
    labels = labels if per_line > 1 else [textwrap.fill(label, 36) for label in labels]
    fig.legend(handles, labels, loc="outside lower center", ncol=4 if per_line > 1 else 2, fontsize=8)
    save_figure(fig, png, pdf)


def breakdown_figure(breakdowns: pd.DataFrame, png: str | os.PathLike, pdf: str | os.PathLike, *, title: str) -> None:
    """Heatmap of a cloze set's MRR per attribute bucket x annotator group, the languages pooled, one panel per
    model."""
    breakdown_heatmap(
        table=breakdowns[breakdowns["lang"] == "all"],
        png=png,
        pdf=pdf,
        value="mrr",
        columns="group",
        panels="model",
        title=title,
        column_order=(*GROUPS, "all"),
        shared_rows=True,
        value_label="MRR over the top 5 (%)",
        count_label="annotations",
    )


def tsne_figure(coordinates: pd.DataFrame, png: str | os.PathLike, pdf: str | os.PathLike) -> None:
    """MozArt's appendix B: one panel per (model, quadruple), points coloured by language, each
    language's highest-scored prediction starred, annotators' answers with a black edge and the
    answers given by two or more annotators labelled."""
    models = list(dict.fromkeys(coordinates["model"]))
    quads = list(dict.fromkeys(coordinates["s_id"]))
    langs = list(dict.fromkeys(coordinates["lang"]))
    colour = {lang: OKABE_ITO[i % len(OKABE_ITO)] for i, lang in enumerate(langs)}
    # a shape per language too: overlapping points stay apart (transparent, they do not blend into
    # a colour of the legend)
    shape = {lang: LANGUAGE_MARKERS[i % len(LANGUAGE_MARKERS)] for i, lang in enumerate(langs)}
    fig, axes = plt.subplots(
        len(models), len(quads), figsize=(5.2 * len(quads), 4.6 * len(models)), squeeze=False, layout="constrained"
    )
    for r, model in enumerate(models):
        for c, s_id in enumerate(quads):
            ax = axes[r, c]
            g = coordinates[(coordinates["model"] == model) & (coordinates["s_id"] == s_id)]
            for lang in langs:
                p = g[g["lang"] == lang]
                answered = p["n_answers"] > 0
                ax.scatter(
                    p.loc[~answered, "x"],
                    p.loc[~answered, "y"],
                    s=10,
                    color=colour[lang],
                    alpha=0.4,
                    marker=shape[lang],
                    linewidths=0,
                )
                ax.scatter(
                    p.loc[answered, "x"],
                    p.loc[answered, "y"],
                    s=26,
                    color=colour[lang],
                    edgecolors="black",
                    marker=shape[lang],
                    alpha=0.8,
                    linewidths=0.8,
                )
                top = p[p["rank"] == 1]
                ax.scatter(
                    top["x"], top["y"], s=170, marker="*", color=colour[lang], edgecolors="black", linewidths=0.6
                )
                for _, row in p[p["n_answers"] >= 2].iterrows():
                    ax.annotate(
                        str(row["candidate"]),
                        (row["x"], row["y"]),
                        fontsize=6,
                        xytext=(3, 2),
                        textcoords="offset points",
                    )
            english = g.loc[g["lang"] == "en", "text"]
            sentence = english.iloc[0] if len(english) else (g["text"].iloc[0] if len(g) else s_id)
            ax.set_title(f"{model}: {sentence}", fontsize=8)
            ax.set_xticks([])
            ax.set_yticks([])
    handles = [Line2D([], [], ls="", marker=shape[lang], color=colour[lang], label=lang.upper()) for lang in langs]
    handles += [
        Line2D([], [], ls="", marker="*", ms=11, color="grey", markeredgecolor="black", label="top prediction"),
        Line2D([], [], ls="", marker="o", color="grey", markeredgecolor="black", label="annotators' answer"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=8)
    save_figure(fig, png, pdf)
