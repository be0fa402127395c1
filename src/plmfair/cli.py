"""The ``plmfair`` command: your own model on a study in one command, each run in a folder of its own,
its headline numbers at the end, and runs compared with what makes them differ.

    plmfair run [MODEL ...] [--studies crows_pairs,mozart,cloze] [--datasets fr,...] [--run NAME]
                [--configfile your.yaml ...] [--cores N] [--mirror DIR] [--dry-run] [--report]
                [-- SNAKEMAKE ARGS]
    plmfair show RUN
    plmfair compare RUN RUN ... [--format md|csv|json] [--out FILE]

``make run MODELS=... STUDIES=... DATASETS=... RUN=...`` calls ``plmfair run``.

A MODEL is ``[name=]folder-or-hub-id[:key=value...]`` (``mine=../m:uncased=true:revision=abc``); its
family is read off its ``config.json``. ``--studies`` keeps only those studies; ``--datasets`` names
the CrowS-Pairs data sets, ready-made cloze tests and cloze corpora to run. Each run is ``runs/<name>/`` (the name: ``--run``,
else the models' names, else your last config file's name, else the studies and data sets named;
with none of these, the checkout's own ``results/``) with its complete configuration in
``config.yaml``; :mod:`plmfair.runs` says how names, models and later calls are kept true. A run
ends with its headline numbers (:func:`plmfair.record.headline`) and where its record
(``results/run.json``) and report are; ``plmfair show`` prints them again; ``plmfair compare`` puts
runs side by side (:mod:`plmfair.run_compare`).
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path

from plmfair import plan
from plmfair.atomic import write_text
from plmfair.errors import ConfigError, PlmfairError
from plmfair.runs import (
    FLAGS,
    ROOT,
    run_folder,
    run_lock,
    setup_run,
    snakemake_locked,
    write_settings,
)
from plmfair.scoring import FAMILIES

log = logging.getLogger(__name__)

DRY_RUN = ("-n", "--dry-run", "--dryrun")


def run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    # the preflight (the Hub client, spaCy's packages) only for `run`: `plmfair --help` and `show` stay quick
    from plmfair.preflight import main as preflight

    setup = setup_run(models=args.models, studies=args.studies, datasets=args.datasets, run=args.run,
                      configfiles=[Path(f).resolve() for f in args.configfile], runs=Path(args.runs),
                      family=args.family, argv=argv)
    dry_run = args.dry_run or any(word in DRY_RUN for word in args.snakemake_args)
    unlock = "--unlock" in args.snakemake_args  # only frees the run folder: no preflight, no headline
    for note in setup.notes:
        log.info("%s", note)
    workdir = run_folder(Path(args.runs), setup.name, resources=Path(args.resources)) if setup.name else ROOT
    with run_lock(workdir) if setup.name else nullcontext(), tempfile.TemporaryDirectory() as scratch:
        if setup.name and snakemake_locked(workdir) and not unlock:
            raise ConfigError(f"run {setup.name} is locked by a Snakemake that is running, or was killed: wait for it, "
                              f"or if none runs: plmfair run --run {setup.name} --runs {args.runs} -- --unlock")
        configfiles = setup.configfiles
        if setup.config is not None:
            # a dry run shows the jobs of the new settings and leaves the run's own file as it was
            target = Path(scratch) / "config.yaml" if dry_run else setup.configfiles[0]
            write_settings(target, setup.config, ["plmfair", "run", *argv])
            configfiles = [target]
        mirror = Path(args.mirror).resolve() if args.mirror else None
        if not (dry_run or unlock) and preflight([*map(str, configfiles), "--directory", str(workdir),
                                      *(["--mirror", str(mirror)] if mirror else [])]) != 0:
            return 1
        snakemake = [str(Path(sys.executable).parent / "snakemake"), "--snakefile", str(ROOT / "Snakefile"),
                     "--directory", str(workdir)]
        # --configfile and --config take every word after them: they come last
        config_args = ["--configfile", *map(str, configfiles),
                       *(["--config", f"mirror={mirror}"] if mirror else [])]
        status = subprocess.run([*snakemake, "--cores", str(args.cores), *(["--dry-run"] if args.dry_run else []),
                                 *args.snakemake_args, *config_args], check=False).returncode
        if status == 0 and args.report and not dry_run:
            status = subprocess.run([*snakemake, "--report", "results/report.html", *config_args],
                                    check=False).returncode
    if status == 0 and not (dry_run or unlock):
        print(_ending(workdir, setup.name, runs=args.runs))
    return status


def _ending(workdir: Path, name: str | None, *, runs: str) -> str:
    """The headline numbers of a finished run and where its record and report are."""
    # pandas and the tables (through the record) only when a run's headline is shown
    from plmfair.record import headline, read_run_record

    record_path = workdir / "results" / "run.json"
    report = workdir / "results" / "report.html"
    again = f"plmfair run --run {name} --runs {runs} --report" if name else "make report"
    text = headline(read_run_record(record_path)) if record_path.is_file() else "(no run record was written)\n"
    return (f"\n{text}\nrecord: {record_path}\nreport: {report}" + ("" if report.is_file() else f" ({again})"))


def show(run: str, *, runs: str) -> int:
    """Print a finished run's headline numbers again."""
    folder = Path(run) if (Path(run) / "results").is_dir() else Path(runs) / run
    if not (folder / "results").is_dir():
        known = sorted(p.name for p in Path(runs).glob("*/") if (p / "results").is_dir())
        raise ConfigError(f"run {run!r}: no {folder / 'results'}; the runs in {runs}: {', '.join(known) or 'none yet'}")
    print(_ending(folder, folder.name, runs=str(folder.parent)))
    return 0


def compare(folders: Sequence[str], *, fmt: str, out: str | None) -> int:
    """Runs side by side (:func:`plmfair.run_compare.compare_runs`)."""
    # pandas and scipy (through run_compare) only for `compare`
    from plmfair.run_compare import compare_runs, render

    text = render(compare_runs(folders), fmt)
    if out:
        write_text(text, out)
    print(text, end="")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []  # more Snakemake arguments
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(prog="plmfair", description=__doc__.split("\n")[0],
                                     epilog="plmfair run ... -- SNAKEMAKE ARGUMENTS passes the rest to Snakemake")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the workflow, on your own models if you name them")
    r.add_argument("models", nargs="*", help="[name=]folder or Hugging Face id[:key=value...], e.g. "
                                             "mine=../m:uncased=true:revision=abc")
    r.add_argument("--studies", type=lambda s: [x for x in s.split(",") if x], default=None,
                   help=f"comma-separated, of {', '.join(plan.STUDIES)} (default: all)")
    r.add_argument("--datasets", type=lambda s: [x for x in s.split(",") if x], default=None,
                   help="comma-separated CrowS-Pairs data sets, ready-made cloze tests (mozart) and cloze "
                        "corpora (default: the configuration's)")
    r.add_argument("--family", choices=list(FAMILIES), default=None, help="the models' family, when it cannot be read")
    r.add_argument("--run", default=None, help="the run's name: its results go to runs/<name>/results")
    r.add_argument("--runs", default=str(ROOT / "runs"), help="where run folders are made (default: runs/)")
    r.add_argument("--resources", default=str(ROOT / "resources"),
                   help="the downloads and models every run shares (default: resources/)")
    r.add_argument("--configfile", action="append", default=[], help="your configuration, over config/config.yaml")
    r.add_argument("--cores", default="all")
    r.add_argument("--mirror", default=None, help="a folder of data files to use before the network")
    for flag, text in FLAGS.items():
        r.add_argument(flag, action="store_true", help=text)
    sh = sub.add_parser("show", help="a finished run's headline numbers, record and report")
    sh.add_argument("name", help="the run's name (runs/<name>) or folder")
    sh.add_argument("--runs", default=str(ROOT / "runs"), help="where run folders are (default: runs/)")
    c = sub.add_parser("compare", help="runs side by side: numbers with intervals and marks, settings that differ, "
                                       "paired tests")
    c.add_argument("folders", nargs="+", help="run folders (runs/<name>)")
    c.add_argument("--format", choices=["md", "csv", "json"], default="md")
    c.add_argument("--out", default=None, help="also write it to this file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="plmfair: %(message)s")
    try:
        if args.command == "compare":
            return compare(args.folders, fmt=args.format, out=args.out)
        if args.command == "show":
            return show(args.name, runs=args.runs)
        args.snakemake_args = extra
        return run(args, argv[1:])
    except PlmfairError as exc:
        print(f"plmfair: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
