import pandas as pd
import pytest

from plmfair.errors import DataError
from plmfair.io import read_parquet, read_parquet_meta, read_schema_doc, write_parquet


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


def test_a_parquet_write_that_fails_midway_leaves_nothing(tmp_path):
    """A column pyarrow cannot convert fails inside the write: no file, no temporary file."""
    out = tmp_path / "scores.parquet"
    with pytest.raises(Exception):  # noqa: B017 - pyarrow's conversion errors have several types
        write_parquet(pd.DataFrame({"x": [1, object()]}), out)
    assert list(tmp_path.iterdir()) == []

