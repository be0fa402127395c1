"""The display rule and the marks checked on printed tables (docs/statistics.md, "The display rule" and "The
hypotheses"): every Markdown table against the CSV that holds its numbers.

What fails: a printed -0 or floating-point noise printed as a signed number; a CSV cell that is a number
with something around it (``2 (5.6%)``, ``12-6``, ``12.5†``) instead of one number; a mark anywhere but
on the adjusted p of a test the run's hypotheses tested (a row it calls untestable or uninformative
is never marked, nor a test whose level bench-stats does not show: a mixed model's); a marked row whose
interval, as printed, holds its null value without saying why; a printed end or p on another side of its
null value or of alpha than the CSV's number; sigma_gd printed on another side of its critical value.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

ALPHA = 0.05
# the null value each table's intervals are about, by table name pattern (a table not listed has none)
NULLS = {
    "crows_pairs_tests": {"interval (95%)": 50.0, "net interval (Tango)": 0.0},
    "crows_pairs_mcnemar": {"interval (Tango, 95%)": 0.0},
    "crows_pairs_language_winloss": {"interval (Tango)": 0.0},
    "*_group_gaps": {"interval (95%)": 0.0},
    "*_disparity": {"interval of the true σ_gd (95%)": 0.0},
}
# the interval each table's mark must agree with (a marked row's interval excludes its null value)
MARKED_INTERVAL = {
    "crows_pairs_tests": "interval (95%)",
    "crows_pairs_mcnemar": "interval (Tango, 95%)",
    "crows_pairs_language_winloss": "interval (Tango)",
    "*_group_gaps": "interval (95%)",
    "*_disparity": "interval of the true σ_gd (95%)",
}
# a mark may only stand on the adjusted p of the run's hypotheses
MARKED_COLUMN = "p adjusted"
# why a marked row's interval may hold its null value, as its note says it
EXPLAINED = ("decided by the tie-break", "not one interval")
MINUS_ZERO = re.compile(r"(?<![\w.])-0(?:\.0+)?(?![\d.])")
# a tiny number printed in scientific notation, or with more than a dozen zeros: floating-point noise
NOISE = re.compile(r"(?<![\w.])-?\d(?:\.\d+)?e-(?:[1-9]\d)\b|(?<![\w.])-?0\.0{12,}\d")
NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$|^[-+]?inf$|^nan$", re.IGNORECASE)
# a number with something around it: a share in parentheses, wins-losses, a mark, a unit, thousands
DECORATED = re.compile(r"^[-+]?\d[\d.]*\s*(?:\(|[†‡§*°%]|-\d|:\d|,\d{3})|^[-+]?\d[\d.]*[MBk]$")
# columns of labels that may read like numbers (XTREME-R's buckets: "4-7" tokens)
LABELS = {"bucket", "subset", "description"}


def markdown_rows(path) -> list[dict]:
    """The rows of the (first) pipe table of a Markdown file, cells as printed ('\\|' unescaped)."""
    lines = [line for line in Path(path).read_text(encoding="utf-8").splitlines() if line.startswith("|")]

    def cells(line):
        return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]

    header = cells(lines[0]) if lines else []
    return [dict(zip(header, cells(line), strict=True)) for line in lines[2:]]


def _side(value: float, reference: float) -> int:
    return (value > reference) - (value < reference)


def _interval(text: str) -> tuple[float, float]:
    low, high = text.strip("[]").split(", ")
    return float(low), float(high)


def _excludes(low, high, null) -> bool:
    return not (float(low) <= null <= float(high))


def _matching(tables: Path, patterns) -> list[tuple[Path, str]]:
    return [(md, pattern) for pattern in patterns for md in sorted(tables.glob(f"{pattern}.md"))]


def check_csv(csv: Path) -> None:
    """Every column of a table's CSV holds one quantity: no cell is a number with something around it."""
    frame = pd.read_csv(csv, dtype=str, keep_default_na=False)
    for column in frame.columns:
        if column in LABELS:
            continue
        for cell in frame[column]:
            assert not (DECORATED.match(cell) and not NUMBER.match(cell)), (csv.name, column, cell)


def check_tables(tables: Path) -> int:
    """Every printed table in ``tables`` (and its CSV) by the rules of this module's docstring. Returns the
    rows checked."""
    checked = 0
    for md in sorted(tables.glob("*.md")):
        check_csv(md.with_suffix(".csv"))
        for row in markdown_rows(md):
            for column, cell in row.items():
                assert not MINUS_ZERO.search(cell), (md.name, cell)
                assert not NOISE.search(cell), (md.name, column, cell)
                if "*" in cell:
                    assert column == MARKED_COLUMN, (md.name, column, cell)
                    assert row.get("family") in ("confirmatory", "secondary"), (md.name, row)
                    assert float(cell.rstrip("*").lstrip("<")) < ALPHA, (md.name, row)
            checked += 1
    for md, pattern in _matching(tables, NULLS):
        rows, numbers = markdown_rows(md), pd.read_csv(md.with_suffix(".csv"))
        for row, (_, exact) in zip(rows, numbers.iterrows(), strict=True):
            marked = row.get(MARKED_COLUMN, "").endswith("*")
            for column, null in NULLS[pattern].items():
                if not row.get(column):
                    assert not (marked and column == MARKED_INTERVAL[pattern]), (md.name, row)
                    continue
                low, high = _interval(row[column])
                ends = ("low", "high") if column == MARKED_INTERVAL[pattern] else ("net_low", "net_high")
                assert (_side(low, null), _side(high, null)) == tuple(_side(exact[e], null) for e in ends), (
                    md.name,
                    row,
                )
                if marked and column == MARKED_INTERVAL[pattern] and not any(w in row["note"] for w in EXPLAINED):
                    assert _excludes(low, high, null), (md.name, row)
            for column in (c for c in row if c.startswith("p") and row[c] and not row[c].startswith("<")):
                value = row[column].rstrip("*")
                exact_p = exact.get(column)
                if re.fullmatch(r"[\d.]+", value) and exact_p is not None and not pd.isna(exact_p):
                    assert (float(value) < ALPHA) == (exact_p < ALPHA), (md.name, column, value, exact_p)
    for md in sorted(tables.glob("*_disparity.md")):
        numbers = pd.read_csv(md.with_suffix(".csv"))
        for row, (_, exact) in zip(markdown_rows(md), numbers.iterrows(), strict=True):
            if not row["critical value"]:
                continue
            shown = _side(float(row["σ_gd"]), float(row["critical value"]))
            same = abs(exact["σ_gd"] - exact["critical value"]) <= 1e-12 * max(1.0, exact["σ_gd"])  # float noise
            assert shown == (0 if same else _side(exact["σ_gd"], exact["critical value"])), row
            if row[MARKED_COLUMN].endswith("*"):  # significant after the adjustment: beyond its critical value
                assert exact["σ_gd"] > exact["critical value"] + 1e-12, row
    return checked
