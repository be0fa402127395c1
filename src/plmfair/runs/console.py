"""What a ``plmfair run`` prints while Snakemake works: its progress as it comes, and when it fails, one line.

Snakemake's account of a failure (``Error in rule``, ``RuleException``, ``CalledProcessError``, the
``WorkflowError`` that ends it: about fifteen lines around the job's own) is kept in a log of the run,
``.plmfair/logs/snakemake-<time>.log``, and not printed: from its first line on, the terminal gets nothing
more from Snakemake, and the run ends with plmfair's line (:func:`failure_line`): the failed job, what its
log says (the job's own one line), where that log and Snakemake's account are. A Snakemake that stops
before any job (a setting it refuses, such as ``--set-resources rule:token_budget=-1``) ends the same way,
with its own reason. Ctrl-C: nothing from Snakemake after it, the caller says the rest.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from plmfair.io.atomic import storage_error

LOGS = Path(".plmfair") / "logs"
# the first line of Snakemake's account of a failure
FAILURE = re.compile(
    r"^(Error in rule \S+:|RuleException:|WorkflowError:|Exiting because a job execution failed|"
    r"Shutting down, this might take some time|Traceback \(most recent call last\)|[A-Za-z]+(Error|Exception)"
    r"( in [^:]+)?:\s*$)"
)
FAILED_JOB = re.compile(r"^Error in rule (\S+):")
STARTED_JOB = re.compile(r"^(local)?rule (\S+):$")
JOB_FIELD = re.compile(r"^\s+(jobid|log|wildcards): (.*?)(\s+\(check log file\(s\) for error details\))?$")
# a failed job Snakemake tries again (its rule's retries): its account is not the run's failure
RESTARTED = re.compile(r"^Trying to restart job")
HEADER = re.compile(r"^[A-Za-z]+(Error|Exception)( in [^:]+)?:\s*$")
# a job's log line from plmfair.logs.configure_logging: "<date> <time> ERROR <logger>: <message>"
LOGGED_ERROR = re.compile(r"^\S+ \S+ ERROR [\w.]+: (.*)$")


@dataclass
class Outcome:
    """A Snakemake call: its exit status, the jobs that failed (rule, wildcards, log), the last
    error Snakemake gave in its own words, and where its account was kept (None: it could not be)."""

    status: int
    failed: list[dict] = field(default_factory=list)
    reason: str = ""
    account: Path | None = None


def _account_file(workdir: Path) -> tuple[Path | None, TextIO | None]:
    """The log Snakemake's output is kept in (None when it cannot be written: a full disk, say)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    path = workdir / LOGS / f"snakemake-{stamp}.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return path, open(path, "w", encoding="utf-8")  # noqa: SIM115 - written line by line, closed below
    except OSError:
        return None, None


def _keep(fh: TextIO | None, line: str) -> TextIO | None:
    """Write a line to the account; a write the disk refuses closes it (the run still says its line)."""
    if fh is None:
        return None
    try:
        fh.write(line)
        fh.flush()
        return fh
    except OSError:
        fh.close()
        return None


def run_snakemake(cmd: Sequence[str], *, workdir: Path) -> Outcome:
    """Run Snakemake in a process group of its own (Ctrl-C reaches this command alone: it asks Snakemake
    to stop, which ends its jobs and removes their unfinished outputs), its progress passed to stderr until
    it reports a failure; every line kept in the account (:data:`LOGS`)."""
    account, fh = _account_file(workdir)
    proc = subprocess.Popen(
        list(cmd), start_new_session=True, stderr=subprocess.PIPE, text=True, errors="replace", bufsize=1
    )
    outcome = Outcome(status=0, account=account)
    failing = interrupted = False
    lines: list[str] = []
    stream = proc.stderr
    assert stream is not None
    while True:
        try:
            line = stream.readline()
        except KeyboardInterrupt:
            if not interrupted:
                proc.send_signal(signal.SIGINT)
            interrupted = True  # a second Ctrl-C: Snakemake is already stopping its jobs
            continue
        if not line:
            break
        fh = _keep(fh, line)
        lines.append(line.rstrip("\n"))
        if RESTARTED.match(line):
            failing = False  # the job runs again: what follows is progress
            continue
        failing = failing or bool(FAILURE.match(line))
        if not failing and not interrupted:
            sys.stderr.write(line)
            sys.stderr.flush()
    while True:
        try:
            outcome.status = proc.wait()
            break
        except KeyboardInterrupt:
            continue
    if fh is not None:
        fh.close()
    if interrupted:
        raise KeyboardInterrupt
    if outcome.status != 0:
        outcome.failed, outcome.reason = _read_account(lines)
    return outcome


def _blocks(lines: list[str], start: re.Pattern) -> list[dict]:
    """Each block of Snakemake's output that ``start`` opens (its rule in group 'rule' or the last group),
    with its indented fields (jobid, log, wildcards)."""
    blocks, block = [], None
    for line in lines:
        opened = start.match(line)
        if opened:
            block = {"rule": opened.groups()[-1], "jobid": "", "wildcards": "", "log": ""}
            blocks.append(block)
            continue
        found = JOB_FIELD.match(line)
        if block is not None and found:
            block[found.group(1)] = found.group(2).strip()
        elif not line.startswith(" "):
            block = None
    return blocks


def _read_account(lines: list[str]) -> tuple[list[dict], str]:
    """The jobs that failed for good (rule, wildcards, log; a job Snakemake restarted and that then ran is
    not one) and Snakemake's last error in its words, from its output."""
    wildcards = {b["jobid"]: b["wildcards"] for b in _blocks(lines, STARTED_JOB)}
    errors = iter(_blocks(lines, FAILED_JOB))
    failed: dict[str, dict] = {}
    last = None
    for line in lines:
        if FAILED_JOB.match(line):
            last = next(errors)
            last["wildcards"] = last["wildcards"] or wildcards.get(last["jobid"], "")
            failed[last["jobid"] or last["rule"]] = last
        elif RESTARTED.match(line) and last is not None:
            failed.pop(last["jobid"] or last["rule"], None)  # tried again: its next account decides
            last = None
    reason = ""
    headers = [i for i, line in enumerate(lines) if HEADER.match(line)]
    if headers:
        said = [line.strip() for line in lines[headers[-1] + 1 :] if line.strip()]
        reason = " ".join(said)[:400]
    return list(failed.values()), reason


def _job_said(log: str, workdir: Path) -> str:
    """The job's own last error line in its log ('' when it has none: it never ran, or its disk was full)."""
    path = workdir / log.split(",")[0].strip() if log else None
    try:
        text = path.read_text(encoding="utf-8", errors="replace") if path else ""
    except OSError:
        return ""
    said = [m.group(1) for m in map(LOGGED_ERROR.match, text.splitlines()) if m]
    if said and said[-1] == "Uncaught exception":
        last = [line for line in text.splitlines() if line.strip()]
        return f"uncaught exception: {last[-1].strip()}" if last else ""
    return said[-1] if said else ""


def failure_line(outcome: Outcome, workdir: Path) -> str:
    """The one line a failed Snakemake call ends in: the failed job and what its log says (or, when it
    says nothing, whether the disk is full), else Snakemake's own reason; where to read more."""
    where = f"Snakemake's account: {outcome.account}" if outcome.account else "Snakemake's account could not be kept"
    if outcome.failed:
        job = outcome.failed[0]
        said = _job_said(job["log"], workdir)
        if not said:
            full = storage_error(OSError(28, "No space left on device"), workdir / (job["log"] or "results"))
            said = (
                str(full)
                if shutil.disk_usage(workdir).free < 1 << 20 and full
                else "the job wrote no error to its log (it may not have started: see Snakemake's account)"
            )
            _note_in_log(job["log"], workdir, said)
        wildcards = f" ({job['wildcards']})" if job["wildcards"] else ""
        more = f"; {len(outcome.failed) - 1} more job(s) failed" if len(outcome.failed) > 1 else ""
        log = f"; its log: {job['log']}" if job["log"] else ""
        return f"job {job['rule']}{wildcards} failed: {said}{log}{more}; {where}"
    reason = outcome.reason or f"it exited with status {outcome.status}"
    return f"Snakemake stopped: {reason}; {where}"


def _note_in_log(log: str, workdir: Path, said: str) -> None:
    """Put the run's diagnosis in a job's log that holds none (best effort: the disk may still be full)."""
    if not log:
        return
    try:
        with open(workdir / log.split(",")[0].strip(), "a", encoding="utf-8") as fh:
            fh.write(f"plmfair: {said}\n")
    except OSError:
        pass
