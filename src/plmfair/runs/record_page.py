"""``results/run.html``: the run record as a page a person reads (the report's "Run record" entry), beside
``results/run.json``, which is what a program reads.

A whole HTML document (title, charset, styles): whether the run is synthetic, what its job vouches for, the
answers to the primary questions and every study's headline table as HTML tables (the numbers as the tables
print them), then the record itself as a tree of collapsible sections (a list of flat rows as a table)."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import TypeGuard

import pandas as pd

from plmfair.rendering.table_format import html_page, printed
from plmfair.runs.record import headline_tables, primary_lines

# run.html's own rules, over the pages' common look (plmfair.rendering.table_format.PAGE_STYLE)
STYLE = """
body { margin: 1.5rem; line-height: 1.4; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; } h3 { font-size: 1rem; }
.scroll { overflow-y: visible; }
table { font-size: 0.85rem; margin: 0.5rem 0 1rem; }
td { text-align: left; vertical-align: top; }
details { margin-left: 1rem; } summary { cursor: pointer; } summary .count { color: #6b7280; }
code { font-size: 0.85rem; }
"""


def _table(frame: pd.DataFrame) -> str:
    """A frame as a scrollable HTML table (escaped)."""
    return f'<div class="scroll">{frame.to_html(index=False, escape=True, border=0, na_rep="")}</div>'


def _leaf(value: object) -> str:
    return f"<code>{html.escape(json.dumps(value, ensure_ascii=False))}</code>"


def _flat_rows(value: object) -> TypeGuard[list[dict]]:
    """A list of objects whose values are all scalars: shown as a table."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, dict) and all(not isinstance(x, dict | list) for x in v.values()) for v in value)
    )


def tree(value: object, *, name: str = "", open_: bool = False) -> str:
    """``value`` (a JSON value) as nested collapsible sections; a list of flat rows as one table."""
    if isinstance(value, dict) or isinstance(value, list) and not _flat_rows(value) and value:
        items = value.items() if isinstance(value, dict) else enumerate(value)
        inner = "".join(
            tree(v, name=str(k))
            if isinstance(v, dict | list) and v
            else f"<div>{html.escape(str(k))}: {_leaf(v)}</div>"
            for k, v in items
        )
        if not name:
            return inner
        count = f'<span class="count"> ({len(value)})</span>'
        return f"<details{' open' if open_ else ''}><summary>{html.escape(name)}{count}</summary>{inner}</details>"
    if _flat_rows(value):
        body = _table(pd.DataFrame(value).map(lambda v: "" if v is None else v))
        count = f'<span class="count"> ({len(value)} rows)</span>'
        return f"<details><summary>{html.escape(name)}{count}</summary>{body}</details>"
    return f"<div>{html.escape(name)}: {_leaf(value)}</div>"


def record_page(record: Mapping, *, title: str = "Run record") -> str:
    """The record as a whole HTML page (see the module's docstring)."""
    files = record.get("files", [])
    parts = [
        f"<p>Written at the end of the run ({html.escape(record['written'])}): the run was complete then, every "
        f"one of the {len(files)} files its configuration asks for written, each listed below with its SHA-256. "
        "Whether they are still what was written: <code>plmfair verify</code> and the report's first page, made "
        "after the run.</p>",
        "<h2>Answers to the primary questions</h2>",
    ]
    primary = primary_lines(record)
    parts.append(_table(printed(primary)) if len(primary) else "<p>None: the run scored no model.</p>")
    for table, lines in headline_tables(record):
        if len(lines):
            parts += [f"<h2>{html.escape(table.title)}</h2>", f"<p>{html.escape(table.caption)}</p>"]
            parts.append(_table(printed(lines)))
    parts += ["<h2>The record (results/run.json)</h2>", tree(dict(record))]
    return html_page("\n".join(parts), title=title, synthetic=bool(record["config"].get("synthetic")), style=STYLE)
