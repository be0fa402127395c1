"""Install the spaCy pipelines a configuration names, before a run (:mod:`plmfair.preflight`).

Only the pipelines the studies name that are package names are installed (their ``pipelines``: the
enabled cloze corpora's, :func:`plmfair.cloze.construction.plan.spacy_packages`); one that cannot be
downloaded (offline) stops with the exact pip command for this Python.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable
from importlib import metadata

from plmfair.errors import ConfigError

log = logging.getLogger(__name__)


def is_folder_name(name: str) -> bool:
    """Whether a spaCy pipeline name from ``cloze.spacy`` is a folder (it has a path separator)
    rather than an installed package's name."""
    return "/" in name or "\\" in name


def is_installed(name: str) -> bool:
    """Whether the pipeline package ``name`` is installed: spaCy's own test (``spacy.util.is_package``,
    a distribution of that name) without importing spaCy and torch (2 s) into every command."""
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def spacy_download(name: str) -> bool:
    """``python -m spacy download name``; its error's last line is logged, not its traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "spacy", "download", name], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        log.warning("spacy download %s failed: %s", name, lines[-1] if lines else f"exit {proc.returncode}")
    return proc.returncode == 0


def spacy_wheel(name: str) -> str:
    """The pip spec of a spaCy pipeline package for the installed spaCy (its GitHub release wheel)."""
    version = ".".join(metadata.version("spacy").split(".")[:2]) + ".0"
    return (
        f"https://github.com/explosion/spacy-models/releases/download/{name}-{version}/"
        f"{name}-{version}-py3-none-any.whl"
    )


def install_pipelines(packages: dict[str, str], *, download: Callable[[str], bool] = spacy_download) -> list[str]:
    """Install the missing pipeline packages of ``packages`` (language -> package name); return
    the names installed."""
    installed: list[str] = []
    failed: list[str] = []
    for lang, name in packages.items():
        if is_installed(name):
            continue
        log.info("installing spaCy pipeline %s for %s", name, lang)
        (installed if download(name) else failed).append(name)
    if failed:
        commands = "; ".join(f"{sys.executable} -m pip install {spacy_wheel(name)}" for name in failed)
        raise ConfigError(
            f"spaCy pipeline(s) {', '.join(failed)} (cloze.spacy) are not installed and could not be "
            f"downloaded here. Where there is network, run: {commands}; or pip install the pipeline "
            f"wheels from a mirror; or switch the cloze study off (cloze: {{enabled: false}})"
        )
    return installed
