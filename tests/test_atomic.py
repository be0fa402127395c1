"""Atomic writes: nothing half-written, nothing of another job's removed."""

import os
import stat
import threading

import pytest

from plmfair.atomic import atomic_dir, atomic_path, write_text


def test_failed_write_leaves_no_file(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("boom")
    assert not target.exists() and list(tmp_path.iterdir()) == []


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


def test_outputs_get_the_usual_permissions_and_leftovers_are_removed(tmp_path):
    old = os.umask(0o022)
    try:
        out = tmp_path / "scores.parquet"
        stale = tmp_path / ".scores.parquet.plmfair-tmp.abc123"
        stale.write_text("half a file from a killed job")
        write_text("x", out)
        assert stat.S_IMODE(out.stat().st_mode) == 0o644
        assert not stale.exists()
    finally:
        os.umask(old)


def test_a_write_leaves_the_temporary_files_of_other_outputs_alone(tmp_path):
    """Writing corpus.en must not delete corpus.en.gz's temporary file, which a concurrent job is
    still writing (two writers, the first one's write finishing while the second's is open)."""
    inside, done = threading.Event(), threading.Event()

    def slow_writer():
        with atomic_path(tmp_path / "corpus.en.gz") as tmp:
            tmp.write_text("compressed")
            inside.set()
            done.wait(10)

    other = threading.Thread(target=slow_writer)
    other.start()
    assert inside.wait(10)
    write_text("plain", tmp_path / "corpus.en")
    done.set()
    other.join()
    assert (tmp_path / "corpus.en.gz").read_text() == "compressed" and (tmp_path / "corpus.en").read_text() == "plain"
