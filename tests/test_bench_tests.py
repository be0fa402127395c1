"""benchmarks/bench_tests.py reads the Snakemake logs a test run leaves: each job's seconds and rule,
each log once however many copies of its run the tests made, and the test that ran it; its CPU time counts
the processes the suite's processes start (a Snakemake job is a grandchild's child)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_tests import children_cpu_seconds, job_seconds, logs_under, owner  # noqa: E402

LOG = """\
Building DAG of jobs...
[Sat Nov 28 18:26:38 2026]
localrule download:
    output: resources/downloads/a.csv
    jobid: 27
[Sat Nov 28 18:26:39 2026]
rule table:
    output: results/tables/x.csv
    jobid: 3
    wildcards: table=x
[Sat Nov 28 18:26:40 2026]
Finished jobid: 27 (Rule: download)
1 of 3 steps (33%) done
[Sat Nov 28 18:26:43 2026]
Finished jobid: 3 (Rule: table)
2 of 3 steps (67%) done
[Sat Nov 28 18:26:43 2026]
localrule all:
    jobid: 0
"""


def test_each_finished_job_its_rule_and_seconds_and_each_log_once(tmp_path):
    runs = {
        "popen-gw0/test_a_lost_result_0/copy/runs/h2": LOG,  # a copy of the fixture's run below: counted once
        "popen-gw0/two_runs0/runs/h2": LOG,
        "demo_run": LOG.replace("18:26:43", "18:26:50"),
    }
    for folder, text in runs.items():
        log = tmp_path / folder / ".snakemake" / "log" / f"{'demo' if folder == 'demo_run' else 'h2'}.snakemake.log"
        log.parent.mkdir(parents=True)
        log.write_text(text)
    logs = logs_under(tmp_path)
    assert sorted(owner(log, tmp_path) for log in logs) == ["demo_run", "two_runs0"]
    (h2,) = [log for log in logs if owner(log, tmp_path) == "two_runs0"]
    assert job_seconds(h2) == [("download", 2.0), ("table", 4.0)]  # 'all' never finished: not counted


def test_the_cpu_time_counts_what_the_suites_processes_start():
    """A child that starts a grandchild busy for 0.4 s of CPU: the grandchild's seconds are counted."""
    busy = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass"
    child = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {busy!r}], check=True)"
    before = children_cpu_seconds()
    subprocess.run([sys.executable, "-c", child], check=True)
    assert children_cpu_seconds() - before >= 0.4
