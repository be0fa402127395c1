"""The workflow itself: lint, and the offline demo end to end through Snakemake's command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from plmfair.io import read_parquet

BIN = Path(sys.executable).parent


def snakemake(repo: Path, workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    cmd = [
        str(BIN / "snakemake"),
        "--snakefile", str(repo / "Snakefile"),
        "--directory", str(workdir),
        "--configfile", str(repo / ".test" / "config" / "config.yaml"),
        "--config", f"mirror={repo / '.test' / 'data'}",
        "--cores", "2",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}")
    return proc


@pytest.fixture(scope="module")
def demo_run(repo, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("demo")
    snakemake(repo, workdir)
    return workdir


def test_lint(repo, tmp_path):
    proc = snakemake(repo, tmp_path, "--lint", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_demo_ingestion_outputs(demo_run):
    ann = read_parquet(demo_run / "results/data/mozart/annotations.parquet")
    assert len(ann) == 4 * 48
    fr = read_parquet(demo_run / "results/data/crows_pairs/demo_fr.parquet")
    assert fr["sent_less"].isna().sum() == 1
    summary = pd.read_csv(demo_run / "results/tables/data_summary.csv")
    assert set(summary["dataset"]) == {"mozart", "crows_pairs/demo_en", "crows_pairs/demo_fr"}


def test_demo_rerun_is_a_noop(repo, demo_run):
    proc = snakemake(repo, demo_run, "--dry-run")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_bad_config_value_stops_with_one_line(repo, tmp_path):
    proc = snakemake(repo, tmp_path, "--config", "mirror=x", "crows_pairs={'datasets': ['nope']}", "--dry-run", check=False)
    assert proc.returncode != 0
    assert "config error at crows_pairs.datasets.0: data set 'nope' is not declared" in proc.stdout + proc.stderr
