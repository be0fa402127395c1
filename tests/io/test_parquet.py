import pandas as pd
import pytest

from plmfair.errors import DataError
from plmfair.io.parquet import read_parquet, read_parquet_meta, read_schema_doc, write_parquet


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
    with pytest.raises(
        DataError,
        match="missing columns \\['z'\\]; it was written by another version of plmfair: "
        "delete it \\(rm .*ok.parquet\\) and run the workflow again",
    ):
        read_parquet(tmp_path / "ok.parquet", columns=["a", "z"])


def _pair_file(tmp_path, **changes):
    """A per-pair CrowS-Pairs file as this version writes it, with ``changes`` of another version."""
    from plmfair.crows_pairs.schemas import PAIR_SCHEMA, with_outcomes

    frame = pd.DataFrame(
        {
            "pair_id": ["1", "2"],
            "bias_type": ["gender", "age"],
            "stereo_antistereo": ["stereo"] * 2,
            "origin": ["native"] * 2,
            "sent_more_score": [-1.0, -2.0],
            "sent_less_score": [-2.0, -2.0],
            "n_masked_more": [3, 3],
            "n_masked_less": [3, 3],
            "biased": [True, False],
            "neutral": [False, True],
            "status": ["ok", "ok"],
            "cluster": None,
        }
    )
    frame = with_outcomes(frame, precision="float32", rounded=True)
    path = tmp_path / "fr" / "m.parquet"
    write_parquet(frame.assign(**changes)[list(PAIR_SCHEMA)], path)
    return path


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"status": ["scored", "scored"]}, "column 'status' holds 'scored' \\(row 0\\), expected one of ok, truncated"),
        ({"neutral": ["False", "True"]}, "column 'neutral' holds str values \\('False'\\), expected bool"),
    ],
)
def test_a_pair_file_of_another_version_is_refused_with_the_command_that_rebuilds_it(tmp_path, changes, message):
    """An older status value gave Table 4 n = 0 and a figure's ValueError; neutral stored as strings a
    TypeError: both are one line naming the file, the column and the fix, wherever the file is read."""
    from plmfair.crows_pairs.summary import read_pair_scores, summarise_runs

    path = _pair_file(tmp_path, **changes)
    with pytest.raises(DataError, match=message + ".*rm .*m.parquet"):
        read_pair_scores(path)
    with pytest.raises(DataError, match=message):
        summarise_runs({("fr", "m"): str(path)}, langs={"fr": "fr"}, alpha=0.05, max_unknown=0.05)
    assert len(read_pair_scores(_pair_file(tmp_path / "ok"))) == 2  # this version's file reads


def test_a_parquet_write_that_fails_midway_leaves_nothing(tmp_path):
    """A column pyarrow cannot convert fails inside the write: no file, no temporary file."""
    out = tmp_path / "scores.parquet"
    with pytest.raises(Exception):  # noqa: B017 - pyarrow's conversion errors have several types
        write_parquet(pd.DataFrame({"x": [1, object()]}), out)
    assert list(tmp_path.iterdir()) == []
