"""Where `make test`'s time goes: the suite run as `make test` runs it (pytest-xdist, TEST_PROCESSES
processes), then every Snakemake job its end-to-end tests ran, read from the Snakemake logs they left.

Printed: the suite's wall time against the 6-minute target; the workflow jobs the tests ran, by rule and
by the test (or fixture) that ran them, with their seconds; and the floor those jobs alone set, their
seconds over the cores, against the same target. A job is a process of its own (Python, its imports,
its work), so the floor falls only with fewer or cheaper jobs, not with another order of the tests.

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
    wall = None
    if args.read:
        basetemp = args.read
    else:
        basetemp = args.basetemp or Path(tempfile.mkdtemp(prefix="bench_tests_")) / "basetemp"
        command = [sys.executable, "-m", "pytest", "-q", "-n", str(args.processes), "--dist", "loadfile"]
        command += ["--no-loadscope-reorder", "-p", "no:cacheprovider", f"--basetemp={basetemp}"]
        start = time.perf_counter()
        done = subprocess.run(command, cwd=REPO)
        wall = time.perf_counter() - start
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
    if wall is not None:
        print(
            f"wall time: {wall:.0f} s on {args.processes} processes ({wall / TARGET_S:.2f} x the {TARGET_S} s target)"
        )
    table("workflow jobs by rule", by_rule, args.top)
    table("workflow jobs by test (or shared fixture)", by_test, args.top)
    floor = sum(jobs) / args.processes
    print(
        f"\nfloor: {len(jobs)} jobs, {sum(jobs):.0f} s of job processes = {floor:.0f} s on {args.processes} cores "
        f"({floor / TARGET_S:.2f} x the {TARGET_S} s target) before any test's own work"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
