import pandas as pd
import pytest

from plmfair.errors import DataError
from plmfair.io import (
    atomic_dir,
    atomic_path,
    read_parquet,
    read_parquet_meta,
    read_schema_doc,
    write_parquet,
)


def test_parquet_roundtrip_with_docs_and_meta(tmp_path):
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    path = tmp_path / "t.parquet"
    write_parquet(df, path, schema_doc={"a": "an int", "b": "a str"}, meta={"device": "cpu"})
    pd.testing.assert_frame_equal(read_parquet(path), df)
    assert read_schema_doc(path) == {"a": "an int", "b": "a str"}
    assert read_parquet_meta(path) == {"device": "cpu"}


def test_undocumented_column_is_refused(tmp_path):
    with pytest.raises(ValueError, match="undocumented \\['b'\\]"):
        write_parquet(pd.DataFrame({"a": [1], "b": [2]}), tmp_path / "t.parquet", schema_doc={"a": "x"})
    assert not (tmp_path / "t.parquet").exists()


def test_failed_write_leaves_no_file(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("boom")
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_read_parquet_errors(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        read_parquet(tmp_path / "none.parquet")
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(DataError, match="not a readable Parquet file"):
        read_parquet(bad)
    write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "ok.parquet")
    with pytest.raises(DataError, match="missing columns \\['z'\\]"):
        read_parquet(tmp_path / "ok.parquet", columns=["a", "z"])


def test_atomic_dir_replaces_on_success_and_keeps_the_old_folder_on_failure(tmp_path):
    out = tmp_path / "sheets"
    with atomic_dir(out) as tmp:
        (tmp / "a.csv").write_text("1")
    assert [p.name for p in out.iterdir()] == ["a.csv"]
    with pytest.raises(RuntimeError), atomic_dir(out) as tmp:
        (tmp / "b.csv").write_text("half")
        raise RuntimeError("job failed")
    assert [p.name for p in out.iterdir()] == ["a.csv"]
    assert [p.name for p in tmp_path.iterdir()] == ["sheets"]  # no temporary folder left
    with atomic_dir(out) as tmp:
        (tmp / "c.csv").write_text("2")
    assert [p.name for p in out.iterdir()] == ["c.csv"]
