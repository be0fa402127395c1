"""Where the benchmarks find the real data sets: $PLMFAIR_SHARED_DATA, else ../shared/data beside
the checkout (the tests' rule, tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def shared_file(*parts: str) -> Path | None:
    """The real data file ``parts`` (e.g. ``"mozart", "MozArt.zip"``), or None when it is not here."""
    for root in (os.environ.get("PLMFAIR_SHARED_DATA"), REPO.parent / "shared" / "data"):
        if root and Path(root, *parts).exists():
            return Path(root, *parts)
    return None
