"""plmfair.diff: two runs' Parquet outputs, value by value."""

import pandas as pd

from plmfair.diff import diff_results, main
from plmfair.io.parquet import write_parquet

DOC = {"x": "a value", "wall_time_s": "seconds"}


def _run(root, files: dict[str, pd.DataFrame], meta=None):
    for rel, df in files.items():
        write_parquet(df, root / rel, schema_doc={c: DOC.get(c, c) for c in df.columns}, meta=meta)
    return root


def test_equal_runs_differ_only_in_wall_time(tmp_path):
    old = _run(
        tmp_path / "old",
        {"results/a/x.parquet": pd.DataFrame({"x": [1.0, float("nan")], "wall_time_s": [1, 2]})},
        meta={"model": "m", "wall_time_s": 3.0},
    )
    new = _run(
        tmp_path / "new",
        {"results/a/x.parquet": pd.DataFrame({"x": [1.0, float("nan")], "wall_time_s": [5, 6]})},
        meta={"model": "m", "wall_time_s": 9.0},
    )
    assert diff_results(old, new) == []
    assert main([str(old), str(new)]) == 0


def test_a_changed_value_a_missing_file_and_changed_metadata_are_named(tmp_path, capsys):
    old = _run(
        tmp_path / "old",
        {"results/a.parquet": pd.DataFrame({"x": [1.0, 2.0]}), "results/gone.parquet": pd.DataFrame({"x": [1.0]})},
        meta={"model": "m", "k": 5},
    )
    new = _run(
        tmp_path / "new",
        {"results/a.parquet": pd.DataFrame({"x": [1.0, 2.0000001]}), "results/new.parquet": pd.DataFrame({"x": [1.0]})},
        meta={"model": "m", "k": 6},
    )
    diffs = diff_results(old, new)
    assert any(d.startswith("results/a.parquet: values:") for d in diffs)
    assert "results/a.parquet: metadata: changed ['k']" in diffs
    assert f"results/gone.parquet: only in {old}" in diffs and f"results/new.parquet: only in {new}" in diffs
    assert main([str(old), str(new)]) == 1
    assert "difference(s) in the Parquet outputs" in capsys.readouterr().out


def test_a_moved_file_is_compared_at_its_new_path(tmp_path):
    old = _run(tmp_path / "old", {"results/data/cloze/demo/a.parquet": pd.DataFrame({"x": [1.0]})})
    new = _run(tmp_path / "new", {"results/data/demo/a.parquet": pd.DataFrame({"x": [1.0]})})
    assert len(diff_results(old, new)) == 2
    assert diff_results(old, new, moved={"results/data/cloze/demo/a.parquet": "results/data/demo/a.parquet"}) == []
    added = _run(tmp_path / "added", {"results/data/demo/a.parquet": pd.DataFrame({"x": [1.0], "y": [2]})})
    diff = diff_results(old, added, moved={"results/data/cloze/demo/a.parquet": "results/data/demo/a.parquet"})
    assert diff == [
        "results/data/cloze/demo/a.parquet -> results/data/demo/a.parquet: values: columns differ: "
        "removed [], added ['y']"
    ]


def test_plmfair_diff_is_the_command_line_of_the_diff(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    for run in ("a", "b"):
        (tmp_path / run / "results").mkdir(parents=True)
        pd.DataFrame({"x": [1.0, 2.0 if run == "a" else 2.5]}).to_parquet(tmp_path / run / "results" / "t.parquet")
    plmfair = Path(sys.executable).parent / "plmfair"
    proc = subprocess.run(
        [str(plmfair), "diff", str(tmp_path / "a"), str(tmp_path / "b")], capture_output=True, text=True
    )
    assert proc.returncode == 1 and proc.stdout.splitlines()[-1] == "1 difference(s) in the Parquet outputs"
    same = subprocess.run(
        [str(plmfair), "diff", str(tmp_path / "a"), str(tmp_path / "a")], capture_output=True, text=True
    )
    assert same.returncode == 0 and same.stdout.strip().endswith("are the same")
