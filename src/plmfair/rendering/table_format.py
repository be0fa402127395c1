"""Tables for people: their rendering as CSV (full precision), Markdown, LaTeX and HTML
(:func:`render_table`), and the builders the studies share.

A builder (``"module:function"`` of a :class:`~plmfair.rendering.table_spec.TableSpec`; the studies'
own are in :mod:`plmfair.crows_pairs.tables` and :mod:`plmfair.cloze.tables`) takes the table's input
frames as keyword arguments named by their roles, and its options and settings, and returns the
table as a DataFrame. Shared here: win/loss (:func:`winloss_table`), mixed-model effects
(:func:`effects_table`), the models that ran (:func:`models_table`), long tables as they are
(:func:`long_table`). A table that marks tests takes the run's hypotheses as its ``hypotheses`` input
(:mod:`plmfair.rendering.marks`).

A builder keeps every number as a number (the CSV holds them at full precision, an interval as its
``low`` and ``high`` columns) and says with :func:`with_display` how they print: by the display rule
of :mod:`plmfair.rendering.numbers`, a mark only beside the interval and p-value of the test that sets it.
"""

from __future__ import annotations

import html as html_module
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# pandas renders Markdown through tabulate and LaTeX and HTML through jinja2 (Styler): imported here
# so that an environment without them fails at once, not after a table is built
import jinja2  # noqa: F401
import pandas as pd
import tabulate  # noqa: F401

from plmfair.io.atomic import write_text
from plmfair.registry import load_function
from plmfair.rendering import numbers
from plmfair.rendering.labels import contrast_label, metric_label
from plmfair.rendering.marks import add_decisions
from plmfair.rendering.table_spec import TABLE_FORMATS
from plmfair.scoring.coverage import distinct


@dataclass(frozen=True)
class Display:
    """How a table's numbers print, by :mod:`plmfair.rendering.numbers` (the table itself, as the CSV
    holds it, keeps every number at full precision):

    - ``nulls``: an estimate column and the null value of its test, which it keeps its side of;
    - ``intervals``: a printed interval column and its ``(low, high, null)`` columns and null (the
      two columns print as one, at the low column's place);
    - ``thresholds``: a column and the column of the threshold it is compared with (each printed
      on its side of the other);
    - ``marks``: a column and the boolean column whose true rows print ``*`` beside it (not printed);
    - p-value columns (``p``, ``p ...``, ``p_...``) keep their side of ``alpha``; ``level`` columns
      print exactly.

    ``alpha`` is the table's level (None: a table with no test, whose p-values print at their digits)."""

    alpha: float | None = None
    nulls: Mapping[str, float] = field(default_factory=dict)
    intervals: Mapping[str, tuple[str, str, float]] = field(default_factory=dict)
    thresholds: Mapping[str, str] = field(default_factory=dict)
    marks: Mapping[str, str] = field(default_factory=dict)


def shortened(joined: str, *, shown: int = 2, sep: str = " | ") -> str:
    """The first ``shown`` items of a ``sep``-joined list and how many more (a table cell; the file keeps them
    all): how a table names the specifications that flip a verdict."""
    items = [item for item in joined.split(sep) if item]
    more = len(items) - shown
    return sep.join(items[:shown]) + (f" (+{more} more)" if more > 0 else "")


def held_to(alpha: float, family_size: int) -> str:
    """The level a robust claim is held to, as the reader can check it: alpha over the confirmatory family's
    size (``0.05 / 12``), or why there is none."""
    if not family_size:
        return "untestable: no claim"
    return f"{alpha:g}" if int(family_size) == 1 else f"{alpha:g} / {int(family_size)}"


def verdict_cells(row: Mapping) -> dict:
    """How a robustness row prints (any study's, :mod:`plmfair.multiplicity`): K, the specifications computed,
    and what it counts; k, those showing the verdict at the level its primary question is held to; whether
    the verdict is robust (every specification shows it: a claim only a verdict that finds something can make)
    and the first specifications short of it."""
    if "p_all" not in row:  # a record of an earlier version: its robust was the unadjusted rule
        return {
            "K": int(row["specifications"]),
            "K counts": "",
            "k showing it": int(row["holding"]),
            "robust": f"{'robust' if row['robust'] else 'not robust'} (unadjusted: an earlier version's rule)",
            "short of it": shortened(row.get("flipped_by", "")),
        }
    claim = not pd.isna(row["p_all"])
    return {
        "K": int(row["specifications"]),
        "K counts": row["counted"],
        "k showing it": int(row["holding"]),
        "robust": ("robust" if row["robust"] else "not shown robust") if claim else "no claim to test",
        "short of it": shortened(row["short_of"]),
    }


def verdict_columns(robustness: pd.DataFrame) -> pd.DataFrame:
    """:func:`verdict_cells` of every row of a robustness table, as columns beside it (same index)."""
    return pd.DataFrame([verdict_cells(r) for r in robustness.to_dict(orient="records")], index=robustness.index)


def with_display(table: pd.DataFrame, **rules: Any) -> pd.DataFrame:
    """``table`` with its :class:`Display` rules (in ``attrs``, read by :func:`printed`)."""
    table.attrs["display"] = Display(**rules)
    return table


def with_layout(table: pd.DataFrame, layout: pd.DataFrame) -> pd.DataFrame:
    """``table`` (its numbers, one quantity per column: the CSV) with the ``layout`` people read it in (cells
    already printed, as a paper lays the table out: the Markdown, LaTeX and HTML), in ``attrs``."""
    table.attrs["layout"] = layout
    return table


def _is_p_column(name: object) -> bool:
    """A column of p-values (``p``, ``p_value``, ``p (Wald)``, ``p_adjusted``): printed by numbers.p_value."""
    return bool(re.match(r"^p(?:[_ ]|$)", str(name)))


def in_file(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` as its CSV holds it: every number itself, its floating-point noise taken off
    (:func:`plmfair.rendering.numbers.in_file`; p-value columns keep their tiny values)."""
    out = table.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]) or out[c].dtype == object:
            out[c] = [numbers.in_file(v, p_value=_is_p_column(c)) for v in out[c]]
    return out


def printed(df: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """Every cell as the tables print it (:mod:`plmfair.rendering.numbers` under the table's
    :class:`Display`): missing values as '', intervals as one column, marks beside their column; a table
    with a layout (:func:`with_layout`) prints as its layout."""
    if "layout" in df.attrs:
        return df.attrs["layout"].fillna("").astype(str).reset_index(drop=True)
    rules: Display = df.attrs.get("display", Display())
    lows = {low: (name, high, null) for name, (low, high, null) in rules.intervals.items()}
    hidden = {high for _, high, _ in lows.values()} | set(rules.marks.values())
    compared = {**rules.thresholds, **{t: c for c, t in rules.thresholds.items()}}
    columns: dict[str, list[str]] = {}
    rows = df.to_dict("records")
    for c in df.columns:
        if c in hidden:
            continue
        if c in lows:
            name, high, null = lows[c]
            columns[name] = [numbers.interval(r[c], r[high], digits, keep=(null,)) for r in rows]
            continue
        cells = []
        for r in rows:
            value = r[c]
            if _is_p_column(c) and isinstance(value, float):
                text = numbers.p_value(value, alpha=rules.alpha)
            elif str(c) == "level" and isinstance(value, float):
                text = numbers.level(value, alpha=rules.alpha)
            elif c in compared:
                text = numbers.compared(value, r[compared[c]], digits, keep=(rules.nulls.get(c),))[0]
            else:
                text = numbers.number(value, digits, keep=(rules.nulls.get(c),))
            cells.append(numbers.marked(text, r[rules.marks[c]]) if c in rules.marks else text)
        columns[str(c)] = cells
    return pd.DataFrame(columns, index=range(len(df)))


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
    cells = printed(df, digits).map(lambda v: v.replace("|", "\\|"))
    cells.columns = [c.replace("|", "\\|") for c in cells.columns]  # a header's pipe would end its cell
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
    cells = printed(df, digits)
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


def with_coverage_warnings(table: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """``table`` carrying the coverage warnings of the rows it is built from (``coverage_warning``,
    :mod:`plmfair.scoring.coverage`), which :func:`render_table` prints under its caption."""
    table.attrs["warnings"] = distinct(frame["coverage_warning"]) if "coverage_warning" in frame else []
    return table


def key_columns(frame: pd.DataFrame) -> list[str]:
    """The columns that name a row of a cloze table (model, language, metric) that ``frame`` has."""
    return [c for c in ("model", "lang", "metric") if c in frame.columns]


def winloss_table(
    winloss: pd.DataFrame,
    hypotheses: pd.DataFrame,
    *,
    a: str,
    b: str,
    n: str,
    p: str,
    p_one: str,
    ties: str = "ties",
    change: str = "",
    alpha: float,
) -> pd.DataFrame:
    """Win/loss comparisons for people: who is compared with whom on how many shared examples, the wins,
    losses and ``ties`` (equal on that example; for a binary outcome, ``concordant``: the same outcome in
    both), the ``change`` it measures with its interval (when the comparison has one), the test's p-values
    and the decision on the run's hypotheses (``*`` where significant, :mod:`plmfair.rendering.marks`)."""
    out = winloss[key_columns(winloss)].copy()
    out["comparison"] = winloss[a] + " vs " + winloss[b]
    out["n"] = winloss[n]
    out["wins"], out["losses"], out[ties] = winloss["wins_a"], winloss["wins_b"], winloss["ties"]
    rules: dict = {}
    untested = []
    if change:
        out["change"] = winloss[change]
        out["low"], out["high"] = winloss["ci_low"], winloss["ci_high"]
        rules = {"nulls": {"change": 0.0}, "intervals": {"interval (Tango)": ("low", "high", 0.0)}}
        untested = ["low", "high"]
    out["p"] = winloss[p]
    out["p (first wins more)"] = winloss[p_one]
    marks = add_decisions(out, winloss, hypotheses, untested=untested)
    return with_display(out.reset_index(drop=True), alpha=alpha, marks=marks, **rules)


def effects_table(effects: pd.DataFrame) -> pd.DataFrame:
    """Mixed-model fixed effects for people: each term's estimate and standard error as an effect size, with
    no test and no interval (their Wald test's level is not shown on these designs); fits that did not
    converge are marked rather than dropped."""
    out = effects[key_columns(effects)].copy()
    if "metric" in out.columns:
        out["metric"] = out["metric"].map(metric_label)
    out["term"] = [contrast_label(t, r) for t, r in zip(effects["term"], effects["reference"], strict=True)]
    out["estimate"] = effects["estimate"]
    out["standard error"] = effects["std_err"]
    out["n"] = effects["n_obs"]
    out["converged"] = ["yes" if c else "no" for c in effects["converged"]]
    return with_display(out.reset_index(drop=True), nulls={"estimate": 0.0})


def hypotheses_table(hypotheses: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """The run's hypotheses for people: each primary question (the confirmatory family) with its p, its
    Holm-adjusted p and mark, then the secondary tests in counts per result file (tested, significant,
    untestable, uninformative)."""
    primary = hypotheses[hypotheses["primary"].astype(bool)]
    rows = [
        {
            "part": "primary question",
            "question or result file": r["question"],
            "tests": 1,
            "significant": int(bool(r["significant"])),
            "untestable": int(r["family"] == "untestable"),
            "uninformative": int(r["family"] == "uninformative"),
            "p": r["p_value"],
            "p adjusted": r["p_adjusted"],
            "marked": bool(r["significant"]),
        }
        for _, r in primary.iterrows()
    ]
    secondary = hypotheses[~hypotheses["primary"].astype(bool)]
    for source, g in secondary.groupby("source", sort=False):
        rows.append(
            {
                "part": "secondary tests",
                "question or result file": source,
                "tests": len(g),
                "significant": int(g["significant"].sum()),
                "untestable": int((g["family"] == "untestable").sum()),
                "uninformative": int((g["family"] == "uninformative").sum()),
                "p": float("nan"),
                "p adjusted": float("nan"),
                "marked": False,
            }
        )
    return with_display(pd.DataFrame(rows), alpha=alpha, marks={"p adjusted": "marked"})


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


def _parameter_count(n: float | None) -> str:
    """110.1M, 1.2B as papers print sizes; an exact count below a million (the demo's tiny models)."""
    if n is None or pd.isna(n):
        return ""
    count = int(n)
    if count >= 1_000_000_000:
        return f"{count / 1e9:,.1f}B"
    return f"{count / 1e6:,.1f}M" if count >= 1_000_000 else f"{count:,}"


def models_table(models: pd.DataFrame) -> pd.DataFrame:
    """The models that ran, one row each: the numbers as they are (the CSV) and for people parameters in
    millions or billions, commits shortened."""
    numbers = models[list(MODEL_TABLE_COLUMNS)].rename(columns=MODEL_TABLE_COLUMNS).reset_index(drop=True)
    out = models[list(MODEL_TABLE_COLUMNS)].copy()
    out["model_parameters"] = [_parameter_count(n) for n in out["model_parameters"]]
    out["model_commit"] = [str(c)[:12] if pd.notna(c) and c else "" for c in out["model_commit"]]
    out["model_languages"] = [v or "all" for v in out["model_languages"].fillna("")]
    out["model_uncased"] = out["model_uncased"].map({True: "yes", False: "no"})
    return with_layout(numbers, out.rename(columns=MODEL_TABLE_COLUMNS).reset_index(drop=True))


def long_table(table: pd.DataFrame) -> pd.DataFrame:
    """A long Parquet table as it is (data summary, McNemar comparisons)."""
    return table


def table_texts(
    frames: Mapping[str, pd.DataFrame],
    *,
    builder: str,
    options: Mapping,
    caption: str,
    digits: int,
    label: str,
    title: str = "",
    synthetic: bool = False,
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Build one of the studies' tables (:func:`plmfair.plan.targets.all_tables`; ``builder``, its
    ``"module:function"``, given the input ``frames`` by role and the ``options``) and its four texts by suffix: CSV
    (full precision, its floating-point noise taken off),
    Markdown and LaTeX (``digits`` decimals) and the report's page of it (:func:`table_page`, headed by its
    ``title``; a ``synthetic`` run's says so). What :func:`render_table` writes and ``plmfair verify`` checks a
    published table against."""
    table = load_function(builder)(**frames, **options)
    warnings = table.attrs.get("warnings")
    if warnings:  # a model that cannot read its input (plmfair.scoring.coverage): said under every copy of the table
        caption += " WARNING: " + "; ".join(warnings) + "."
    # the same printed cells as the Markdown and LaTeX (counts as integers, blanks for missing values); every cell
    # and header escaped, and the caption (Styler escapes neither the caption nor, by default, cells): a model
    # folder, a data set or an alias from the config is text on the page, never markup; the table's id from its
    # label, not Styler's random one: the same table is the same file
    body = (
        printed(table, digits)
        .style.set_uuid(re.sub(r"\W", "_", label))
        .format(escape="html")
        .format_index(escape="html", axis=1)
        .hide(axis="index")
        .set_caption(html_module.escape(caption))
        .set_table_attributes('class="table table-sm"')
        .to_html()
    )
    return table, {
        "csv": in_file(table).to_csv(index=False),
        "md": f"{caption}\n\n" + to_markdown(table, digits=digits),
        "tex": to_latex(table, digits=digits, caption=caption, label=label),
        "html": table_page(body, title=title or label, synthetic=synthetic),
    }


def render_table(
    frames: Mapping[str, pd.DataFrame],
    *,
    csv: str | os.PathLike,
    md: str | os.PathLike,
    tex: str | os.PathLike,
    html: str | os.PathLike,
    **rendering: Any,
) -> pd.DataFrame:
    """Build one table and write its texts (:func:`table_texts`, which takes the ``rendering``) to its four
    files."""
    table, texts = table_texts(frames, **rendering)
    for suffix, path in zip(TABLE_FORMATS, (csv, md, tex, html), strict=True):
        write_text(texts[suffix], path)
    return table


# the pages a run writes for people (each table's, run.html): one look, each page adding its own rules
PAGE_STYLE = """
body { font-family: system-ui, sans-serif; color: #1f2937; }
.synthetic { border: 2px solid #b45309; background: #fffbeb; padding: 0.4rem 0.8rem; font-weight: 600; }
.scroll { overflow: auto; max-width: 100%; }
table { border-collapse: collapse; }
th, td { padding: 0.25rem 0.6rem; border-bottom: 1px solid #e5e7eb; }
th { background: #f3f4f6; position: sticky; top: 0; text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
"""
# what every page of a synthetic run's report (the demo) says
SYNTHETIC = (
    "Synthetic data, tiny models: this run is the demo. Its data were written for plmfair's tests and its models "
    "are tiny random-weight ones the workflow builds; its numbers show how the tool works and say nothing about "
    "any real model or group of people."
)


def html_page(body: str, *, title: str, synthetic: bool = False, style: str = "") -> str:
    """A whole HTML page (charset, title, :data:`PAGE_STYLE` and the page's own ``style``): ``title`` as its
    heading, for a ``synthetic`` run the warning that its data are synthetic and its models tiny, then ``body``."""
    escaped = html_module.escape(title)
    warning = f'<p class="synthetic">{html_module.escape(SYNTHETIC)}</p>\n' if synthetic else ""
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escaped}</title>\n'
        f"<style>{PAGE_STYLE}{style}</style>\n</head>\n<body>\n<h1>{escaped}</h1>\n{warning}{body}\n</body>\n</html>\n"
    )


# a table's page in the report (an iframe the width of the pane): the table scrolls inside its box, its header
# stays in view, the caption reads above it
TABLE_STYLE = """
body { margin: 1rem; }
h1 { font-size: 1.2rem; margin: 0 0 0.5rem; }
.scroll { max-height: calc(100vh - 4rem); border: 1px solid #e5e7eb; }
table { font-size: 0.82rem; }
caption { caption-side: top; text-align: left; font-size: 0.8rem; color: #4b5563; padding: 0.5rem; max-width: 70rem; }
th, td { text-align: right; white-space: nowrap; }
td:first-child, th:first-child { text-align: left; }
"""


def table_page(body: str, *, title: str, synthetic: bool = False) -> str:
    """A whole HTML page holding one rendered table (``body``) under its ``title`` (:func:`html_page`)."""
    return html_page(f'<div class="scroll">\n{body}</div>', title=title, synthetic=synthetic, style=TABLE_STYLE)
