"""The ``plmfair`` command: your own model on a study in one command, each run in a folder of its own.

    plmfair run [MODEL ...] [--studies crows_pairs,mozart,cloze] [--datasets fr,...] [--run NAME]
                [--configfile your.yaml ...] [--cores N] [--mirror DIR] [--dry-run] [--report]
                [-- SNAKEMAKE ARGS]
    plmfair compare RUN_FOLDER [RUN_FOLDER ...] [--csv OUT]

``make run MODELS=... STUDIES=... DATASETS=... RUN=...`` calls ``plmfair run``.

A MODEL is a local folder (``config.json``, tokenizer files, weights) or a Hugging Face id,
optionally named: ``mine=path/to/folder``; without a name it is called after the folder or the
id's last part. Its family (masked, causal or seq2seq LM) is read off its ``config.json`` (a
Hub id's is fetched; offline, give ``--family``), and an uncased tokenizer
(``do_lower_case``) makes it ``uncased``. Naming models restricts the run to them: every study
run scores exactly those models.

``--studies`` keeps only those studies (default: all three); ``--datasets`` names the CrowS-Pairs
data sets (``fr``, ``en_revised``, ``mcp_de_DE``, ...) and cloze corpora to run (default: the
configuration's). The run's settings go to ``runs/<run>/config.yaml``, merged over
``config/config.yaml`` and your ``--configfile`` files, and Snakemake runs in ``runs/<run>/``:
its ``results/`` are its own, so a second run never overwrites the first; downloads and fetched
models are shared (``runs/<run>/resources`` is a link to the checkout's ``resources/``). The run
name defaults to the models' names, else to your last config file's name, else to the studies and
data sets named; with none of these, the run is the checkout's own ``results/`` (the default
configuration). A later ``plmfair run --run NAME`` with no models, studies or data sets keeps the
run's settings (to rerun it or write its report). A model folder given by a relative path (on the
command line or in a config file) is read from where you run the command.

``plmfair compare`` puts the headline numbers of several runs side by side (CrowS-Pairs metric
score per data set and model; P@1, P@5 and MRR per cloze set, model and language), as Markdown,
and as CSV with ``--csv``.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from plmfair import plan
from plmfair.errors import ConfigError, PlmfairError
from plmfair.scoring import FAMILIES, did_you_mean

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]  # the checkout: Snakefile, config/, resources/
DEFAULT_CONFIG = ROOT / "config" / "config.yaml"


def model_name(source: str) -> str:
    """A config name for a model: the folder's or the id's last part, in letters, digits and ``_``."""
    return re.sub(r"[^A-Za-z0-9_]", "_", Path(source.rstrip("/")).name) or "model"


def detect_family(source: str, *, local: bool) -> str:
    """The family of a checkpoint, read off its ``config.json`` (:func:`plmfair.scoring.loader.checkpoint_families`)."""
    from transformers import AutoConfig

    from plmfair.scoring.loader import checkpoint_families

    try:
        config = AutoConfig.from_pretrained(source, local_files_only=local, trust_remote_code=False)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"model {source}: its config.json cannot be read ({first}); give its family with "
                          f"--family {'|'.join(FAMILIES)}") from None
    fits = checkpoint_families(config)
    if not fits:
        raise ConfigError(f"model {source} is a {config.model_type} model that no plmfair family "
                          f"({', '.join(FAMILIES)}) can score")
    return fits[0]


def is_uncased(source: str, *, local: bool) -> bool:
    """Whether the tokenizer lower-cases its input (``do_lower_case`` in ``tokenizer_config.json``)."""
    if local:
        path = Path(source) / "tokenizer_config.json"
    else:
        try:
            from huggingface_hub import hf_hub_download

            path = Path(hf_hub_download(source, "tokenizer_config.json"))
        except Exception:  # noqa: BLE001 - no tokenizer config (or offline): cased, as the config default
            return False
    try:
        return bool(json.loads(path.read_text(encoding="utf-8")).get("do_lower_case", False))
    except (OSError, ValueError):
        return False


def model_entry(text: str, *, family: str | None = None) -> tuple[str, dict]:
    """``[name=]folder-or-hub-id`` as (name, ``models.<name>`` entry); a folder by its absolute path."""
    name, sep, source = text.partition("=")
    if not sep:
        name, source = model_name(text), text
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        raise ConfigError(f"model name {name!r} (in {text!r}): use letters, digits and _ only")
    local = Path(source).expanduser().is_dir()
    if not local and ("/" not in source or source.startswith((".", "/", "~"))):
        raise ConfigError(f"model {source!r}: no such folder, and not a Hugging Face id (owner/name); give the "
                          f"folder holding config.json and the weights, or a Hub id")
    where = str(Path(source).expanduser().resolve()) if local else source
    entry = {"path": where} if local else {"hf_id": source}
    entry["family"] = family or detect_family(where, local=local)
    if is_uncased(where, local=local):
        entry["uncased"] = True
    return name, entry


def run_settings(config: dict, models: dict[str, dict], *, studies: Sequence[str] | None,
                 datasets: Sequence[str] | None) -> dict:
    """The configuration a run adds over ``config`` (the merged base): the named models, scored by
    every study the run keeps and by nothing else; with ``studies``, the others switched off; the
    data sets and corpora named kept, the others of their kind left out."""
    for study in studies or []:
        if study not in plan.STUDIES:
            raise ConfigError(f"study {study!r}{did_you_mean(study, plan.STUDIES)}: the studies are "
                              f"{', '.join(plan.STUDIES)}")
    kept = [s for s in plan.STUDIES if (s in studies if studies else plan.enabled(config, s))]
    sets, corpora = plan.crows_pairs_sets(config), config.get("cloze", {}).get("corpora", {})
    for name in datasets or []:
        if name not in sets and name not in corpora:
            known = [*sets, *corpora]
            raise ConfigError(f"data set {name!r}{did_you_mean(name, known)} is neither a CrowS-Pairs data set "
                              f"(datasets.crows_pairs) nor a cloze corpus (cloze.corpora) of the configuration; "
                              f"known: {', '.join(known)}")
    out: dict = {"models": dict(models)} if models else {}
    for study in plan.STUDIES:
        part = {**({"enabled": study in kept} if studies else {}),
                **({"models": list(models)} if models and study in kept else {})}
        if part:
            out[study] = part
    named_sets = [d for d in datasets or [] if d in sets]
    named_corpora = [d for d in datasets or [] if d in corpora]
    if named_sets:
        out.setdefault("crows_pairs", {})["datasets"] = named_sets
    if "cloze" in kept:
        # a corpus with its own model list would keep scoring those: it gets the named models
        chosen = {name: {**({"enabled": name in named_corpora} if named_corpora else {}),
                         **({"models": list(models)} if models and entry.get("models") is not None else {})}
                  for name, entry in corpora.items()}
        if any(chosen.values()):
            out.setdefault("cloze", {})["corpora"] = {name: entry for name, entry in chosen.items() if entry}
    return out


def run_folder(runs: Path, name: str, *, resources: Path) -> Path:
    """``runs/<name>``, with ``resources`` linked in (downloads and models shared by every run)."""
    folder = runs / name
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "resources"
    if not link.exists() and not link.is_symlink():
        resources.mkdir(parents=True, exist_ok=True)
        link.symlink_to(resources.resolve(), target_is_directory=True)
    return folder


def write_settings(path: Path, settings: dict, command: Sequence[str]) -> None:
    import yaml

    from plmfair.atomic import write_text

    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = f"# written by `{shlex.join(command)}` on {stamp}; merged over config/config.yaml\n"
    write_text(header + yaml.safe_dump(settings, sort_keys=False, allow_unicode=True), path)


def run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from plmfair.config import load_config
    from plmfair.preflight import main as preflight

    base = [DEFAULT_CONFIG, *(Path(f).resolve() for f in args.configfile)]
    config = load_config(base)
    models = dict(model_entry(text, family=args.family) for text in args.models)
    for name in models:
        if name in config.get("models", {}):
            raise ConfigError(f"model name {name!r} is already a model of the configuration; name yours: "
                              f"other_name={args.models[list(models).index(name)]}")
    name = (args.run or "+".join(models) or (Path(args.configfile[-1]).stem if args.configfile else None)
            or "+".join([*(args.studies or []), *(args.datasets or [])]) or None)
    if name and not re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
        raise ConfigError(f"run name {name!r}: use letters, digits and _ . + - only")
    workdir = run_folder(Path(args.runs), name, resources=Path(args.resources)) if name else ROOT
    configfiles = list(base)
    settings_file = workdir / "config.yaml"
    if name and not (settings_file.exists() and not (models or args.studies or args.datasets)):
        # (a later command on a run, with no models, studies or data sets, keeps its settings)
        # Snakemake runs in the run folder: a model folder given relative to here is made absolute
        settings = run_settings(config, models, studies=args.studies, datasets=args.datasets)
        for model, entry in config.get("models", {}).items():
            if entry.get("path") and not plan.workflow_managed(config, model) and not Path(entry["path"]).is_absolute():
                settings.setdefault("models", {}).setdefault(model, {})["path"] = str(Path(entry["path"]).resolve())
        write_settings(settings_file, settings, ["plmfair", "run", *argv])
    if name:
        configfiles.append(settings_file)
    load_config(configfiles)  # every key of the run checked before anything starts
    mirror = Path(args.mirror).resolve() if args.mirror else None
    if not args.dry_run and preflight([*map(str, configfiles), "--directory", str(workdir),
                                       *(["--mirror", str(mirror)] if mirror else [])]) != 0:
        return 1
    snakemake = [str(Path(sys.executable).parent / "snakemake"), "--snakefile", str(ROOT / "Snakefile"),
                 "--directory", str(workdir)]
    # --configfile and --config take every word after them: they come last
    config_args = ["--configfile", *map(str, configfiles),
                   *(["--config", f"mirror={mirror}"] if mirror else [])]
    status = subprocess.run([*snakemake, "--cores", str(args.cores), *(["--dry-run"] if args.dry_run else []),
                             *args.snakemake_args, *config_args], check=False).returncode
    if status == 0 and args.report and not args.dry_run:
        status = subprocess.run([*snakemake, "--report", "results/report.html", *config_args], check=False).returncode
    log.info("%s in %s", "report and results" if args.report else "results", workdir / "results")
    return status


def compare(folders: Sequence[str], *, csv: str | None) -> int:
    """Headline numbers of several runs, side by side."""
    import pandas as pd

    from plmfair.io import read_parquet, write_csv
    from plmfair.tables import to_markdown

    rows = []
    for folder in folders:
        results = Path(folder) / "results"
        summary = results / "crows_pairs" / "summary.parquet"
        if summary.exists():
            s = read_parquet(summary)
            s = s[s["subset_kind"] == "overall"]
            rows += [{"run": Path(folder).name, "study": "crows_pairs", "data": r.dataset, "model": r.model,
                      "lang": r.lang, "measure": "metric score", "value": r.score, "n": r.n_scored}
                     for r in s.itertuples()]
        for metrics in sorted(results.glob("cloze/*/metrics.parquet")):
            m = read_parquet(metrics)
            m = m[m["group"] == "all"]
            for measure, column in (("P@1", "p_at_1"), ("P@5", "p_at_5"), ("MRR", "mrr")):
                rows += [{"run": Path(folder).name, "study": "cloze", "data": metrics.parent.name, "model": r.model,
                          "lang": r.lang, "measure": measure, "value": getattr(r, column), "n": r.n}
                         for r in m.itertuples()]
        if not summary.exists() and not any(results.glob("cloze/*/metrics.parquet")):
            raise ConfigError(f"{folder}: no results/crows_pairs/summary.parquet or results/cloze/*/metrics.parquet; "
                              f"give the folder of a finished run (runs/<name>)")
    table = pd.DataFrame(rows, columns=["run", "study", "data", "model", "lang", "measure", "value", "n"])
    print(to_markdown(table), end="")
    if csv:
        write_csv(table, csv)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []  # more Snakemake arguments
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(prog="plmfair", description=__doc__.split("\n")[0],
                                     epilog="plmfair run ... -- SNAKEMAKE ARGUMENTS passes the rest to Snakemake")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the workflow, on your own models if you name them")
    r.add_argument("models", nargs="*", help="[name=]folder or Hugging Face id")
    r.add_argument("--studies", type=lambda s: [x for x in s.split(",") if x], default=None,
                   help=f"comma-separated, of {', '.join(plan.STUDIES)} (default: all)")
    r.add_argument("--datasets", type=lambda s: [x for x in s.split(",") if x], default=None,
                   help="comma-separated CrowS-Pairs data sets and cloze corpora (default: the configuration's)")
    r.add_argument("--family", choices=list(FAMILIES), default=None, help="the models' family, when it cannot be read")
    r.add_argument("--run", default=None, help="the run's name: its results go to runs/<name>/results")
    r.add_argument("--runs", default=str(ROOT / "runs"), help="where run folders are made (default: runs/)")
    r.add_argument("--resources", default=str(ROOT / "resources"),
                   help="the downloads and models every run shares (default: resources/)")
    r.add_argument("--configfile", action="append", default=[], help="your configuration, over config/config.yaml")
    r.add_argument("--cores", default="all")
    r.add_argument("--mirror", default=None, help="a folder of data files to use before the network")
    r.add_argument("--dry-run", action="store_true", help="show the jobs, run nothing")
    r.add_argument("--report", action="store_true", help="then write the run's report, results/report.html")
    c = sub.add_parser("compare", help="the headline numbers of several runs side by side")
    c.add_argument("folders", nargs="+", help="run folders (runs/<name>)")
    c.add_argument("--csv", default=None, help="also write the table as CSV here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="plmfair: %(message)s")
    try:
        if args.command == "compare":
            return compare(args.folders, csv=args.csv)
        args.snakemake_args = extra
        return run(args, argv[1:])
    except PlmfairError as exc:
        print(f"plmfair: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
