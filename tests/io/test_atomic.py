"""Atomic writes: nothing half-written, nothing of another job's removed."""

import os
import stat
import threading

import pytest

from plmfair.io.atomic import atomic_dir, atomic_path, write_text


def test_failed_write_leaves_no_file(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
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


# Faults of the machine end in one line naming the path, what is missing and what to do.


def _fail_with(number: int, text: str | None = None):
    def body(tmp):
        tmp.write_bytes(b"x" * 3 * 2**20)  # 3 MiB written before the device "ran out"
        raise OSError(number, text or os.strerror(number)) if text is None else OSError(text)

    return body


def test_disk_full_is_one_line_with_the_space_it_needed_and_leaves_nothing(tmp_path):
    import errno

    from plmfair.errors import StorageError

    out = tmp_path / "results" / "scores.parquet"
    with pytest.raises(StorageError) as caught, atomic_path(out) as tmp:
        _fail_with(errno.ENOSPC)(tmp)
    said = str(caught.value)
    assert said.startswith(f"{out}: no space left on the device holding {out.parent}") and "\n" not in said
    assert "this file got 3.0 MiB before it stopped, so it needs more" in said and "run the workflow again" in said
    assert list(out.parent.iterdir()) == []  # no half-written file, no temporary one
    # pyarrow says the error number only in its text
    with pytest.raises(StorageError, match="no space left"), atomic_path(out) as tmp:
        _fail_with(0, "[Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device")(tmp)


def test_read_only_and_permission_denied_are_one_line(tmp_path, monkeypatch):
    import errno
    import tempfile

    from plmfair.errors import StorageError

    for number, words in ((errno.EROFS, "is on a read-only file system"), (errno.EACCES, "permission denied writing")):

        def refuse(*args, number=number, **kwargs):
            raise OSError(number, os.strerror(number), kwargs.get("dir"))

        monkeypatch.setattr(tempfile, "mkstemp", refuse)
        with pytest.raises(StorageError) as caught:
            write_text("x", tmp_path / "table.md")
        assert str(caught.value).startswith(f"{tmp_path / 'table.md'}: ") and words in str(caught.value)
        monkeypatch.undo()
    # any other fault is not the machine's: it passes unchanged
    with pytest.raises(FileNotFoundError), atomic_path(tmp_path / "x.txt"):
        raise FileNotFoundError(2, "missing input")


def test_a_job_stopped_by_a_full_disk_says_so_in_its_log_without_a_traceback(tmp_path):
    import subprocess
    import sys

    log = tmp_path / "job.log"
    code = (
        "import errno\nfrom plmfair.logs import configure_logging\nfrom plmfair.io.atomic import atomic_path\n"
        f"configure_logging(path={str(log)!r})\n"
        f"with atomic_path({str(tmp_path / 'out.parquet')!r}):\n"
        "    raise OSError(errno.ENOSPC, 'No space left on device')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = log.read_text().splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and "no space left on the device" in lines[0]
    assert "Traceback" not in proc.stderr and lines[0].split("ERROR ")[1] in proc.stderr


def test_a_log_that_cannot_be_written_leaves_stderr_clean(tmp_path, capsys):
    import logging

    from plmfair.logs import JobLog

    handler = JobLog(tmp_path / "job.log", mode="w", encoding="utf-8")

    class Full:
        def write(self, text):
            raise OSError(28, "No space left on device")

        def flush(self):
            pass

    handler.stream = Full()
    handler.emit(logging.LogRecord("plmfair", logging.ERROR, __file__, 1, "disk full", None, None))
    assert "Logging error" not in capsys.readouterr().err
