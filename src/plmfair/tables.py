"""Tables for people: wide tables in the papers' layouts, rendered as CSV, Markdown and LaTeX."""

from __future__ import annotations

import math
import os

import pandas as pd

from plmfair.io import write_csv, write_text


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
