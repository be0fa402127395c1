"""Whether a run is complete and verified, in words: the status ``plmfair run``, ``plmfair show`` and the
report's landing page print."""

from __future__ import annotations

from collections.abc import Collection
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


def table_differences(folder: Path, *, known: Collection[str] = ()) -> list[str]:
    """Each published table (``results/tables/<name>.{csv,md,tex,html}``) that is not what its inputs give: built
    again in memory from the run's result files with the record's configuration (the builder, options, caption
    and decimals its job had: :func:`plmfair.plan.targets.tables`) and compared byte for byte, so that a table
    edited with its seal and its record entry rewritten is still found; a record that cannot be read gives none
    (its own difference is said), and a file already ``known`` to differ from its record is not said twice."""
    # pandas and the tables' builders only when a run is verified
    from plmfair.io.parquet import read_parquet
    from plmfair.plan.targets import tables
    from plmfair.rendering.table_format import table_texts
    from plmfair.runs.record import read_run_record

    try:
        record = read_run_record(folder / plan.RUN_RECORD)
    except (PlmfairError, ValueError):
        return []
    published = {entry["path"] for entry in record["files"]}
    out = []
    for table in tables(record["config"]).values():
        shown = {
            suffix: path
            for suffix, path in table.files().items()
            if path in published and path not in known and (folder / path).is_file()
        }
        inputs = list(table.inputs.values())
        if not shown or not all((folder / path).is_file() for path in inputs):
            continue  # a missing file is said as missing
        frames = {role: read_parquet(folder / path) for role, path in table.inputs.items()}
        _, texts = table_texts(frames, **table.rendering())
        out += [
            f"{path} (not what {first_few(inputs)} give)"
            for suffix, path in shown.items()
            if (folder / path).read_bytes() != texts[suffix].encode("utf-8")
        ]
    return out


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
