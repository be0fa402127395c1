"""The ``plmfair`` command: your own model on a study in one command, each run in a folder of its own,
its headline numbers at the end, and runs compared with what makes them differ.

    plmfair run [MODEL ...] [--studies crows_pairs,mozart,cloze] [--datasets fr,...] [--run NAME]
                [--configfile your.yaml ...] [--cores N] [--mirror DIR] [--dry-run] [--report]
                [-- SNAKEMAKE ARGS]
    plmfair show RUN
    plmfair verify RUN
    plmfair compare RUN RUN ... [--format md|csv|json] [--out FILE] [--alpha A] [--all-settings] [--other-models]
    plmfair diff OLD NEW [--moved OLD_PATH=NEW_PATH] [--ignore NAME]

``make run MODELS=... STUDIES=... DATASETS=... RUN=...`` calls ``plmfair run``.

A MODEL is ``[name=]folder-or-hub-id[:key=value...]`` (``mine=../m:uncased=true:revision=abc``); its
family is read off its ``config.json``. ``--studies`` keeps only those studies; ``--datasets`` names
the CrowS-Pairs data sets, ready-made cloze tests and cloze corpora to run. Each run is ``runs/<name>/`` (the name:
``--run``,
else the models' names, else your last config file's name, else the studies and data sets named;
with none of these, the checkout's own ``results/``) with its complete configuration in
``config.yaml``; :mod:`plmfair.runs.folders` says how names, models and later calls are kept true. A run
ends with its headline numbers (:func:`plmfair.runs.record.headline`) and where its record
(``results/run.json``) and report are; ``plmfair show`` prints them again with whether the run is
complete; ``plmfair verify`` re-hashes its files against its record (:mod:`plmfair.runs.integrity`);
``plmfair compare`` puts runs side by side (:mod:`plmfair.runs.comparison`); ``plmfair diff`` checks that two
folders hold the same numbers, value by value (:mod:`plmfair.diff`). Before Snakemake runs, results
changed outside the workflow are set aside so that they are rebuilt; Ctrl-C stops the run with nothing
lost, and the same command goes on from there.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path

from plmfair import diff, plan
from plmfair.cli_parser import EXAMPLES, build_parser  # noqa: F401 (EXAMPLES: the commands --help shows)
from plmfair.config import schema_default
from plmfair.errors import ConfigError, PlmfairError, first_few, program
from plmfair.io.atomic import write_text
from plmfair.logs import command_line_logging
from plmfair.plan.targets import REPORT, REPORT_STYLESHEET
from plmfair.runs import integrity
from plmfair.runs.console import Outcome, failure_line, run_snakemake
from plmfair.runs.folders import (
    ROOT,
    RunSetup,
    being_run_now,
    read_yaml,
    run_folder,
    run_lock,
    setup_run,
    snakemake_locked,
    unwritable,
    write_settings,
)
from plmfair.runs.status import VERIFIED, record_differences, run_status, table_differences

log = logging.getLogger("plmfair.cli")  # its name under `python -m plmfair.cli` too: plmfair's lines

DRY_RUN = ("-n", "--dry-run", "--dryrun")
# lost results rebuilt in a Snakemake call each, up to this many (more: one call for all of them)
REBUILD_ONE_BY_ONE = 10


def run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """``plmfair run``: the run's settings, then Snakemake on its folder; the exit status.

    One call's sequence from start to end under one lock and one scratch folder: the settings (setup_run,
    :func:`_configfiles`), the run folder, the preflight, the Snakemake calls (:func:`_calls`) and the failure
    line (:func:`_failed`).
    """
    # the preflight (the Hub client, spaCy's packages) only for `run`: `plmfair --help` and `show` stay quick
    from plmfair.preflight import main as preflight

    _executor_installed(args.snakemake_args)
    mirror = Path(args.mirror).resolve() if args.mirror else None
    setup = _setup(args, argv, mirror)
    dry_run = args.dry_run or any(word in DRY_RUN for word in args.snakemake_args)
    unlock = "--unlock" in args.snakemake_args  # only frees the run folder: no preflight, no headline
    acting = not (dry_run or unlock)  # the call runs jobs (and may rebuild, lose or report results)
    for note in setup.notes:
        log.info("%s", note)
    # a run folder this call makes is removed again when the call runs no job: a dry run, or a run refused
    # before Snakemake started (plmfair compare would meet a folder that is no run)
    fresh = setup.name is not None and not (Path(args.runs) / setup.name).exists()
    started = False
    workdir = run_folder(Path(args.runs), setup.name, resources=Path(args.resources)) if setup.name else ROOT
    try:
        if acting and not fresh:
            _writable(workdir)  # before the lock is taken in it
        with run_lock(workdir) if setup.name else nullcontext(), tempfile.TemporaryDirectory() as scratch:
            if setup.name and snakemake_locked(workdir) and not unlock:
                raise ConfigError(
                    f"run {setup.name} is locked by a Snakemake that is running, or was killed: wait for it, "
                    f"or if none runs: {program()} run --run {setup.name} --runs {args.runs} -- --unlock"
                )
            configfiles = _configfiles(setup, Path(scratch), dry_run=dry_run, argv=argv)
            rebuild = _to_rebuild(workdir, configfiles) if acting else []
            # a dry run checks what the real run would stop on too (models, data files, pipelines)
            where = ["--directory", str(workdir), *(["--mirror", str(mirror)] if mirror else [])]
            if not unlock and preflight([*map(str, configfiles), *where]) != 0:
                return 1
            snakemake = [
                str(Path(sys.executable).parent / "snakemake"),
                "--snakefile",
                str(ROOT / "Snakefile"),
                "--directory",
                str(workdir),
            ]
            # --configfile and --config take every word after them: they come last; a run's config.yaml keeps its
            # mirror, the checkout's own results are given theirs on each call
            unnamed_mirror = ["--config", f"mirror={mirror}"] if mirror and not setup.name else []
            config_args = ["--configfile", *map(str, configfiles), *unnamed_mirror]
            outcome = None

            def call(words: Sequence[str]) -> int:
                nonlocal outcome, started
                started = started or acting
                outcome = run_snakemake(words, workdir=workdir)
                return outcome.status

            try:
                status = _calls(call, snakemake, args, workdir=workdir, rebuild=rebuild, config_args=config_args)
            except KeyboardInterrupt:
                if snakemake_locked(workdir):
                    # this command holds the run and its Snakemake has stopped: the lock is that Snakemake's
                    subprocess.run([*snakemake, "--unlock", *config_args], capture_output=True, check=False)
                raise
    finally:
        if fresh and not started and workdir.is_dir():
            shutil.rmtree(workdir)
    if status != 0:
        print(f"plmfair: {_failed(status, outcome, workdir, name=setup.name, acting=acting)}", file=sys.stderr)
    if acting and status == 0:
        print(_ending(workdir))
    return status


def _setup(args: argparse.Namespace, argv: Sequence[str], mirror: Path | None) -> RunSetup:
    """The run's settings from the command line (:func:`plmfair.runs.folders.setup_run`)."""
    return setup_run(
        mirror=str(mirror) if mirror else None,
        models=args.models,
        studies=args.studies,
        datasets=args.datasets,
        robustness=args.robustness,
        run=args.run,
        configfiles=[Path(f).resolve() for f in args.configfile],
        runs=Path(args.runs),
        family=args.family,
        argv=argv,
    )


def _configfiles(setup: RunSetup, scratch: Path, *, dry_run: bool, argv: Sequence[str]) -> list[Path]:
    """The configuration files of the call: the run's own, rewritten with this call's settings when it changes
    them (a dry run writes them into ``scratch`` and leaves the run's own file as it was)."""
    if setup.config is None:
        return setup.configfiles
    target = scratch / "config.yaml" if dry_run else setup.configfiles[0]
    write_settings(target, setup.config, ["plmfair", "run", *argv])
    return [target]


def _calls(
    call: Callable[[Sequence[str]], int],
    snakemake: list[str],
    args: argparse.Namespace,
    *,
    workdir: Path,
    rebuild: Sequence[str],
    config_args: Sequence[str],
) -> int:
    """The Snakemake calls of a run, each through ``call``: the files to rebuild, then the run, then its
    report; the first status that is not 0 ends them."""
    status = 0
    # first those alone, each in a call of its own (a few) in the order of the stages: what reads a rebuilt
    # file that came out the same is then not redone (Snakemake compares it with the checksum it recorded), as
    # it would be in one call that also rebuilds a file further down
    cores = ["--cores", str(args.cores)]
    for targets in [[path] for path in rebuild] if len(rebuild) <= REBUILD_ONE_BY_ONE else [rebuild]:
        if status == 0 and not all((workdir / path).exists() for path in targets):
            status = call([*snakemake, *cores, *args.snakemake_args, *targets, *config_args])
    if status == 0:
        dry = ["--dry-run"] if args.dry_run else []
        status = call([*snakemake, *cores, *dry, *args.snakemake_args, *config_args])
    dry_run = args.dry_run or any(word in DRY_RUN for word in args.snakemake_args)
    if status == 0 and args.report and not dry_run:
        stylesheet = ["--report-stylesheet", str(ROOT / REPORT_STYLESHEET)]
        status = call([*snakemake, "--report", REPORT, *stylesheet, *config_args])
    return status


def _failed(status: int, outcome: Outcome | None, workdir: Path, *, name: str | None, acting: bool) -> str:
    """One line: what failed and, when the failure cost results of the last complete run, which and how to get
    them back."""
    said = failure_line(outcome, workdir) if outcome is not None else f"Snakemake exited with status {status}"
    lost = integrity.missing(workdir) if acting else []
    if lost:
        said += (
            f"; run {name or workdir}: {len(lost)} result(s) of its last complete run are missing after "
            f"this failure ({first_few(lost)}): fix what failed, then rebuild them: {_run_again(workdir)}"
        )
    return said


def _executor_installed(snakemake_args: Sequence[str]) -> None:
    """The executor the Snakemake arguments name (``--executor``, or a profile's ``executor:``) is installed:
    Snakemake's own word for a missing plugin is an argparse choice list that names no package."""
    words = list(snakemake_args)
    named = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("--executor", "-e")]
    for i, word in enumerate(words[:-1]):
        if word in ("--profile", "--workflow-profile"):
            profile = Path(words[i + 1]) / "config.yaml"
            if profile.is_file():
                named.append(str(read_yaml(profile).get("executor") or ""))
    for executor in filter(None, named):
        module = f"snakemake_executor_plugin_{executor.replace('-', '_')}"
        if executor not in ("local", "dryrun", "touch") and importlib.util.find_spec(module) is None:
            plugin = f"snakemake-executor-plugin-{executor}"
            install = "make setup-cluster" if executor == "slurm" else f"pip install {plugin}"
            raise ConfigError(f"the {executor} executor is not installed: {install}; nothing was run")


def _writable(workdir: Path) -> None:
    """The run folder, Snakemake's state in it and every folder and file of the run's results can be written, as
    Snakemake asks it (``os.access``): it would
    stop at the first output it cannot replace with a ProtectedOutputException of many lines; and neither the
    results folder nor a folder in it is a symbolic link (its jobs would write outside the run)."""
    results = workdir / "results"
    for path in [results, *results.iterdir()] if results.is_dir() else [results]:
        if path.is_symlink() and (path == results or path.is_dir()):
            raise ConfigError(
                f"{path} is a symbolic link to {os.readlink(path)}: a run writes its results inside its own folder "
                f"only; replace the link with a folder (rm {path}) or run in another folder (--run NAME); "
                f"nothing was run"
            )
    # the run folder itself holds Snakemake's state (.snakemake) and the run's config.yaml
    state = [p for p in (workdir, workdir / ".snakemake") if p.is_dir()]
    for path in [*state, results, *results.rglob("*")] if results.is_dir() else state:
        if not path.is_symlink() and not os.access(path, os.W_OK):
            raise unwritable(path, *((results, "results") if results in (path, *path.parents) else (workdir, "folder")))


def _to_rebuild(workdir: Path, configfiles: Sequence[Path]) -> list[str]:
    """The published files of a run that has run jobs before (:func:`plmfair.plan.published_files`), and its
    links to the downloads, to rebuild before anything else: those changed outside the workflow since their
    job wrote them, moved aside (kept) first, and those that are gone. Rebuilt alone, a file that comes out
    the same reruns nothing that reads it."""
    # the configuration's schema and defaults (jsonschema, Snakemake's merge) only when a run starts
    from plmfair.config import load_config

    for found, what, then in (
        (integrity.altered, "result(s) changed since the workflow wrote them", "moved to {}, to be rebuilt"),
        (
            integrity.retired,
            "result(s) under the names of an earlier plmfair",
            "moved to {}; this run makes them under their new names",
        ),
        (
            integrity.changed_models,
            "model folder(s) changed since their manifest was written, whatever their times say",
            "manifest moved to {}; the model is rescored",
        ),
    ):
        files = found(workdir)
        if files:
            where = integrity.set_aside(workdir, files)
            log.info("%s", f"{len(files)} {what} ({first_few(files)}): {then.format(where)}")
    if not integrity.has_run(workdir):
        return []  # a new run: everything is built in one go
    try:
        config = load_config(list(configfiles))
    except PlmfairError:
        return []  # Snakemake names the configuration's fault itself
    # the run's links to its downloads first (the record hashes what they hold), then its results
    inputs = plan.run_record_inputs(config)
    wanted = [*inputs["data"], *inputs["published"]]
    return [path for path in wanted if not (workdir / path).exists()]  # in the stages' order


def _run_again(folder: Path) -> str | None:
    """The command that brings a run folder's results up to date: ``plmfair run`` for a run plmfair
    started or the checkout's own results, ``make demo`` for the demo; None for another folder."""
    folder = folder.resolve()
    if folder == ROOT:
        return f"{program()} run"
    if folder == ROOT / ".test":
        return "make demo"
    if _started_by_plmfair(folder):
        return shlex.join([program(), "run", "--run", folder.name, "--runs", str(folder.parent)])
    return None


def _report_command(folder: Path) -> str | None:
    folder = folder.resolve()
    if folder == ROOT:
        return "make report"
    if folder == ROOT / ".test":
        return "make demo-report"
    again = _run_again(folder)
    return f"{again} --report" if again else None


def _started_by_plmfair(folder: Path) -> bool:
    """A run folder ``plmfair run`` made: its config.yaml says so in its first line."""
    try:
        with open(folder / "config.yaml", encoding="utf-8") as fh:
            return fh.readline().startswith("# written by `plmfair run")
    except (OSError, UnicodeDecodeError):
        return False


def locate_run(name: str, *, runs: str) -> Path:
    """The folder of a run given by its name (``runs/<name>``) or folder: one with a record
    (``results/run.json``) or one ``plmfair run`` started; anything else is refused with the runs there
    are and a command that shows one."""
    candidates = [Path(name), Path(runs) / name]
    for folder in candidates:
        try:
            if (folder / "results" / "run.json").is_file() or _started_by_plmfair(folder):
                return folder
        except OSError:  # a name too long for the file system is no run
            continue
    known = sorted(p.name for p in Path(runs).glob("*/") if _started_by_plmfair(p)) if Path(runs).is_dir() else []
    shown = name if len(name) <= 60 else "..." + name[-57:]  # the end of a long path names the folder
    hint = (
        f"e.g. {shlex.join([program(), 'show', known[0], '--runs', runs])}"
        if known
        else f"start one with: {program()} run MODEL --run NAME"
    )
    raise ConfigError(
        f"{shown!r} is not a run: no record (results/run.json) and no config.yaml of plmfair run there or "
        f"in {runs}; the runs in {runs}: {', '.join(known) or 'none yet'}; {hint}"
    )


def _ending(workdir: Path) -> str:
    """The headline numbers of a finished run, whether it is complete, and where its record and report are;
    a record that is not what its job wrote, or whose numbers its files do not give, is not shown."""
    # pandas and the tables (through the record) only when a run's headline is shown
    from plmfair.runs.record import headline, read_run_record

    record_path = workdir / plan.RUN_RECORD
    report = workdir / REPORT
    status, trusted = run_status(workdir)
    if not record_path.is_file():
        text = "(no run record was written)\n"
    elif trusted:
        text = headline(read_run_record(record_path))
    else:
        text = "(the record's numbers are not shown: it cannot be verified)\n"
    command = _report_command(workdir)
    rebuild = f": {command}" if command else ""
    if not report.is_file():
        where = f" (not written{rebuild})"
    elif record_path.is_file() and report.stat().st_mtime < record_path.stat().st_mtime:
        where = f" (OUT OF DATE: made before the run's record, it lacks its latest results; rebuild it{rebuild})"
    else:
        where = ""
    being_run = "\nbeing run now: this is its last complete run" if being_run_now(workdir) else ""
    return f"\n{text}\n{status}{being_run}\nrecord: {record_path}\nreport: {report}{where}"


def _incomplete(folder: Path, what: str) -> ConfigError:
    """A run without a record: being run now, or the command that finishes it."""
    if being_run_now(folder):
        return ConfigError(f"run {folder.name} is being run now and has no record yet: {what} when it ends")
    again = _run_again(folder)
    return ConfigError(
        f"run {folder.name} is incomplete: it has no record (results/run.json), so its last run did not finish"
        + (f"; finish it: {again}" if again else "")
    )


def show(run: str, *, runs: str) -> int:
    """Print a finished run's headline numbers again."""
    folder = locate_run(run, runs=runs)
    if not (folder / "results" / "run.json").is_file():
        raise _incomplete(folder, "show it")
    print(_ending(folder))
    return 0


def verify(run: str, *, runs: str, models: bool = True) -> int:
    """Re-hash a run's files against its record and its seals; name every file changed, missing, not
    produced by its configuration or without a readable seal; check the record against its own seal and
    its numbers against the files they summarise; and, unless ``models`` is false, re-hash the model
    folders it scored against their manifests (the time it took printed)."""
    folder = locate_run(run, runs=runs)
    if not (folder / plan.RUN_RECORD).is_file():
        raise _incomplete(folder, "verify it")
    check = integrity.verify(folder)
    again = _run_again(folder)
    differences = record_differences(folder)
    tables = table_differences(folder, known=check.changed)
    for kind, files in (
        ("changed", check.changed),
        ("missing", check.missing),
        ("not produced by the record's configuration", check.unexpected),
        ("seal missing or broken", check.unsealed),
        ("record not as its files give it", differences),
        ("table not as its results give it", tables),
    ):
        for path in files:
            print(f"{kind}: {path}")
    if not check.record_sealed:
        print(f"record changed since its job wrote it: {plan.RUN_RECORD}")
    model_check = integrity.verify_models(folder) if models else None
    if model_check is not None:
        for model, files in model_check.changed.items():
            print(f"model changed: {model}: {first_few(files)}")
        print(
            f"models: {model_check.checked} folder(s), {model_check.bytes / 1e9:.2f} GB re-hashed in "
            f"{model_check.seconds:.1f} s (--no-models skips this)"
        )
    changed_models = len(model_check.changed) if model_check is not None else 0
    if being_run_now(folder):
        print(f"run {folder.name} is being run now: this checks its last complete run")
    if check.ok and not changed_models and not differences and not tables:
        print(f"run {folder.name}: verified: the {check.checked} files its record lists are as it lists them")
        return 0
    fix = f"; rebuild what differs: {again}" if again else ""
    record = "" if check.record_sealed and not differences else "; its record is not what its job wrote"
    print(
        f"run {folder.name}: NOT verified: {len(check.changed)} changed, {len(check.missing)} missing, "
        f"{len(check.unexpected)} not produced by its configuration, {len(check.unsealed)} without a readable "
        f"seal, of the {check.checked} files its record lists; {len(tables)} table(s) not as their results give "
        f"them; {changed_models} model folder(s) changed since they were scored{record}{fix}",
        file=sys.stderr,
    )
    return 1


def finished_run(name: str, *, runs: str) -> tuple[Path, str]:
    """The folder of a finished, verified run (its record, every file the record lists there, each as its record
    and seals say: :func:`plmfair.runs.status.run_status`) and its status, else a :class:`ConfigError` that says
    why it is not one and what to do."""
    folder = locate_run(name, runs=runs)
    again = _run_again(folder)
    if not (folder / "results" / "run.json").is_file():
        raise ConfigError(
            f"run {folder.name} is incomplete: it has no record (results/run.json) to compare"
            + (f"; finish it: {again}" if again else "")
        )
    lost = integrity.missing(folder)
    if lost:
        raise ConfigError(
            f"run {folder.name} is incomplete: {len(lost)} of the files its record lists are missing "
            f"({first_few(lost)}), so it is not compared" + (f"; rebuild them: {again}" if again else "")
        )
    status, _ = run_status(folder)
    if not status.startswith(VERIFIED):  # a number its files or seals contradict is never printed
        raise ConfigError(f"run {folder.name} is not compared: {status.removeprefix('status: ')}")
    return folder, status


def compare(
    folders: Sequence[str],
    *,
    fmt: str,
    out: str | None,
    alpha: float | None = None,
    all_settings: bool = False,
    other_models: bool = False,
) -> int:
    """The finished runs among ``folders`` side by side (:func:`plmfair.runs.comparison.compare_runs`); every
    other folder is named on standard error with why it is skipped."""
    # pandas and scipy (through run_compare) only for `compare`
    from plmfair.runs.comparison import compare_runs, render

    located = []
    for name in folders:
        try:
            located.append(finished_run(name, runs=str(ROOT / "runs")))
        except ConfigError as exc:  # a dry run's or a refused run's folder, a run still going: named, not compared
            print(f"plmfair: skipped: {exc}", file=sys.stderr)
    if not located:
        raise ConfigError(
            f"no finished run to compare among the {len(folders)} folder(s) given (each skipped above)"
            if folders
            else f"no run to compare: give run folders (runs/<name>), or make one: {program()} run MODEL --run NAME"
        )
    if alpha is None:
        alpha = schema_default("analysis.alpha")
    tables = compare_runs(
        [folder for folder, _ in located],
        alpha=alpha,
        all_settings=all_settings,
        other_models=other_models,
        statuses=dict(located),
    )
    text = render(tables, fmt)
    if out:
        write_text(text, out)
    print(text, end="")
    return 0


# one example a command, printed by its --help (the first line of each also under plmfair --help)
def main(argv: Sequence[str] | None = None) -> int:
    """The ``plmfair`` command: its words up to ``--``, the rest Snakemake's; the exit status (1 with one line
    for a refused call, 130 after Ctrl-C)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []  # more Snakemake arguments
    argv = argv[: argv.index("--")] if "--" in argv else argv
    args = build_parser().parse_args(argv)
    with command_line_logging():
        return _command(args, argv, extra)


def _command(args: argparse.Namespace, argv: list[str], extra: list[str]) -> int:
    """The command ``args`` parsed from ``argv``, with ``extra`` for Snakemake; its exit status."""
    try:
        if args.command == "diff":
            return diff.run(args)
        if args.command == "compare":
            return compare(
                args.folders,
                fmt=args.format,
                out=args.out,
                alpha=args.alpha,
                all_settings=args.all_settings,
                other_models=args.other_models,
            )
        if args.command == "show":
            return show(args.name, runs=args.runs)
        if args.command == "verify":
            return verify(args.name, runs=args.runs, models=args.models)
        args.snakemake_args = extra
        if "=" in args.resources:
            raise ConfigError(
                f"--resources {args.resources}: --resources is the folder of the downloads every run shares "
                f"(default resources/), not a Snakemake resource; a scoring job's token budget is set with "
                f"-- --set-resources crows_pairs_score:token_budget=N (or cloze_score:, tsne_vectors:)"
            )
        return run(args, argv[1:])
    except PlmfairError as exc:
        print(f"plmfair: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            f"plmfair: interrupted: the finished jobs' results are kept and the stopped ones left no output, so "
            f"nothing is lost; rerun the same command: {shlex.join(['plmfair', *argv])}",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
