"""Whether a run is complete and verified, in words: the status ``plmfair run``, ``plmfair show`` and the
report's landing page print."""

from __future__ import annotations

from pathlib import Path

from plmfair import plan
from plmfair.errors import PlmfairError, first_few
from plmfair.runs import integrity

# how the status of a run that is complete and verified begins
VERIFIED = "status: complete, verified"


def record_differences(folder: Path) -> list[str]:
    """The record's numbers its result files do not give (:func:`plmfair.runs.record.rederived_differences`);
    a record that cannot be read is one difference."""
    # pandas and the tables (through the record) only when a record is checked
    from plmfair.runs.record import read_run_record, rederived_differences

    try:
        record = read_run_record(folder / plan.RUN_RECORD)
    except (PlmfairError, ValueError) as exc:
        return [f"the record cannot be read ({str(exc).splitlines()[0][:200]})"]
    return rederived_differences(folder, record)


def run_status(folder: Path) -> tuple[str, bool]:
    """Whether the run is complete and its files and record those its record lists and its seals vouch for
    (:func:`plmfair.runs.integrity.verify`, the record derived again from its files), in words, and whether
    its record's numbers can be shown."""
    check = integrity.verify(folder)
    if not check.record:
        return "status: INCOMPLETE: no record (results/run.json)", False
    if check.missing:
        return (
            f"status: INCOMPLETE: {len(check.missing)} of the {check.checked} files its record lists are missing",
            True,
        )
    differences = record_differences(folder)
    problems = []
    if not check.record_sealed:
        problems.append("its record (results/run.json) is not what its job wrote")
    if differences:
        problems.append(f"{len(differences)} number(s) of the record are not its files' ({differences[0]})")
    if check.changed or check.unexpected:
        problems.append(
            f"{len(check.changed)} file(s) changed since the record, {len(check.unexpected)} not produced by its "
            "configuration"
        )
    if check.unsealed:
        problems.append(f"{len(check.unsealed)} file(s) without a readable seal ({first_few(check.unsealed)})")
    # the record's numbers are shown when they are what its job wrote and what its files give
    trusted = check.record_sealed and not differences
    if problems:
        return f"status: UNVERIFIED: {'; '.join(problems)} (plmfair verify {folder})", trusted
    return f"{VERIFIED} ({check.checked} files as its record lists them)", True
