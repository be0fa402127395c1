"""Send a workflow script's logging and uncaught tracebacks to the rule's log file."""

from __future__ import annotations

import logging
import sys


def configure_logging(snakemake=None, *, level: int = logging.INFO, path: str | None = None) -> None:
    """Log to the rule's ``log[0]`` (or ``path``) and to stderr; route uncaught exceptions there too.

    Plmfair's own errors are logged as one line (they already say what to do) and print no
    traceback; anything else is logged with its traceback. The process exits with status 1
    either way.
    """
    if path is None and snakemake is not None and len(snakemake.log) > 0:
        path = str(snakemake.log[0])
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if path:
        handlers.append(logging.FileHandler(path, mode="w", encoding="utf-8"))
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )

    from plmfair.errors import PlmfairError

    def _excepthook(exc_type, exc, tb):
        log = logging.getLogger("plmfair")
        if issubclass(exc_type, PlmfairError):
            # already says which file, row or key and what to do: one line, no traceback
            log.error("%s", exc)
            return
        log.error("Uncaught exception", exc_info=(exc_type, exc, tb))

    sys.excepthook = _excepthook
