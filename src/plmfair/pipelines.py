"""Install the spaCy pipelines a configuration names, before a run (``make run``).

    python -m plmfair.pipelines config/config.yaml [your.yaml ...]

Later files override earlier ones key by key, as Snakemake merges ``--configfile``. Only the
pipelines of enabled cloze corpora that are package names are installed
(:func:`plmfair.plan.spacy_packages`); one that cannot be downloaded (offline) stops with
the command to run where there is network.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable

from plmfair.errors import ConfigError, PlmfairError

log = logging.getLogger(__name__)


def spacy_download(name: str) -> bool:
    """``python -m spacy download name``; its error's last line is logged, not its traceback."""
    proc = subprocess.run([sys.executable, "-m", "spacy", "download", name], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        log.warning("spacy download %s failed: %s", name, lines[-1] if lines else f"exit {proc.returncode}")
    return proc.returncode == 0


def install_pipelines(packages: dict[str, str], *, download: Callable[[str], bool] = spacy_download) -> list[str]:
    """Install the missing pipeline packages of ``packages`` (language -> package name); return
    the names installed."""
    import spacy

    installed, failed = [], []
    for lang, name in packages.items():
        if spacy.util.is_package(name):
            continue
        log.info("installing spaCy pipeline %s for %s", name, lang)
        (installed if download(name) else failed).append(name)
    if failed:
        commands = "; ".join(f"python -m spacy download {name}" for name in failed)
        raise ConfigError(f"spaCy pipeline(s) {', '.join(failed)} (cloze.spacy) are not installed and could not be "
                          f"downloaded here. Where there is network, run: {commands}; or pip install the pipeline "
                          f"wheels from a mirror; or switch the cloze study off (cloze: {{enabled: false}})")
    return installed


def config_from_files(paths: list[str]) -> dict:
    import yaml
    from snakemake.utils import update_config

    config: dict = {}
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            update_config(config, yaml.safe_load(fh) or {})
    return config


def main(argv: list[str]) -> int:
    from plmfair import plan

    logging.basicConfig(level=logging.INFO, format="plmfair: %(message)s")
    try:
        installed = install_pipelines(plan.spacy_packages(config_from_files(argv)))
    except PlmfairError as exc:
        print(f"plmfair: {exc}", file=sys.stderr)
        return 1
    log.info("spaCy pipelines: %s", f"installed {', '.join(installed)}" if installed else "all present")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
