"""The display rule checked on printed tables (docs/statistics.md, "The display rule"): every Markdown
table against the CSV that holds its numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

ALPHA = 0.05
# the null value each marked interval is tested against, by table name pattern
MARKED_TABLES = {
    "crows_pairs_tests": 50.0,
    "crows_pairs_language_effects": 0.0,
    "*_group_gaps": 0.0,
    "*_group_effects": 0.0,
}
MINUS_ZERO = re.compile(r"(?<![\w.])-0(?:\.0+)?(?![\d.])")


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


def check_tables(tables: Path) -> int:
    """Every printed table in ``tables``: no -0; every marked interval as printed excludes the null
    exactly when its row is marked and its printed ends lie on the same side of the null as the CSV's
    numbers; every printed p on the same side of alpha as the exact one; sigma_gd on the same side of
    its printed critical value as the exact numbers. Returns the rows checked."""
    checked = 0
    for md in sorted(tables.glob("*.md")):
        for row in markdown_rows(md):
            for cell in row.values():
                assert not MINUS_ZERO.search(cell), (md.name, cell)
    for pattern, null in MARKED_TABLES.items():
        for md in sorted(tables.glob(f"{pattern}.md")):
            rows, numbers = markdown_rows(md), pd.read_csv(md.with_suffix(".csv"))
            marks = [c for c in rows[0] if c.startswith("p ") and c != "p (Wald)" and "permutation" not in c]
            for row, (_, exact) in zip(rows, numbers.iterrows(), strict=True):
                if row["interval"] and row[marks[-1]]:  # an interval beside a test (not an intercept's)
                    low, high = _interval(row["interval"])
                    assert row[marks[-1]].endswith("*") == _excludes(low, high, null), (md.name, row)
                    assert (_side(low, null), _side(high, null)) == (
                        _side(exact["low"], null),
                        _side(exact["high"], null),
                    ), (md.name, row)
                    checked += 1
                for column in (c for c in row if c.startswith("p") and row[c] and not row[c].startswith("<")):
                    value = row[column].rstrip("*")
                    exact_p = exact[column] if column in exact else None
                    if re.fullmatch(r"[\d.]+", value) and exact_p is not None and not pd.isna(exact_p):
                        assert (float(value) < ALPHA) == (exact_p < ALPHA), (md.name, column, value, exact_p)
    for md in sorted(tables.glob("*_disparity.md")):
        numbers = pd.read_csv(md.with_suffix(".csv"))
        for row, (_, exact) in zip(markdown_rows(md), numbers.iterrows(), strict=True):
            shown = _side(float(row["σ_gd"]), float(row["critical value"]))
            same = abs(exact["σ_gd"] - exact["critical value"]) <= 1e-12 * max(1.0, exact["σ_gd"])  # float noise
            assert shown == (0 if same else _side(exact["σ_gd"], exact["critical value"])), row
            assert row["p Bonferroni"].endswith("*") == (exact["σ_gd"] > exact["critical value"] + 1e-12)
            checked += 1
    return checked
