"""Every ``make bench-*`` target's benchmarks at a tiny size, so that a change that breaks one is seen on the
change (issue 79: a KeyError stopped ``make bench-cloze`` before any job, and nothing ran it). Each case runs
a benchmark script as its target runs it, with arguments that make it end in seconds, and checks that it ends
with status 0 having printed its figures; what the figures say is the benchmarks' own business at full size
(``make bench-*``, their pages under docs/validation/).

A benchmark that runs Snakemake (bench-cloze, bench-plan) is marked e2e as every such test is. bench-causal
runs in ``.venv-bench``, the environment with lm-evaluation-harness that ``make test`` sets up."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

BENCH_VENV = REPO / ".venv-bench"

# Per make target: each script it runs, with tiny arguments, and a pattern every smoke run's output holds
# (a figure the benchmark exists to print). The full sizes are the Makefile's.
SMOKE = {
    "bench": [
        (  # the fast path, the robustness passes and the plain loop, in one process
            "bench_crows_pairs.py",
            ["--pairs", "6", "--layers", "1", "--hidden", "32", "--vocab", "8000", "--robustness"],
            r"(?s)robustness run \(\d+ passes, one load\): [0-9.]+ s.*plain per-copy loop: +[0-9.]+ s",
        ),
        ("bench_precision.py", ["--pairs", "6"], r"tiny_bert on demo_fr \(6 pairs\): fp32 [0-9.]+ s"),
    ],
    "bench-predict": [
        (
            "bench_gap_prediction.py",
            ["--models", "tiny-mt5,tiny-gpt2", "--beams", "4", "--k", "4", "--sentences", "2", "--langs", "en"],
            r"tiny-mt5",
        ),
    ],
    "bench-causal": [
        (
            "bench_causal.py",
            ["--pairs", "3", "--shapes", "tiny-gpt2", "--threads", "1", "--harness-batch-size", "4"],
            r"\| tiny-gpt2 \| [0-9.]+ s \([0-9.]+ pairs/s\) \| [0-9.]+ s",
        ),
    ],
    "bench-cloze": [
        ("bench_cloze.py", ["--lines", "150", "--shapes", "europarl", "--n", "8"], r"end to end [0-9.]+ s"),
    ],
    "bench-stats": [
        (
            "bench_stats.py",
            # every part, on the demo's design; one null scenario and the power one; the smallest pair set
            ["--replicates", "2", "--power-replicates", "2", "--permutations", "19", "--ranking-replicates", "3"]
            + ["--design", "demo", "--scenarios", "no effect", "power: non-natives down", "--pair-sizes", "40"]
            + ["--robustness-replicates", "2", "--bootstrap", "199"],
            r"rows flagged",
        ),
    ],
    "bench-plan": [
        ("bench_plan.py", ["--models", "2", "4", "--datasets", "2", "--repeats", "1"], r"[0-9.]+x Snakemake's floor"),
    ],
    "bench-tests": [("bench_tests.py", ["--read", "{basetemp}"], r"workflow jobs by rule")],
}
RUNS_SNAKEMAKE = {"bench-cloze", "bench-plan"}


def _cases():
    for target, runs in SMOKE.items():
        for i, (script, args, printed) in enumerate(runs):
            marks = [pytest.mark.e2e] if target in RUNS_SNAKEMAKE else []
            yield pytest.param(target, script, args, printed, id=f"{target}-{i}-{script[:-3]}", marks=marks)


def test_every_bench_target_and_every_script_it_runs_has_a_smoke_case():
    """The Makefile's ``bench*`` targets, and the scripts each one's recipe runs (``make -n``), are those of
    :data:`SMOKE`: a new target or a script added to one gets its tiny case here."""
    makefile = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"^(bench[\w-]*):", makefile, re.M))
    assert targets == set(SMOKE), targets ^ set(SMOKE)
    for target in targets:
        recipe = subprocess.run(
            ["make", "-n", "--no-print-directory", "-C", str(REPO), target], capture_output=True, text=True
        )
        assert recipe.returncode == 0, recipe.stderr
        scripts = set(re.findall(r"benchmarks/(\w+\.py)", recipe.stdout)) - {"page.py"}
        assert scripts == {script for script, _, _ in SMOKE[target]}, (target, scripts)


def _interpreter(target: str) -> str:
    if target != "bench-causal":
        return sys.executable
    python = BENCH_VENV / "bin" / "python"
    if not python.exists():
        if os.environ.get("PLMFAIR_BENCH_VENV"):  # make test set it up: its absence is a failure
            pytest.fail(f"{BENCH_VENV} is missing although make test sets it up")
        pytest.skip(f"bench-causal runs in {BENCH_VENV} (lm-evaluation-harness): make test sets it up")
    return str(python)


@pytest.mark.parametrize(("target", "script", "args", "printed"), list(_cases()))
def test_each_benchmark_ends_at_a_tiny_size_and_prints_its_figures(target, script, args, printed, tmp_path):
    basetemp = _a_test_runs_logs(tmp_path) if "{basetemp}" in args else None
    args = [a.replace("{basetemp}", str(basetemp)) for a in args]
    done = subprocess.run(
        [_interpreter(target), str(REPO / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert done.returncode == 0, f"{script} {' '.join(args)} ended with {done.returncode}:\n{done.stderr[-3000:]}"
    assert re.search(printed, done.stdout), done.stdout[-3000:]


def _a_test_runs_logs(root: Path) -> Path:
    """A pytest --basetemp holding one Snakemake log, as an end-to-end test leaves it (bench-tests' reader)."""
    log = root / "basetemp" / "popen-gw0" / "test_a0" / "run" / ".snakemake" / "log" / "a.snakemake.log"
    log.parent.mkdir(parents=True)
    log.write_text(
        "[Sat Nov 28 18:26:38 2026]\nrule table:\n    jobid: 3\n[Sat Nov 28 18:26:41 2026]\nFinished jobid: 3 "
        "(Rule: table)\n"
    )
    return root / "basetemp"
