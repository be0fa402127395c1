"""CrowS-Pairs figures: the decisive-pair share per bias type and model."""

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

from plmfair.crows_pairs.schemas import AXES
from plmfair.rendering.marks import TESTED, decisions
from plmfair.rendering.plots import OKABE_ITO, breakdown_heatmap, save_figure

# a legend row holds this many entries, each wrapped to this many characters: the row fits the figure's 11 inches
LEGEND_COLUMNS = 4
LEGEND_LABEL_WIDTH = 40


def crows_pairs_figure(
    summary: pd.DataFrame, hypotheses: pd.DataFrame, png: str | os.PathLike, pdf: str | os.PathLike
) -> None:
    """Per data set, the decisive-pair share per bias type (and overall) per model with the
    interval that inverts its test (the summary's ``test``) and a star where the run's hypotheses
    finds it significant; a share its hypotheses cannot test (untestable) hollow and without interval; Nangia et
    al.'s score as a small grey mark, a line at 50%; below each panel the share of neutral pairs, with
    their count.

    Long because it is one figure's drawing, panel by panel (shares, intervals, marks, Nangia's score, the neutral
    bars, the legend), in matplotlib's order.
    """
    decided = decisions(summary, hypotheses)
    summary = summary.assign(
        testable=decided["family"].isin(TESTED).to_numpy(), significant=decided["significant"].to_numpy(dtype=bool)
    )
    datasets = list(dict.fromkeys(summary["dataset"]))
    models = list(dict.fromkeys(summary["model"]))
    explained = [
        "Nangia et al.'s score (their rule)",
        "differs from 50% (its test; * after the run's adjustment: overall Holm, subsets FDR)",
        "untestable: too few decisive pairs for its family's threshold (no interval)",
    ]
    # the legend's rows: the models, LEGEND_COLUMNS a row, then the marks' explanations, wrapped to a column's width
    columns = min(LEGEND_COLUMNS, len(models) + len(explained))
    legend_rows = -(-(len(models) + len(explained)) // columns) * 2
    fig, axes = plt.subplots(
        2 * len(datasets),
        1,
        figsize=(11, 4.6 * len(datasets) + 0.5 + 0.2 * legend_rows),
        squeeze=False,
        layout="constrained",
        gridspec_kw={"height_ratios": [3.4, 1.0] * len(datasets)},
    )
    for i, ds in enumerate(datasets):
        ax, below = axes[2 * i, 0], axes[2 * i + 1, 0]
        sub = summary[(summary["dataset"] == ds) & summary["subset_kind"].isin(["overall", "bias_type"])]
        cats = list(dict.fromkeys(sub["subset"]))
        width = 0.8 / max(1, len(models))
        x = np.arange(len(cats))
        for j, model in enumerate(models):
            m = sub[sub["model"] == model].set_index("subset").reindex(cats)
            colour = OKABE_ITO[j % len(OKABE_ITO)]
            at = x - 0.4 + width * (j + 0.5)
            testable = m["testable"].fillna(False).astype(bool).to_numpy()
            tested = m[testable]
            err = np.vstack([tested["decisive_score"] - tested["ci_low"], tested["ci_high"] - tested["decisive_score"]])
            ax.errorbar(
                at[testable],
                tested["decisive_score"],
                yerr=err,
                fmt="o",
                capsize=2,
                ms=4,
                label=model,
                color=colour,
            )
            # a share the test cannot judge (too few decisive pairs): hollow, with no interval
            ax.plot(
                at[~testable],
                m.loc[~testable, "decisive_score"],
                ls="",
                marker="o",
                ms=4,
                mfc="white",
                color=colour,
            )
            ax.plot(at, m["score"], ls="", marker="_", ms=9, mew=1.6, color="grey")
            for xi, hi, sig in zip(at, m["ci_high"], m["significant"].fillna(False).astype(bool), strict=True):
                if sig:
                    ax.annotate("*", (xi, hi), ha="center", va="bottom", fontsize=10)
            below.bar(at, m["neutral_share"], width=width * 0.9, color=colour)
            for xi, share, count in zip(at, m["neutral_share"], m["n_neutral"], strict=True):
                if count > 0:  # the count on its bar: a share of 4 pairs is not a share of 400
                    below.annotate(f"{int(count)}", (xi, share), ha="center", va="bottom", fontsize=6)
        ax.axhline(50, color="grey", lw=1, ls="--")
        ax.set_xticks(x)
        ax.set_xticklabels([])
        # room for markers at 0 and 100% and a star above an interval (nothing drawn unclipped: an empty line
        # that is would stretch the layout to the figure's corner and collapse it)
        ax.set_ylim(-4, 108)
        ax.set_yticks(range(0, 101, 25))
        ax.set_ylabel("% of decisive pairs\npreferring the more\nstereotyping sentence", fontsize=9)
        ax.set_title(f"CrowS-Pairs: {ds}")
        below.set_xticks(x)
        # the overall score is the metric score of Nangia et al. ("metric" in the summary)
        below.set_xticklabels(["overall" if c == "metric" else c for c in cats], rotation=30, ha="right")
        below.set_xlim(ax.get_xlim())
        below.set_ylim(0, 100)
        below.set_yticks([0, 50, 100])
        below.set_ylabel("% neutral\n(|margin| within\nits tolerance)", fontsize=9)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    handles += [
        Line2D([], [], ls="", marker="_", ms=9, mew=1.6, color="grey"),
        Line2D([], [], ls="", marker="$*$", color="black"),
        Line2D([], [], ls="", marker="o", ms=4, mfc="white", color="black"),
    ]
    labels = [textwrap.fill(label, LEGEND_LABEL_WIDTH) for label in labels + explained]
    fig.legend(handles, labels, loc="outside lower center", ncol=columns, fontsize=8)
    save_figure(fig, png, pdf)


def breakdown_figure(breakdowns: pd.DataFrame, png: str | os.PathLike, pdf: str | os.PathLike) -> None:
    """Heatmap of the decisive share per attribute bucket x model, one panel per data set."""
    breakdown_heatmap(
        table=breakdowns,
        png=png,
        pdf=pdf,
        value="score",
        columns="model",
        panels="dataset",
        title="CrowS-Pairs: % of decisive pairs preferring the more stereotyping sentence, by attribute bucket "
        "(descriptive, no test)",
        value_label="decisive share (%); 50: no preference",
        centre=50,
        count="n_decisive",
        count_label="decisive",
        empty_label="no decisive pair",
    )


def _choice_label(axis: str, value: str) -> str:
    """A choice as the dot matrix names it (the exclusion file's name is in the table and caption)."""
    return f"{axis}: {'exclusion file out' if value.startswith('without ') else value}"


def specification_curve(specifications: pd.DataFrame, png: str | os.PathLike, pdf: str | os.PathLike) -> None:
    """A specification curve (Simonsohn, Simmons & Nelson 2020) per data set and model: every specification's
    decisive share with its interval, sorted, the run's own specification ringed, and below it the choices
    each one makes (a dot per choice, the choices of that model only); a filled point shows the run's verdict
    at the level its primary question is held to, a hollow one falls short of it."""
    runs = list(specifications.groupby(["dataset", "model"], sort=False))
    ncols = min(2, max(1, specifications["dataset"].nunique()))  # two panels a line: readable in a report pane
    nrows = -(-len(runs) // ncols)
    most = max(sum(specs[axis].nunique() for axis in AXES) for _, specs in runs)
    height = (2.0 + 0.16 * most) * nrows + 1.2
    fig = plt.figure(figsize=(5.4 * ncols, height))
    # the two-line title and the legend keep their inches whatever the number of panels
    outer = fig.add_gridspec(nrows, ncols, hspace=0.35, wspace=0.75, top=1 - 0.85 / height, bottom=0.55 / height)
    colours = {"stereotypical": OKABE_ITO[5], "anti-stereotypical": OKABE_ITO[1], "no preference": "0.45"}
    for i, ((dataset, model), specs) in enumerate(runs):
        choices = [(axis, value) for axis in AXES for value in dict.fromkeys(specs[axis])]
        inner = outer[i // ncols, i % ncols].subgridspec(2, 1, height_ratios=[2.0, 0.16 * most], hspace=0.05)
        curve, below = fig.add_subplot(inner[0]), fig.add_subplot(inner[1])
        specs = specs.sort_values(["estimate", "specification"]).reset_index(drop=True)
        x = np.arange(len(specs))
        for verdict, colour in colours.items():
            part = specs[specs["verdict"] == verdict]
            if part.empty:
                continue
            curve.errorbar(
                part.index,
                part["estimate"],
                yerr=[part["estimate"] - part["ci_low"], part["ci_high"] - part["estimate"]],
                fmt="none",
                ecolor=colour,
                elinewidth=1,
            )
            held = part[part["holds"]]
            curve.scatter(held.index, held["estimate"], s=18, color=colour, zorder=3)
            short = part[~part["holds"]]
            curve.scatter(short.index, short["estimate"], s=18, facecolor="white", edgecolor=colour, zorder=3)
        own = specs[specs["default"]]
        curve.scatter(own.index, own["estimate"], s=90, facecolor="none", edgecolor="black", zorder=4)
        curve.axhline(50, color="0.3", linestyle="--", linewidth=0.8)
        curve.set_xlim(-0.6, len(specs) - 0.4)
        curve.set_xticks([])
        curve.set_ylabel("decisive share (%)", fontsize=7)
        shown = f"{int(specs['holds'].sum())} of {len(specs)} show its verdict"
        level = specs["level"].iloc[0]
        curve.set_title(
            f"{dataset}, {model}: {shown} at {level:.2g}" if level else f"{dataset}, {model}: untestable", fontsize=8
        )
        curve.tick_params(labelsize=7)
        for row, (axis, value) in enumerate(choices):
            used = x[(specs[axis] == value).to_numpy()]
            below.scatter(used, np.full(len(used), row), s=8, color="black")
        below.set_yticks(range(len(choices)), [_choice_label(axis, value) for axis, value in choices], fontsize=6)
        below.set_ylim(most - 0.5, -0.5)
        below.set_xlim(curve.get_xlim())
        below.set_xticks([])
        below.tick_params(length=0)
        for side in ("top", "right", "bottom"):
            below.spines[side].set_visible(False)
    handles = [Line2D([], [], marker="o", linestyle="", color=c, label=v) for v, c in colours.items()]
    handles += [
        Line2D([], [], marker="o", ls="", mfc="white", mec="0.3", label="short of it at that level"),
        Line2D([], [], marker="o", ls="", markersize=10, mfc="none", mec="black", label="the run's own specification"),
    ]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=7, frameon=False)
    fig.suptitle(
        "CrowS-Pairs: the decisive share under every scoring choice\n(intervals and colours at alpha, unadjusted; "
        "filled: shows the run's verdict at the level its claim is held to)",
        fontsize=9,
    )
    save_figure(fig, png, pdf)
