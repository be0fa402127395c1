"""Where `make test`'s time goes: the suite run as `make test` runs it (pytest-xdist, TEST_PROCESSES
processes), then every Snakemake job its end-to-end tests ran, read from the Snakemake logs they left.

Printed: how fast the machine is now (a job's start-up: a Python importing pandas and pyarrow, which
every job of the workflow pays before its work; the same commit's suite has taken 1.7 times as long on
this machine from one day to the next); the suite's wall time and its CPU time (user and system of every
process it started) against the 6-minute target, the CPU time over the cores being the least wall time
any order of the tests could reach; the workflow jobs the tests ran, by rule and by the test (or fixture)
that ran them, with their seconds; and the floor those jobs alone set, their seconds over the cores,
against the same target, with the part of it that is start-up. A job is a process of its own (Python, its
imports, its work), so the floor falls only with fewer or cheaper jobs, not with another order of the tests.

    python benchmarks/bench_tests.py [--processes 2] [--basetemp DIR] [--read DIR]

``--read DIR``: no run, only the logs a run left under DIR (pytest's --basetemp). A job's seconds come
from the log's timestamps (whole seconds: over hundreds of jobs the rounding evens out). A test that
copies a run (``cp -a``) copies its logs too; each log is counted once, by its file name.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 360  # issue 63: make test at most 6 minutes on an idle 2-core machine

STAMP = re.compile(r"\[(\w{3} \w{3} +\d+ [\d:]{8} \d{4})\]")
RULE = re.compile(r"(?:local)?rule (\w+):")
JOBID = re.compile(r"\s+jobid: (\d+)")
FINISHED = re.compile(r"Finished jobid: (\d+)")


def job_seconds(log: Path) -> list[tuple[str, float]]:
    """(rule, seconds) of every job a Snakemake log saw finish."""
    now, rule, started, jobs = None, None, {}, []
    for line in log.read_text(errors="replace").splitlines():
        if stamp := STAMP.match(line):
            now = datetime.datetime.strptime(stamp.group(1), "%a %b %d %H:%M:%S %Y")
        elif named := RULE.match(line):
            rule = named.group(1)
        elif (job := JOBID.match(line)) and rule:
            started[job.group(1)], rule = (rule, now), None
        elif (done := FINISHED.match(line)) and done.group(1) in started:
            name, start = started.pop(done.group(1))
            jobs.append((name, (now - start).total_seconds()))
    return jobs


def startup_seconds(repeats: int = 5) -> float:
    """The median wall time of a Python that imports pandas and pyarrow's Parquet module: the start-up each
    workflow job pays before its work, on this machine as fast as it is now."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import pandas, pyarrow.parquet"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def children_cpu_seconds() -> float:
    """User and system CPU seconds of every process this one started and waited for, with theirs (the
    suite's pytest, its workers, their Snakemake runs and those runs' jobs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def owner(log: Path, basetemp: Path) -> str:
    """The test (pytest's folder name for it, cut at 30 characters) or shared fixture whose run left ``log``."""
    parts = log.relative_to(basetemp).parts
    return parts[1] if parts[0].startswith("popen-gw") else parts[0]


def logs_under(basetemp: Path) -> list[Path]:
    """Every Snakemake log under ``basetemp``, each file name once (copies of a run carry its logs)."""
    seen: dict[str, Path] = {}
    for log in sorted(basetemp.rglob(".snakemake/log/*.snakemake.log"), key=lambda p: len(p.parts)):
        seen.setdefault(log.name, log)
    return list(seen.values())


def table(title: str, rows: dict[str, list[float]], top: int) -> None:
    print(f"\n{title}")
    print(f"  {'jobs':>5} {'seconds':>8} {'per job':>8}  name")
    ranked = sorted(rows.items(), key=lambda item: -sum(item[1]))
    for name, seconds in ranked[:top]:
        print(f"  {len(seconds):5d} {sum(seconds):8.0f} {sum(seconds) / len(seconds):8.2f}  {name}")
    rest = [s for _, seconds in ranked[top:] for s in seconds]
    if rest:
        print(f"  {len(rest):5d} {sum(rest):8.0f} {sum(rest) / len(rest):8.2f}  ({len(ranked) - top} more)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=2, help="pytest-xdist processes (make test's TEST_PROCESSES)")
    parser.add_argument("--basetemp", type=Path, help="pytest's --basetemp (default: a new temporary folder)")
    parser.add_argument("--read", type=Path, help="only read the logs a run left under this --basetemp")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    wall = cpu = None
    startup = startup_seconds()
    if args.read:
        basetemp = args.read
    else:
        basetemp = args.basetemp or Path(tempfile.mkdtemp(prefix="bench_tests_")) / "basetemp"
        command = [sys.executable, "-m", "pytest", "-q", "-n", str(args.processes), "--dist", "loadfile"]
        command += ["--no-loadscope-reorder", "-p", "no:cacheprovider", f"--basetemp={basetemp}"]
        start, cpu_before = time.perf_counter(), children_cpu_seconds()
        done = subprocess.run(command, cwd=REPO)
        wall, cpu = time.perf_counter() - start, children_cpu_seconds() - cpu_before
        if done.returncode != 0:
            print(
                f"bench-tests: the suite failed (exit {done.returncode}); its timings are not a measure",
                file=sys.stderr,
            )
            return done.returncode
    by_rule: dict[str, list[float]] = collections.defaultdict(list)
    by_test: dict[str, list[float]] = collections.defaultdict(list)
    for log in logs_under(basetemp):
        for rule, seconds in job_seconds(log):
            by_rule[rule].append(seconds)
            by_test[owner(log, basetemp)].append(seconds)
    jobs = [s for seconds in by_rule.values() for s in seconds]
    if not jobs:
        print(f"bench-tests: no Snakemake log under {basetemp}", file=sys.stderr)
        return 1
    print(f"suite: {basetemp}")
    print(f"machine now: a job's start-up (Python importing pandas and pyarrow) takes {startup:.2f} s, median of 5")
    if wall is not None:
        print(
            f"wall time: {wall:.0f} s on {args.processes} processes ({wall / TARGET_S:.2f} x the {TARGET_S} s target)"
        )
        print(
            f"CPU time: {cpu:.0f} s (user and system), {cpu / wall:.2f} of {args.processes} cores busy; over "
            f"{args.processes} cores at least {cpu / args.processes:.0f} s ({cpu / args.processes / TARGET_S:.2f} x "
            f"the target) in any order of the tests"
        )
    table("workflow jobs by rule", by_rule, args.top)
    table("workflow jobs by test (or shared fixture)", by_test, args.top)
    floor = sum(jobs) / args.processes
    print(
        f"\nfloor: {len(jobs)} jobs, {sum(jobs):.0f} s of job processes = {floor:.0f} s on {args.processes} cores "
        f"({floor / TARGET_S:.2f} x the {TARGET_S} s target) before any test's own work; their start-ups alone, "
        f"{len(jobs)} x {startup:.2f} s, are {len(jobs) * startup:.0f} s of it ({len(jobs) * startup / sum(jobs):.0%})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
