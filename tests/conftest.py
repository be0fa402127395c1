"""Shared fixtures: repository paths, the optional real data folder, demo files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEMO_DATA = REPO / ".test" / "data"


def _shared_data() -> Path | None:
    env = os.environ.get("PLMFAIR_SHARED_DATA")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data"]:
        if cand.is_dir():
            return cand
    return None


SHARED_DATA = _shared_data()


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def demo_data() -> Path:
    return DEMO_DATA


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real data sets (../shared/data or $PLMFAIR_SHARED_DATA); tests using it skip without it."""
    if SHARED_DATA is None:
        pytest.skip("real data not available: set PLMFAIR_SHARED_DATA or place it at ../shared/data")
    return SHARED_DATA


def dry_run_jobs(stdout: str) -> list[tuple[str, str]]:
    """(rule, wildcards) of every job a Snakemake dry run plans ('' for a job without wildcards);
    rules, localrules and the members of group jobs (printed indented) alike."""
    jobs: list[tuple[str, str]] = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith(("rule ", "localrule ")) and line.endswith(":"):
            jobs.append((line.split()[1].rstrip(":"), ""))
        elif line.startswith("wildcards:") and jobs and not jobs[-1][1]:
            jobs[-1] = (jobs[-1][0], line.removeprefix("wildcards:").strip())
    return jobs
