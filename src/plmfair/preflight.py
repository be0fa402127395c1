"""Before a run: is everything the configuration needs here, or can it be fetched? (``make run``)

    python -m plmfair.preflight [--directory DIR] [--mirror DIR] config/config.yaml [your.yaml ...]

Later files override earlier ones key by key, as Snakemake merges ``--configfile``. In one
pass, in seconds, it installs the spaCy pipelines the cloze corpora name (where the network
allows) and lists everything a run would otherwise stop on one job at a time:

- every Hugging Face model a study scores that is neither fetched yet
  (the run's ``results/models/<hf_id>@<revision>``), nor in the Hub cache, nor given by ``path``, while the Hub
  cannot be reached, each with its ``hf download ... --revision`` command;
- every declared data file that is neither downloaded yet, nor in the mirror, nor reachable at
  its address;
- every spaCy pipeline that is not installed and cannot be, with the exact pip command for this
  Python.

Reachability is one connection attempt per host with a short timeout (no retries): offline, a
DNS failure answers at once. Exit status 1 when something is missing, with one line per item.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from plmfair import plan
from plmfair.config import load_config
from plmfair.errors import PlmfairError
from plmfair.io.download import find_in_mirror
from plmfair.io.hub import FILE_PATTERNS, hub_reachable, reachable
from plmfair.logs import command_line_logging
from plmfair.pipelines import install_pipelines, is_installed, spacy_wheel
from plmfair.plan.model_runs import models_in_use
from plmfair.scoring.model_settings import hub_models
from plmfair.studies import STUDIES

log = logging.getLogger("plmfair.preflight")  # its name under `python -m plmfair.preflight` too: plmfair's lines


@dataclass(frozen=True)
class Missing:
    """Something a run needs that is not here and cannot be fetched now, and how to get it."""

    what: str
    where: str
    remedy: str

    def line(self) -> str:
        return f"{self.what} ({self.where}): {self.remedy}"


def in_hub_cache(hf_id: str, revision: str | None) -> bool:
    """Whether the Hub cache holds the files the workflow fetches of ``hf_id`` at ``revision``."""
    # only when the Hub or its cache is asked
    from huggingface_hub import snapshot_download

    try:
        snapshot_download(repo_id=hf_id, revision=revision, allow_patterns=FILE_PATTERNS, local_files_only=True)
    except Exception:  # noqa: BLE001 - every kind of "not there" means the same here
        return False
    return True


def missing_models(config: dict, workdir: Path, *, online: bool) -> list[Missing]:
    """Hub models a study scores that are not fetched, not cached, and cannot be downloaded now."""
    if online:
        return []
    out, in_use = [], models_in_use(config)
    for name, entry in hub_models(config).items():
        if name not in in_use or (workdir / plan.model_folder(config, name)).is_dir():
            continue
        if in_hub_cache(entry["hf_id"], entry.get("revision")):
            continue
        revision = f" --revision {entry['revision']}" if entry.get("revision") else ""
        out.append(
            Missing(
                f"model {name}",
                entry["hf_id"],
                f"where there is network run `hf download {entry['hf_id']}{revision}` and copy the Hub "
                f"cache (HF_HOME) here, or download it to a folder and set models.{name}.path",
            )
        )
    return out


def missing_downloads(config: dict, workdir: Path, mirror: str | None) -> list[Missing]:
    """Declared files a study uses that are not downloaded, not in the mirror, and not reachable."""

    out, seen, hosts = [], set(), {}
    for where, entry in plan.active_downloads(config).items():
        name = entry["file"]
        if name in seen or (workdir / "resources" / "downloads" / name).is_file():
            continue
        seen.add(name)
        if mirror and find_in_mirror(mirror, name) is not None:
            continue
        url = entry.get("url")
        if url:
            host = urlparse(url).hostname
            if host not in hosts:
                hosts[host] = reachable(url)
            if hosts[host]:
                continue
        source = f"from {url}" if url else "(no url: mirror only)"
        out.append(
            Missing(
                f"data file {name}",
                where,
                f"put a copy {source} in the mirror folder ({mirror or 'none set: make run MIRROR=DIR'})",
            )
        )
    return out


def missing_pipelines(config: dict) -> list[Missing]:
    """spaCy pipelines the studies name (their ``pipelines``: a cloze corpus's languages) that are not
    installed: installed now where the network allows, else listed with the exact pip command for this
    Python."""
    needed = {
        (study.name, lang): name
        for study in STUDIES.values()
        if study.data.pipelines
        for lang, name in study.data.pipelines(config).items()
    }
    packages = {where: name for where, name in needed.items() if not is_installed(name)}
    if packages and reachable("https://github.com"):
        try:
            install_pipelines({lang: name for (_, lang), name in packages.items()})
            return []
        except PlmfairError as exc:
            log.warning("%s", exc)
    return [
        Missing(
            f"spaCy pipeline {name}",
            f"{study}.spacy.{lang}",
            f"`{sys.executable} -m pip install {spacy_wheel(name)}`, or switch the {study} study off "
            f"({study}: {{enabled: false}})",
        )
        for (study, lang), name in packages.items()
        if not is_installed(name)
    ]


def preflight(config: dict, *, workdir: str | os.PathLike = ".", mirror: str | None = None) -> list[Missing]:
    """Everything the configuration needs that is not here and cannot be fetched now."""
    workdir = Path(workdir)
    mirror = mirror or config.get("mirror")
    return (
        missing_models(config, workdir, online=hub_reachable())
        + missing_downloads(config, workdir, mirror)
        + missing_pipelines(config)
    )


def robustness_passes(config: dict) -> list[str]:
    """What the robustness analysis adds, counted before anything runs: one line per study with extra scoring
    passes (each a pass of its model's one load), then the passes themselves."""
    out = []
    for study in STUDIES.values():
        passes = study.scoring.passes(config) if study.scoring and study.scoring.passes else []
        if passes:
            out.append(
                f"robustness: {study.title} adds {len(passes)} scoring pass(es), each with its model's one load: "
                + "; ".join(passes)
            )
    return out


def main(argv: list[str]) -> int:
    """``python -m plmfair.preflight CONFIGFILE ...``: 0 when the run can start, else 1 with what to install."""
    parser = argparse.ArgumentParser(prog="python -m plmfair.preflight", description=__doc__.split("\n")[0])
    parser.add_argument("configfiles", nargs="+")
    parser.add_argument("--directory", default=".", help="the working directory of the run")
    parser.add_argument("--mirror", default=None, help="the download mirror of the run")
    args = parser.parse_args(argv)
    with command_line_logging():
        try:
            config = load_config(args.configfiles)
            missing = preflight(config, workdir=args.directory, mirror=args.mirror)
        except PlmfairError as exc:
            print(f"plmfair: {exc}", file=sys.stderr)
            return 1
        if missing:
            print(
                f"plmfair: {len(missing)} thing(s) this run needs are not here and cannot be fetched now:",
                file=sys.stderr,
            )
            for item in missing:
                print(f"  - {item.line()}", file=sys.stderr)
            return 1
        log.info("preflight: every model, data file and spaCy pipeline the run needs is here or can be fetched")
        for line in robustness_passes(config):
            log.info("%s", line)
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
