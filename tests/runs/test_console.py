"""plmfair.runs.console: Snakemake's account of a failure read back into plmfair's one line."""

from __future__ import annotations

import sys

from plmfair.runs.console import Outcome, _read_account, failure_line, run_snakemake

# Snakemake 9's output for a job with retries that failed each time (abridged from a real run)
ACCOUNT = """\
[Fri Nov 27 19:08:45 2026]
localrule download:
    output: results/downloads/crows_pairs_demo_fr.csv
    log: results/logs/download/crows_pairs_demo_fr.csv.log
    jobid: 5
    wildcards: file=crows_pairs_demo_fr.csv
    resources: tmpdir=/tmp, runtime=30, mem_mb=500
Error in rule download:
    message: None
    jobid: 5
    output: results/downloads/crows_pairs_demo_fr.csv
    log: results/logs/download/crows_pairs_demo_fr.csv.log (check log file(s) for error details)
Trying to restart job 5.
Select jobs to execute...
[Fri Nov 27 19:08:46 2026]
localrule download:
    output: results/downloads/crows_pairs_demo_fr.csv
    log: results/logs/download/crows_pairs_demo_fr.csv.log
    jobid: 5
    wildcards: file=crows_pairs_demo_fr.csv
Error in rule download:
    message: None
    jobid: 5
    output: results/downloads/crows_pairs_demo_fr.csv
    log: results/logs/download/crows_pairs_demo_fr.csv.log (check log file(s) for error details)
Shutting down, this might take some time.
Exiting because a job execution failed. Look above for error messages
WorkflowError:
At least one job did not complete successfully.
""".splitlines()


def test_the_failed_job_its_wildcards_and_log_are_read_from_the_account(tmp_path):
    failed, reason = _read_account(ACCOUNT)
    assert failed == [
        {
            "rule": "download",
            "jobid": "5",
            "wildcards": "file=crows_pairs_demo_fr.csv",
            "log": "results/logs/download/crows_pairs_demo_fr.csv.log",
        }
    ]
    assert reason == "At least one job did not complete successfully."
    log = tmp_path / "results/logs/download/crows_pairs_demo_fr.csv.log"
    log.parent.mkdir(parents=True)
    log.write_text(
        "2026-11-27 19:08:46,001 INFO plmfair: copying\n2026-11-27 19:08:46,002 ERROR plmfair: checksum mismatch\n"
    )
    line = failure_line(Outcome(1, failed, reason, tmp_path / "account.log"), tmp_path)
    assert line == (
        "job download (file=crows_pairs_demo_fr.csv) failed: checksum mismatch; its log: "
        f"results/logs/download/crows_pairs_demo_fr.csv.log; Snakemake's account: {tmp_path / 'account.log'}"
    )


def test_a_job_restarted_and_then_done_is_no_failure_and_a_refused_setting_is_snakemakes_reason(tmp_path):
    retried = ACCOUNT[:13] + ["[Fri Nov 27 19:08:47 2026]", "Finished jobid: 5 (Rule: download)"]
    assert _read_account(retried)[0] == []
    failed, reason = _read_account(["WorkflowError:", "Resource 'token_budget' was given value '-1', which is not ok"])
    assert failed == [] and failure_line(Outcome(1, failed, reason, None), tmp_path) == (
        "Snakemake stopped: Resource 'token_budget' was given value '-1', which is not ok; Snakemake's account "
        "could not be kept"
    )


def test_progress_passes_through_and_the_account_is_kept_but_not_printed(tmp_path, capfd):
    script = (
        "import sys; print('Building DAG of jobs...', file=sys.stderr); "
        "print('Error in rule x:', file=sys.stderr); print('    jobid: 1', file=sys.stderr); "
        "print('WorkflowError:', file=sys.stderr); print('At least one job failed', file=sys.stderr); sys.exit(1)"
    )
    outcome = run_snakemake([sys.executable, "-c", script], workdir=tmp_path)
    err = capfd.readouterr().err
    assert outcome.status == 1 and err == "Building DAG of jobs...\n"
    assert "WorkflowError:" in outcome.account.read_text() and outcome.failed[0]["rule"] == "x"


def test_a_job_that_logged_nothing_gets_the_runs_diagnosis_in_its_log(tmp_path):
    """A job whose log is empty (it never started, or its disk was full): the run's line says so, and the
    same line is put in the job's log, which Snakemake's message points to."""
    log = tmp_path / "results/logs/x.log"
    log.parent.mkdir(parents=True)
    log.write_text("")
    outcome = Outcome(1, [{"rule": "x", "jobid": "1", "wildcards": "", "log": "results/logs/x.log"}], "", None)
    line = failure_line(outcome, tmp_path)
    assert line.startswith("job x failed: the job wrote no error to its log")
    assert log.read_text().startswith("plmfair: the job wrote no error to its log")
