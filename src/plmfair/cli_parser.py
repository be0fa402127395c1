"""The ``plmfair`` command line's words: its commands, their options and examples (:mod:`plmfair.cli` runs
them)."""

from __future__ import annotations

import argparse

from plmfair import diff
from plmfair.runs.folders import FLAGS, ROOT
from plmfair.scoring import FAMILIES
from plmfair.studies import STUDIES

EXAMPLES = {
    "run": "plmfair run path/to/my_model --studies crows_pairs --datasets fr --run mine\n"
    "plmfair run mine=path/to/my_model --run mine --robustness --report   (a later call: more analyses, the report)\n"
    "plmfair run ... -- SNAKEMAKE ARGUMENTS   (the rest goes to Snakemake)",
    "show": "plmfair show mine",
    "verify": "plmfair verify mine",
    "compare": "plmfair compare runs/mine runs/baseline",
    "diff": "plmfair diff runs/mine runs/mine_again",
}


def build_parser() -> argparse.ArgumentParser:
    """The command line: ``run``, ``show``, ``verify``, ``compare`` and ``diff`` with their options."""
    parser = argparse.ArgumentParser(
        prog="plmfair",
        description="Fairness of pretrained language models across groups and languages (CrowS-Pairs, MozArt): "
        "your own model on a study in one command, each run in a folder of its own.",
        epilog="examples:\n" + "\n".join(f"  {lines.splitlines()[0]}" for lines in EXAMPLES.values()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=text,
            description=text[0].upper() + text[1:] + ".",
            epilog="example:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name].splitlines()),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    _run_arguments(command("run", "run the workflow, on your own models if you name them"))
    sh = command("show", "a finished run's headline numbers, whether it is complete, its record and report")
    sh.add_argument("name", help="the run's name (runs/<name>) or folder")
    sh.add_argument("--runs", default=str(ROOT / "runs"), help="where run folders are (default: runs/)")
    v = command(
        "verify",
        "re-hash a run's files against its record: every file changed, missing or not produced by its configuration",
    )
    v.add_argument("name", help="the run's name (runs/<name>) or folder")
    v.add_argument("--runs", default=str(ROOT / "runs"), help="where run folders are (default: runs/)")
    v.add_argument(
        "--no-models",
        dest="models",
        action="store_false",
        help="skip re-hashing the model folders the run scored (their time is printed otherwise)",
    )
    _compare_arguments(
        command("compare", "runs side by side: numbers with intervals and marks, settings that differ, paired tests")
    )
    d = command("diff", "every Parquet output of two run folders, value by value: did a rerun reproduce the numbers?")
    diff.add_arguments(d)
    return parser


def _run_arguments(r: argparse.ArgumentParser) -> None:
    """``plmfair run``'s models and options."""
    r.add_argument(
        "models",
        nargs="*",
        help="[name=]folder or Hugging Face id[:key=value...], e.g. mine=../m:uncased=true:revision=abc",
    )
    r.add_argument(
        "--studies",
        type=lambda s: [x for x in s.split(",") if x],
        default=None,
        help=f"comma-separated, of {', '.join(STUDIES)} (default: all)",
    )
    r.add_argument(
        "--datasets",
        type=lambda s: [x for x in s.split(",") if x],
        default=None,
        help="comma-separated CrowS-Pairs data sets, ready-made cloze tests (mozart) and cloze "
        "corpora (default: the configuration's)",
    )
    r.add_argument(
        "--robustness",
        action="store_true",
        help="also compute each primary verdict under every measurement choice its study varies (robustness.enabled)",
    )
    r.add_argument("--family", choices=list(FAMILIES), default=None, help="the models' family, when it cannot be read")
    r.add_argument("--run", default=None, help="the run's name: its results go to runs/<name>/results")
    r.add_argument("--runs", default=str(ROOT / "runs"), help="where run folders are made (default: runs/)")
    r.add_argument(
        "--resources",
        default=str(ROOT / "resources"),
        help="the folder of the downloads every run shares (default: resources/)",
    )
    r.add_argument("--configfile", action="append", default=[], help="your configuration, over config/config.yaml")
    r.add_argument("--cores", default="all")
    r.add_argument("--mirror", default=None, help="a folder of data files to use before the network")
    for flag, text in FLAGS.items():
        r.add_argument(flag, action="store_true", help=text)


def _compare_arguments(c: argparse.ArgumentParser) -> None:
    """``plmfair compare``'s folders and options."""
    c.add_argument("folders", nargs="*", help="run folders (runs/<name>); those not finished are skipped, named")
    c.add_argument("--format", choices=["md", "csv", "json"], default="md")
    c.add_argument("--out", default=None, help="also write it to this file")
    c.add_argument(
        "--alpha",
        type=float,
        default=None,
        help="the comparison's significance level (Holm over its tests; default the configuration schema's "
        "analysis.alpha, whatever the runs' own)",
    )
    c.add_argument(
        "--all-settings", action="store_true", help="every configuration key that differs, not only the studies' own"
    )
    c.add_argument(
        "--other-models",
        action="store_true",
        help="also compare each model of a run with the other models of the other",
    )
