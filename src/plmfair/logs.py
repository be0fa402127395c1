"""Send a workflow script's logging and uncaught tracebacks to the rule's log file; a command line's own
lines to stderr."""

from __future__ import annotations

import ctypes
import io
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from plmfair.errors import PlmfairError
from plmfair.io.atomic import seal_writes, storage_error

# Room set aside in a job's log when it opens, so that a job stopped by a full disk can still say why
# in the log it points to (Linux fallocate with FALLOC_FL_KEEP_SIZE: blocks allocated, size unchanged).
LOG_RESERVE = 64 * 1024
_KEEP_SIZE = 1


class JobLog(logging.FileHandler):
    """The job's log file, with :data:`LOG_RESERVE` bytes allocated ahead of its writes where the
    system allows it; a record it cannot write is left to stderr, without logging's own traceback."""

    def _open(self) -> io.TextIOWrapper:
        stream = super()._open()
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.fallocate(stream.fileno(), _KEEP_SIZE, ctypes.c_longlong(0), ctypes.c_longlong(LOG_RESERVE))
        except (AttributeError, OSError):  # not Linux, or no fallocate: the log is written as usual
            pass
        return stream

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        # stderr, the other handler, has the record; "--- Logging error ---" and a traceback would bury it
        pass


def configure_logging(snakemake: Any = None, *, level: int = logging.INFO, path: str | None = None) -> None:
    """Log to the rule's ``log[0]`` (or ``path``) and to stderr; route uncaught exceptions there too.

    In a workflow job (``snakemake`` given) every result the job writes is sealed
    (:func:`plmfair.io.atomic.seal_writes`).

    Plmfair's own errors are logged as one line (they already say what to do) and print no
    traceback, and so is a fault of the machine (disk full, read-only folder, permission denied:
    :func:`plmfair.io.atomic.storage_error`) wherever it was raised; anything else is logged with its
    traceback. The process exits with status 1 either way.
    """
    if path is None and snakemake is not None and len(snakemake.log) > 0:
        path = str(snakemake.log[0])
    if snakemake is not None:
        seal_writes(os.getcwd())  # a job runs in the run folder: its results are sealed as written
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if path:
        handlers.append(JobLog(path, mode="w", encoding="utf-8"))
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )

    def _excepthook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        log = logging.getLogger("plmfair")
        if issubclass(exc_type, KeyboardInterrupt):
            # Ctrl-C reaches every job: Snakemake removes the stopped job's outputs and says so itself
            log.error("interrupted: this job stopped before writing its outputs")
            return
        if issubclass(exc_type, PlmfairError):
            # already says which file, row or key and what to do: one line, no traceback
            log.error("%s", exc)
            return
        if isinstance(exc, OSError):
            said = storage_error(exc, exc.filename or os.getcwd())
            if said is not None:
                log.error("%s", said)
                return
        log.error("Uncaught exception", exc_info=(exc_type, exc, tb))

    sys.excepthook = _excepthook


class _CommandLineLines(logging.StreamHandler):
    """plmfair's lines of a command, headed ``plmfair:``, on ``sys.stderr`` as it is when a line is logged
    (a later redirect's, a caller's capture), not as it was when the handler was made."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("plmfair: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


@contextmanager
def command_line_logging() -> Iterator[None]:
    """plmfair's own log lines (INFO and up) on stderr while a command runs, each headed ``plmfair:``; a
    library's keep its own handler (huggingface_hub prints its retries itself, and through a root handler they
    were printed twice). The handler goes when the command ends, so that a caller keeps its logging; a
    command run inside another (the preflight inside ``plmfair run``) uses the outer one's."""
    own = logging.getLogger("plmfair")
    if any(isinstance(handler, _CommandLineLines) for handler in own.handlers):
        yield
        return
    handler, level = _CommandLineLines(), own.level
    own.addHandler(handler)
    own.setLevel(logging.INFO)
    try:
        yield
    finally:
        own.removeHandler(handler)
        own.setLevel(level)
