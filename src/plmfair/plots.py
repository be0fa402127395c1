"""Figures (PNG and PDF) for the Snakemake report."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from plmfair.io import atomic_path  # noqa: E402


def save_figure(fig, png: str | os.PathLike, pdf: str | os.PathLike) -> None:
    """Save ``fig`` atomically as PNG (150 dpi) and PDF, then close it."""
    with atomic_path(png) as tmp:
        fig.savefig(tmp, format="png", dpi=150, bbox_inches="tight")
    with atomic_path(pdf) as tmp:
        fig.savefig(tmp, format="pdf", bbox_inches="tight")
    plt.close(fig)


def crows_pairs_figure(summary: pd.DataFrame, png: str | os.PathLike, pdf: str | os.PathLike) -> None:
    """Score per bias type (and overall) per model with Wilson 95% intervals and a line at 50%."""
    datasets = list(dict.fromkeys(summary["dataset"]))
    fig, axes = plt.subplots(len(datasets), 1, figsize=(11, 3.6 * len(datasets)), squeeze=False)
    for ax, ds in zip(axes[:, 0], datasets, strict=True):
        sub = summary[(summary["dataset"] == ds) & summary["subset_kind"].isin(["overall", "bias_type"])]
        cats = list(dict.fromkeys(sub["subset"]))
        models = list(dict.fromkeys(sub["model"]))
        width = 0.8 / max(1, len(models))
        x = np.arange(len(cats))
        for j, model in enumerate(models):
            m = sub[sub["model"] == model].set_index("subset").reindex(cats)
            err = np.vstack([m["score"] - m["ci_low"], m["ci_high"] - m["score"]])
            ax.errorbar(x - 0.4 + width * (j + 0.5), m["score"], yerr=err, fmt="o", capsize=2, ms=4, label=model)
        ax.axhline(50, color="grey", lw=1, ls="--")
        ax.set_xticks(x)
        ax.set_xticklabels(cats, rotation=30, ha="right")
        ax.set_ylabel("% pairs preferring the more stereotyping sentence")
        ax.set_ylim(0, 100)
        ax.set_title(f"CrowS-Pairs: {ds}")
        ax.legend(fontsize=8, ncol=min(4, len(models)))
    fig.tight_layout()
    save_figure(fig, png, pdf)
