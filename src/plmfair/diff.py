"""Did a rerun change any number? Every Parquet output of two results folders, diffed value by value.

``plmfair diff OLD NEW`` (or ``python -m plmfair.diff``) compares each Parquet file under ``OLD/results`` with the
file of the same path under ``NEW/results`` (or of another path, ``--moved OLD_PATH=NEW_PATH``):
the same columns, in the same order and of the same types, and every value equal (exactly: no
tolerance; missing values equal each other), and the same run metadata. Columns and metadata
keys that describe the run rather than its result (``wall_time_s``, the construction's ``seconds``
per stage, and ``scored_in_job_of``: which job of a model happened to load it) are left out.
It prints one line per difference and exits with status 1 when there is one, 0 otherwise. It is a
check of reproducibility (the same inputs and code give the same numbers), not ``plmfair compare``'s
statistics (:mod:`plmfair.runs.comparison`: did a number move beyond its uncertainty).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas and pyarrow load when tables are diffed: plmfair's command line imports this module
    import pandas as pd

RUN_MEASURES = ("wall_time_s", "seconds", "scored_in_job_of")


def parquet_files(root: str | Path) -> list[str]:
    """The Parquet files under ``root/results``, as paths relative to ``root``."""
    base = Path(root)
    return sorted(p.relative_to(base).as_posix() for p in (base / "results").rglob("*.parquet"))


def diff_frames(old: pd.DataFrame, new: pd.DataFrame, *, ignore: Iterable[str] = RUN_MEASURES) -> str | None:
    """None when the two tables are equal (columns in ``ignore`` left out), else what differs."""
    old = old.drop(columns=[c for c in ignore if c in old.columns])
    new = new.drop(columns=[c for c in ignore if c in new.columns])
    if list(old.columns) != list(new.columns):
        gone, added = [c for c in old.columns if c not in new.columns], [c for c in new.columns if c not in old.columns]
        return f"columns differ: removed {gone}, added {added}" if gone or added else "columns in another order"
    from pandas.testing import assert_frame_equal  # as the tables themselves: only when two are diffed

    try:
        assert_frame_equal(old.reset_index(drop=True), new.reset_index(drop=True), check_exact=True)
    except AssertionError as exc:
        return " ".join(str(exc).split())
    return None


def diff_meta(old: Mapping, new: Mapping, *, ignore: Iterable[str] = RUN_MEASURES) -> str | None:
    """None when the run metadata agree (keys in ``ignore`` left out), else the keys that differ."""
    keys = sorted((set(old) | set(new)) - set(ignore))
    changed = [k for k in keys if k in old and k in new and old[k] != new[k]]
    gone, added = [k for k in keys if k not in new], [k for k in keys if k not in old]
    if not (changed or gone or added):
        return None
    return "; ".join(
        part
        for part in (
            f"changed {changed}" if changed else "",
            f"removed {gone}" if gone else "",
            f"added {added}" if added else "",
        )
        if part
    )


def diff_results(
    old_root: str | Path,
    new_root: str | Path,
    *,
    moved: Mapping[str, str] | None = None,
    ignore: Iterable[str] = RUN_MEASURES,
) -> list[str]:
    """One line per difference between the Parquet outputs of two runs (empty: the same numbers)."""
    from plmfair.io.parquet import read_parquet, read_parquet_meta  # pyarrow and pandas: only when files are diffed

    moved = dict(moved or {})
    old_files, new_files = parquet_files(old_root), set(parquet_files(new_root))
    differences, matched = [], set()
    for rel in old_files:
        target = moved.get(rel, rel)
        if target not in new_files:
            differences.append(f"{rel}: only in {old_root}")
            continue
        matched.add(target)
        old_path, new_path = Path(old_root) / rel, Path(new_root) / target
        for what, diff in (
            ("values", diff_frames(read_parquet(old_path), read_parquet(new_path), ignore=ignore)),
            ("metadata", diff_meta(read_parquet_meta(old_path), read_parquet_meta(new_path), ignore=ignore)),
        ):
            if diff:
                differences.append(f"{rel}{' -> ' + target if target != rel else ''}: {what}: {diff}")
    differences += [f"{rel}: only in {new_root}" for rel in sorted(new_files - matched)]
    return differences


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The diff's arguments (``plmfair diff`` and ``python -m plmfair.diff``)."""
    parser.add_argument("old", help="working directory of the first run (holding results/)")
    parser.add_argument("new", help="working directory of the second run")
    parser.add_argument(
        "--moved",
        action="append",
        default=[],
        metavar="OLD_PATH=NEW_PATH",
        help="a file the second run writes at another path (relative to the working directory)",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=list(RUN_MEASURES),
        metavar="NAME",
        help="a column or metadata key left out (default: wall_time_s, seconds, scored_in_job_of)",
    )


def run(args: argparse.Namespace) -> int:
    """Print every difference between the two folders' Parquet outputs; 1 when there is one, else 0."""
    moved = dict(item.split("=", 1) for item in args.moved)
    differences = diff_results(args.old, args.new, moved=moved, ignore=args.ignore)
    for line in differences:
        print(line)
    print(
        f"{len(differences)} difference(s) in the Parquet outputs"
        if differences
        else f"the Parquet outputs of {args.old} and {args.new} are the same"
    )
    return 1 if differences else 0


def main(argv: list[str] | None = None) -> int:
    """``python -m plmfair.diff OLD NEW``: the exit status of :func:`run`."""
    parser = argparse.ArgumentParser(prog="python -m plmfair.diff", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
