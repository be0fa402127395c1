"""Tables for people: the builders of :data:`plmfair.rendering.table_spec.TABLES` and their rendering
as CSV (full precision), Markdown, LaTeX and HTML (:func:`render_table`).

A builder takes the table's input frames as keyword arguments named by their roles in the
registry, and its options and settings, and returns the table as a DataFrame:

- CrowS-Pairs: Table 4 (:func:`table4`) and Table 5 (:func:`table5`) of Névéol et al. (2022);
- CrowS-Pairs tests: the decisive-pair share with its interval and exact test (:func:`crows_pairs_tests_table`);
- MozArt (and every cloze set with answers): Tables 1-5 (:func:`table1`, :func:`paper_table`)
  of Cabello Piqueras & Søgaard (2022), and sigma_gd with its tests (:func:`disparity_table`);
- the tests: win/loss (:func:`winloss_table`), group gaps (:func:`gaps_table`), mixed-model
  effects (:func:`effects_table`), group tests (:func:`group_tests_table`);

Every p-value prints with three decimals, ``<0.001`` below (:func:`plmfair.rendering.labels.format_p`), and a
mark is printed only beside the interval and p-value of the test that sets it.
- cloze construction (:func:`construction_table`) and alignment quality
  (:func:`alignment_quality_table`); the models that ran (:func:`models_table`); long tables as
  they are (:func:`long_table`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping

# pandas renders Markdown through tabulate and LaTeX and HTML through jinja2 (Styler): imported here
# so that an environment without them fails at once, not after a table is built
import jinja2  # noqa: F401
import pandas as pd
import tabulate  # noqa: F401

from plmfair.io.atomic import write_text
from plmfair.io.parquet import write_csv
from plmfair.registry import load_function
from plmfair.rendering.labels import contrast_label, format_p, metric_label
from plmfair.scoring.coverage import distinct


def _fmt(value, digits: int, *, p_value: bool = False) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return format_p(value) if p_value else f"{value:.{digits}f}"
    return str(value)


def _is_p_column(name) -> bool:
    """A column of p-values (``p``, ``p_value``, ``p (Wald)``, ``p_adjusted``): printed by format_p."""
    return bool(re.match(r"^p(?:[_ ]|$)", str(name)))


def _formatted(df: pd.DataFrame, digits: int) -> pd.DataFrame:
    """Every cell as the text the tables print (floats with ``digits`` decimals, p-values by
    :func:`plmfair.rendering.labels.format_p`, missing as '')."""
    return pd.DataFrame(
        {str(c): [_fmt(v, digits, p_value=_is_p_column(c)) for v in df[c]] for c in df.columns}, index=range(len(df))
    )


def _is_number(text: str) -> bool:
    """A printed cell that is a number, with the tables' marks (``33.3†``, ``0.01*``, ``[0.1, 0.2]``,
    ``<0.001``, ``[-inf, 0.2]``)."""
    return bool(re.match(r"^[\[(]?(?:[-−+<]?\.?\d|-?inf\b)", text))


def _alignments(cells: pd.DataFrame) -> list[str]:
    """Numbers right-aligned, text left-aligned: a column is numeric when every non-empty cell is."""
    return [
        "right" if (filled := [v for v in cells[c] if v]) and all(map(_is_number, filled)) else "left"
        for c in cells.columns
    ]


def to_markdown(df: pd.DataFrame, *, digits: int = 2) -> str:
    """A GitHub-flavoured Markdown table (text left-aligned, numbers right-aligned), rendered by
    pandas (``DataFrame.to_markdown``, i.e. tabulate's pipe format)."""
    cells = _formatted(df, digits).map(lambda v: v.replace("|", "\\|"))
    align = _alignments(cells) if len(cells.columns) else ()
    return cells.to_markdown(index=False, tablefmt="pipe", colalign=align, disable_numparse=True) + "\n"


# Characters the tables use that pdfLaTeX does not know as text, after Styler's own escaping
# of the special characters (& % $ # _ { } ~ ^ \).
_LATEX_SYMBOLS = {
    "σ": r"$\sigma$",
    "†": r"\dag{}",
    "‡": r"\ddag{}",
    "▲": r"$\blacktriangle$",
    "▼": r"$\blacktriangledown$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "–": "--",
    "∩": r"$\cap$",
    "§": r"\S{}",
    "°": r"$^{\circ}$",
    "−": "--",
}


def _escape_caption(text: str) -> str:
    """LaTeX-escape a caption (Styler escapes cells and headers, not the caption it is given)."""
    specials = {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
    }
    return "".join(specials.get(ch, ch) for ch in text)


def to_latex(df: pd.DataFrame, *, digits: int = 2, caption: str = "", label: str = "") -> str:
    """A booktabs LaTeX table rendered by pandas (``Styler.to_latex``), cells and headers escaped."""
    cells = _formatted(df, digits)
    styler = cells.style.hide(axis="index").format(escape="latex").format_index(escape="latex", axis=1)
    tex = styler.to_latex(
        column_format="".join(a[0] for a in _alignments(cells)),
        hrules=True,
        position="t",
        position_float="centering",
        environment="table",
        caption=_escape_caption(caption) if caption else None,
        label=label or None,
    )
    for symbol, command in _LATEX_SYMBOLS.items():
        tex = tex.replace(symbol, command)
    return tex


def write_table(
    df: pd.DataFrame,
    *,
    csv: str | os.PathLike,
    md: str | os.PathLike,
    tex: str | os.PathLike,
    caption: str,
    label: str,
    digits: int = 2,
) -> None:
    """Write one table as CSV (full precision), Markdown and LaTeX (``digits`` decimals)."""
    write_csv(df, csv)
    write_text(f"{caption}\n\n" + to_markdown(df, digits=digits), md)
    write_text(to_latex(df, digits=digits, caption=caption, label=label), tex)


def with_coverage_warnings(table: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """``table`` carrying the coverage warnings of the rows it is built from (``coverage_warning``,
    :mod:`plmfair.scoring.coverage`), which :func:`render_table` prints under its caption."""
    table.attrs["warnings"] = distinct(frame["coverage_warning"]) if "coverage_warning" in frame else []
    return table


def marked_p(p_values, significant) -> list[str]:
    """p-values as text with ``*`` where the row is significant."""
    return [format_p(p) + ("*" if sig else "") for p, sig in zip(p_values, significant, strict=True)]


def interval_text(low, high, digits: int = 3) -> list[str]:
    """Intervals as text, ``[-0.120, 0.045]``; an end the permutations cannot bound is -inf or inf."""

    def end(v):
        return "inf" if v == math.inf else "-inf" if v == -math.inf else f"{v:.{digits}f}"

    return ["" if pd.isna(lo) else f"[{end(lo)}, {end(hi)}]" for lo, hi in zip(low, high, strict=True)]


def key_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in ("model", "lang", "metric") if c in frame.columns]


def winloss_table(
    winloss: pd.DataFrame, *, a: str, b: str, n: str, p: str, p_one: str, p_adjusted: str, adjusted: str
) -> pd.DataFrame:
    """Win/loss comparisons for people: who is compared with whom on how many shared examples,
    wins-losses-ties, the test's p-values and ``*`` where the adjusted p < alpha."""
    out = winloss[key_columns(winloss)].copy()
    out["comparison"] = winloss[a] + " vs " + winloss[b]
    out["n"] = winloss[n]
    out["wins-losses-ties"] = [
        f"{w}-{lo}-{t}" for w, lo, t in zip(winloss["wins_a"], winloss["wins_b"], winloss["ties"], strict=True)
    ]
    out["p"] = winloss[p]
    out["p (first wins more)"] = winloss[p_one]
    out[f"p {adjusted}"] = marked_p(winloss[p_adjusted], winloss["significant"])
    return out.reset_index(drop=True)


def level_text(levels) -> list[str]:
    return [f"{100 * level:.1f}%" for level in levels]


def add_estimate_with_test(out: pd.DataFrame, frame: pd.DataFrame, *, estimate: str, p: str, test: str) -> None:
    """Add to ``out`` an estimate with the interval of its own test and that interval's level, the test's
    p and the Bonferroni-adjusted p, ``*`` where significant (exactly when the interval excludes 0)."""
    out[estimate] = frame[estimate]
    out["interval"] = interval_text(frame["ci_low"], frame["ci_high"])
    out["level"] = level_text(frame["ci_level"])
    out[f"p ({test})"] = frame[p]
    out["p Bonferroni"] = marked_p(frame["p_bonferroni"], frame["significant"])


def effects_table(effects: pd.DataFrame) -> pd.DataFrame:
    """Mixed-model fixed effects for people: estimate with its Wald interval (at the Bonferroni level
    of the compared terms), Wald p and ``*`` on the Bonferroni-adjusted p exactly when the interval
    excludes 0; fits that did not converge are marked rather than dropped."""
    out = effects[key_columns(effects)].copy()
    if "metric" in out.columns:
        out["metric"] = out["metric"].map(metric_label)
    out["term"] = [contrast_label(t, r) for t, r in zip(effects["term"], effects["reference"], strict=True)]
    add_estimate_with_test(out, effects, estimate="estimate", p="p_value", test="Wald")
    out["n"] = effects["n_obs"]
    out["converged"] = ["yes" if c else "no" for c in effects["converged"]]
    return out.reset_index(drop=True)


MODEL_TABLE_COLUMNS = {
    "model": "Model",
    "model_family": "Family",
    "model_parameters": "Parameters",
    "model_layers": "Layers",
    "model_hidden_size": "Hidden",
    "model_vocab_size": "Vocabulary",
    "model_tokenizer": "Tokenizer",
    "model_max_length": "Max. length",
    "model_uncased": "Uncased",
    "model_languages": "Languages",
    "model_source": "Source",
    "model_revision": "Revision",
    "model_commit": "Commit",
}


def _parameter_count(n) -> str:
    """110.1M, 1.2B as papers print sizes; an exact count below a million (the demo's tiny models)."""
    if pd.isna(n):
        return ""
    n = int(n)
    if n >= 1_000_000_000:
        return f"{n / 1e9:,.1f}B"
    return f"{n / 1e6:,.1f}M" if n >= 1_000_000 else f"{n:,}"


def models_table(models: pd.DataFrame) -> pd.DataFrame:
    """The models that ran, one row each, for people: parameters in millions or billions, commits shortened."""
    out = models[list(MODEL_TABLE_COLUMNS)].copy()
    out["model_parameters"] = [_parameter_count(n) for n in out["model_parameters"]]
    out["model_commit"] = [str(c)[:12] if pd.notna(c) and c else "" for c in out["model_commit"]]
    out["model_languages"] = [v or "all" for v in out["model_languages"].fillna("")]
    out["model_uncased"] = out["model_uncased"].map({True: "yes", False: "no"})
    return out.rename(columns=MODEL_TABLE_COLUMNS)


def long_table(table: pd.DataFrame) -> pd.DataFrame:
    """A long Parquet table as it is (data summary, McNemar comparisons)."""
    return table


def render_table(
    frames: Mapping[str, pd.DataFrame],
    *,
    builder: str,
    options: Mapping,
    caption: str,
    digits: int,
    label: str,
    csv: str | os.PathLike,
    md: str | os.PathLike,
    tex: str | os.PathLike,
    html: str | os.PathLike,
) -> pd.DataFrame:
    """Build one table of :data:`plmfair.rendering.table_spec.TABLES` (``builder``, its ``"module:function"``,
    given the input ``frames`` by role and the ``options``) and write it as CSV, Markdown and LaTeX
    (:func:`write_table`) and as the HTML of the report."""
    table = load_function(builder)(**frames, **options)
    warnings = table.attrs.get("warnings")
    if warnings:  # a model that cannot read its input (plmfair.scoring.coverage): said under every copy of the table
        caption += " WARNING: " + "; ".join(warnings) + "."
    write_table(table, csv=csv, md=md, tex=tex, caption=caption, label=label, digits=digits)
    # the same printed cells as the Markdown and LaTeX (counts as integers, blanks for missing values)
    # the table's id from its label, not Styler's random one: the same table is the same file
    write_text(
        _formatted(table, digits)
        .style.set_uuid(re.sub(r"\W", "_", label))
        .hide(axis="index")
        .set_caption(caption)
        .set_table_attributes('class="table table-sm"')
        .to_html(),
        html,
    )
    return table
