"""Run folders: a run's name, its models and its settings, each kept true across calls.

A run is ``runs/<name>/``: its ``config.yaml`` is the run's complete configuration (the checkout's
``config/config.yaml``, your ``--configfile`` files and the command line, merged), the only
configuration file Snakemake reads for it, so the run can be rerun or reported without the
original command line or files (the mirror included); its ``results/`` are its own (a Hub model's folder
too: hard links into the Hub cache); ``resources/`` links to the downloads every run shares.

- A MODEL argument (:mod:`plmfair.runs.model_arguments`) becomes a ``models.<name>`` entry; an entry of the
  same name in a ``--configfile`` gives only the keys it changes; a folder named like a model of
  ``config/config.yaml`` is yours, the default entry dropped for the run (said once).
- Names: a run name is one safe path component; two models of one call never share a name, and a
  run never takes a model of the same name from another folder or with other settings: such a
  call is refused with a command that keeps both apart.
- A later call on a run adds to it: the studies, models and data sets it had stay (said once), so
  its earlier results are never silently out of date; with nothing new it keeps its settings.
- :func:`run_lock` holds the run while settings are written and Snakemake runs.
"""

from __future__ import annotations

import copy
import fcntl
import logging
import re
import shlex
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from plmfair import plan
from plmfair.config import check_sections, validate_config
from plmfair.errors import ConfigError, did_you_mean, program
from plmfair.io.atomic import write_text
from plmfair.plan.targets import REPORT
from plmfair.runs.model_arguments import ModelArgument, model_entry, model_name, model_schema
from plmfair.studies import STUDIES, enabled, section

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[3]  # the checkout: Snakefile, config/, resources/
DEFAULT_CONFIG = ROOT / "config" / "config.yaml"
RUN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
RUN_NAME_MAX = 100  # a folder name, with room for the files below it in every file system
# what a model entry says of the model itself (free text and the demo's build recipe are not settings)
NOT_SETTINGS = ("pretraining_data", "licence", "build")


def _into(settings: dict, path: Sequence[str]) -> dict:
    """The mapping at a key path of ``settings``, made where missing."""
    for key in path:
        settings = settings.setdefault(key, {})
    return settings


def run_settings(
    config: dict,
    models: dict[str, dict],
    *,
    studies: Sequence[str] | None,
    datasets: Sequence[str] | None,
    robustness: bool = False,
) -> dict:
    """The configuration a run adds over ``config`` (the merged base): the named models, scored by
    every study the run keeps and by nothing else; with ``studies``, the others switched off; of each
    kind of data set the studies declare (:class:`plmfair.studies.DataChoice`), the ones named kept and
    the others of their kind left out, and the entries with a model list of their own given the named
    models; with ``robustness``, the robustness analysis switched on."""
    for study in studies or []:
        if study not in STUDIES:
            raise ConfigError(f"study {study!r}{did_you_mean(study, STUDIES)}: the studies are {', '.join(STUDIES)}")
    kept = [s for s in STUDIES if (s in studies if studies else enabled(config, s))]
    choices = [(study, choice) for study in STUDIES for choice in STUDIES[study].data.choices]
    known = [name for _, choice in choices for name in choice.entries(config)]
    for name in datasets or []:
        if name not in known:
            kinds = [f"{choice.kind} ({'.'.join(choice.declared)})" for _, choice in choices]
            raise ConfigError(
                f"data set {name!r}{did_you_mean(name, known)} is none of the configuration's: not "
                f"{', '.join(kinds[:-1])} nor {kinds[-1]}; known: {', '.join(known)}"
            )
    out: dict = {"models": dict(models)} if models else {}
    if robustness:
        out["robustness"] = {"enabled": True}
    for study in STUDIES:
        part = {
            **({"enabled": study in kept} if studies else {}),
            **({"models": list(models)} if models and study in kept else {}),
        }
        if part:
            out[study] = part
    for study, choice in choices:
        declared = choice.entries(config)
        named = [d for d in datasets or [] if d in declared]
        if choice.chosen is not None:
            if named:
                _into(out, choice.chosen[:-1])[choice.chosen[-1]] = named
            continue
        # an entry with its own model list would keep scoring those: it gets the named models
        own = choice.own_models and models and study in kept
        chosen = {
            name: {
                **({"enabled": name in named} if named else {}),
                **({"models": list(models)} if own and entry.get("models") is not None else {}),
            }
            for name, entry in declared.items()
        }
        if any(chosen.values()):
            _into(out, choice.declared).update({name: entry for name, entry in chosen.items() if entry})
    return out


def _union(old: list | None, new: list | None) -> list | None:
    """Two lists of names as one (None, "every one", absorbs)."""
    if old is None or new is None:
        return None
    return list(dict.fromkeys([*old, *new]))


def keep_earlier(had: dict, settings: dict) -> tuple[dict, list[str]]:
    """``settings`` for a run that already has ``had``: every study it ran stays on with its models,
    and its model and data set lists grow; what was kept, said in words."""
    out, notes = copy.deepcopy(settings), []
    for study in STUDIES:
        part, before = out.get(study), had.get(study, {})
        if not part:
            continue
        if enabled(had, study) and part.get("enabled") is False:
            part["enabled"] = True
            notes.append(f"keeps its earlier study {study}")
        if "models" in part and "models" in before:
            part["models"] = _union(before["models"], part["models"])
    for choice in (choice for study in STUDIES.values() for choice in study.data.choices):
        if choice.chosen is not None:
            where, before, key = section(out, choice.chosen[:-1]), section(had, choice.chosen[:-1]), choice.chosen[-1]
            if where.get(key) is not None and key in before:
                now = where[key]
                where[key] = _union(before[key], now)
                if before[key] is None:
                    notes.append(f"keeps every {choice.noun}, as before")
                notes += [f"keeps its earlier {choice.noun} {name}" for name in before[key] or [] if name not in now]
            continue
        for name, part in choice.entries(out).items():
            if part.get("enabled") is False and choice.entries(had).get(name, {}).get("enabled", True):
                part["enabled"] = True
                notes.append(f"keeps its earlier {choice.noun} {name}")
    return out, notes


def read_yaml(path: str | Path) -> dict:
    """A YAML configuration file as a mapping; one that is not UTF-8, not YAML or not a mapping is
    refused in one line naming the file and the place."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: byte {exc.start} is not UTF-8 text; save the file as UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(
            f"{path}: not valid YAML{where} ({getattr(exc, 'problem', None) or exc}); fix it there"
        ) from None
    if data is not None and not isinstance(data, dict):
        raise ConfigError(
            f"{path}: a configuration is a mapping of keys (crows_pairs:, models:, ...), not a {type(data).__name__}"
        )
    return data or {}


def read_run_config(path: Path) -> dict:
    """A run's own ``config.yaml`` (:func:`read_yaml`); an empty one is refused, as every run's has its
    complete configuration."""
    config = read_yaml(path)
    if not config:
        raise ConfigError(
            f"{path} is empty, but a run's config.yaml holds its complete configuration: put it "
            f'back (the configuration of the run\'s last complete run is under "config" in '
            f"{path.parent / 'results' / 'run.json'}), or start the run again in a new folder "
            f"with --run NAME"
        )
    return config


def merged(paths: Sequence[str | Path], *, onto: dict | None = None) -> dict:
    """Configuration files merged key by key, in order, as Snakemake merges them (not validated)."""
    config = copy.deepcopy(onto) if onto is not None else {}
    for path in paths:
        config = updated(config, read_yaml(path))
    return config


def updated(old: Any, new: Any) -> Any:
    """``new`` merged into a copy of ``old`` key by key, as Snakemake merges config files (its
    ``update_config``); anything but two mappings: ``new`` replaces ``old``."""
    # Snakemake's utilities: only when a run's configuration is written
    from snakemake.utils import update_config

    if not isinstance(old, dict) or not isinstance(new, dict):
        return copy.deepcopy(new)
    out = copy.deepcopy(old)
    update_config(out, new)
    return out


def _setting(entry: dict, key: str) -> Any:
    """A model entry's value of ``key``, or the schema's default for it."""
    return entry.get(key, model_schema().get(key, {}).get("default"))


def differences(old: dict, new: dict) -> list[str]:
    """Where two entries of one model name differ, in words (source and settings, not free text)."""
    keys = [k for k in dict.fromkeys([*old, *new]) if k not in NOT_SETTINGS]
    return [f"{k} {_setting(old, k)!r} -> {_setting(new, k)!r}" for k in keys if _setting(old, k) != _setting(new, k)]


def check_run_name(name: str, *, derived: bool = False) -> None:
    """A run name is one short folder name; ``derived``: made from the models' or a file's name (the
    message then says to give one)."""
    if len(name) > RUN_NAME_MAX:
        where = "made from the models' or your config file's name " if derived else ""
        raise ConfigError(
            f"run name {name[:40]}... {where}has {len(name)} characters, more than {RUN_NAME_MAX}: "
            f"give a shorter one with --run NAME"
        )
    if not RUN_NAME.fullmatch(name):
        raise ConfigError(
            f"run name {name!r}: one folder name of letters, digits and _ . + -, not starting with "
            f"'.' (a run is runs/<name>/)"
        )


def free_name(runs: Path, name: str) -> str:
    """``name`` or the first of name_2, name_3, ... that no run has."""
    candidate, k = name, 2
    while (runs / candidate).exists():
        candidate, k = f"{name}_{k}", k + 1
    return candidate


@dataclass
class RunSetup:
    """What a ``plmfair run`` call runs: the run's name and folder, the configuration files Snakemake
    reads, and (when the call changes it) the run's complete configuration to write."""

    name: str | None
    folder: Path
    configfiles: list[Path]
    config: dict | None = None
    notes: list[str] = field(default_factory=list)


# the options of ``plmfair run`` that take no value, with their help; cli.py adds them from here (every
# other option takes one), so that a command rewritten for an error message reads them as the parser does
FLAGS = {"--dry-run": "show the jobs, run nothing", "--report": f"then write the run's report, {REPORT}"}


def _command(argv: Sequence[str], *, models: Sequence[str] | None = None, run: str | None = None) -> str:
    """The ``plmfair run`` command of ``argv`` (its words after ``run``) with other MODEL arguments or
    another ``--run``: what an error suggests, tested by running it."""
    out: list[str] = []
    i, placed = 0, False
    while i < len(argv):
        word = argv[i]
        if word.startswith("--") and word not in FLAGS and "=" not in word:
            if not (word == "--run" and run):
                out += argv[i : i + 2]
            i += 2
            continue
        if word.startswith("-"):
            if not (word.startswith("--run=") and run):
                out.append(word)
        elif models is None:
            out.append(word)
        elif not placed:
            out += list(models)
            placed = True
        i += 1
    return shlex.join([program(), "run", *out, *(["--run", run] if run else [])])


def _renamed(
    arguments: Sequence[ModelArgument], which: Sequence[ModelArgument], name: Callable[[ModelArgument], str]
) -> list[str]:
    """The MODEL arguments with those of ``which`` given the names ``name(argument)``."""
    return [arg.named(name(arg)) if arg in which else arg.text for arg in arguments]


def setup_run(
    *,
    models: Sequence[str],
    studies: Sequence[str] | None,
    datasets: Sequence[str] | None,
    run: str | None,
    configfiles: Sequence[Path],
    runs: Path,
    family: str | None,
    argv: Sequence[str],
    mirror: str | None = None,
    robustness: bool = False,
) -> RunSetup:
    """Decide what a ``plmfair run`` call runs (nothing is written here). A ``mirror`` given is kept in the
    run's configuration, so that a later call without it reads the same files from the same place. Its parts:
    the models' names and entries, the run's name, each model against the run's and the config file's
    (:func:`_same_model`, :func:`_with_file_entry`), the settings (:func:`run_settings`), absolute paths.
    """
    if run is not None:
        check_run_name(run)
    arguments = _named_once([ModelArgument.parse(text) for text in models], argv)
    entries = dict(model_entry(text, family=family) for text in models)
    name = (
        run
        or "+".join(entries)
        or (Path(configfiles[-1]).stem if configfiles else None)
        or "+".join([*(studies or []), *(datasets or []), *(["robustness"] if robustness else [])])
        or None
    )
    if name is None:
        return RunSetup(None, ROOT, [DEFAULT_CONFIG, *configfiles])  # the mirror is given on each call
    check_run_name(name, derived=run is None)
    folder = runs / name
    existing = folder / "config.yaml"
    had = read_run_config(existing) if existing.is_file() else None
    if had is not None and not (models or studies or datasets or configfiles or robustness):
        if mirror is None or had.get("mirror") == mirror:
            return RunSetup(name, folder, [existing])
        return RunSetup(name, folder, [existing], {**had, "mirror": mirror}, [f"run {name} reads from mirror {mirror}"])
    user = merged(configfiles)
    check_sections(user, source=", ".join(str(f) for f in configfiles))
    config = copy.deepcopy(had) if had is not None else merged([DEFAULT_CONFIG])
    config = merged(configfiles, onto=config)
    notes = []
    stated = {arg.name: arg.options for arg in arguments}
    for model, entry in entries.items():
        if had is not None and model in had.get("models", {}):
            said = {**{k: entry[k] for k in ("path", "hf_id") if k in entry}, **stated[model]}
            _same_model(
                had["models"][model], {**said, **user.get("models", {}).get(model, {})}, model, name, runs, argv
            )
            continue
        if model in user.get("models", {}):
            entry = _with_file_entry(entry, user["models"][model], model, arguments, argv)
        elif model in config.get("models", {}):
            notes.append(
                f"model {model}: {entry.get('path') or entry.get('hf_id')} is yours; the default model of that "
                f"name is left out of this run"
            )
        config.setdefault("models", {})[model] = entry
    checked = validate_config(copy.deepcopy(config))
    settings = run_settings(checked, entries, studies=studies, datasets=datasets, robustness=robustness)
    if had is not None:
        settings, kept = keep_earlier(had, settings)
        notes += [f"run {name} {note}" for note in kept]
    for key, value in settings.items():
        if key == "models":
            continue  # entries replace, never merge with, a model of the same name
        config[key] = updated(config.get(key), value)
    _made_absolute(config, mirror)
    validate_config(copy.deepcopy(config))  # every key of the run checked before anything starts
    return RunSetup(name, folder, [existing], config, notes)


def _named_once(arguments: list[ModelArgument], argv: Sequence[str]) -> list[ModelArgument]:
    """``arguments``, refused with the command that names them when two models would get the same name."""
    by_name: dict[str, list[ModelArgument]] = {}
    for arg in arguments:
        by_name.setdefault(arg.name, []).append(arg)
    clash = next((args for args in by_name.values() if len(args) > 1), None)
    if clash:
        renamed = _renamed(arguments, clash, lambda a: model_name(f"{Path(a.source).parent.name}_{a.name}"))
        raise ConfigError(
            f"models {', '.join(a.source for a in clash)} would all be called {clash[0].name!r}; name "
            f"them: {_command(argv, models=renamed)}"
        )
    return arguments


def _same_model(earlier: dict, said: dict, model: str, name: str, runs: Path, argv: Sequence[str]) -> None:
    """A model the run already has, named again: what this call states (the source, its options, a config file's
    entry, not what was read off the folder: a run whose model got uncased from a config file keeps it on a plain
    later call) must be the run's, else the call is refused with the command that scores it in a run of its own."""
    changed = differences({k: v for k, v in earlier.items() if k in said}, said)
    if not changed:
        return
    before, elsewhere = earlier.get("path"), _command(argv, run=free_name(runs, name))
    if before and said.get("path") != before and not Path(before).exists():
        raise ConfigError(
            f"run {name!r} scored its model {model!r} from {before}, which is gone (moved, renamed or deleted); "
            f"{said.get('path')} is another folder to this run, whatever it holds: put {before} back, or score "
            f"{said.get('path')} in a run of its own: {elsewhere}"
        )
    raise ConfigError(
        f"run {name!r} already has a model {model!r} and this one differs ({'; '.join(changed)}); "
        f"keep both, each in its own run: {elsewhere}"
    )


def _with_file_entry(entry: dict, given: dict, model: str, arguments: list[ModelArgument], argv: Sequence[str]) -> dict:
    """A command-line model that a config file declares too: the file's keys over what was read off the folder,
    refused when the two name other weights."""
    where = {"path": str(Path(given["path"]).resolve()) if given.get("path") else None, "hf_id": given.get("hf_id")}
    if any(k in given and where[k] != entry.get(k) for k in ("path", "hf_id")):
        renamed = _renamed(arguments, [a for a in arguments if a.name == model], lambda a: f"{a.name}_2")
        raise ConfigError(
            f"model {model!r} is {given.get('path') or given.get('hf_id')} in your config file and "
            f"{entry.get('path') or entry.get('hf_id')} on the command line; name the command "
            f"line's: {_command(argv, models=renamed)}"
        )
    return {**entry, **given}


def _made_absolute(config: dict, mirror: str | None) -> None:
    """Snakemake runs in the run folder: a model folder or mirror given relative to here is made absolute; a
    ``mirror`` given on the command line is the run's."""
    if mirror is None and config.get("mirror") and not Path(config["mirror"]).is_absolute():
        config["mirror"] = str(Path(config["mirror"]).resolve())
    for model, entry in config.get("models", {}).items():
        if entry.get("path") and not plan.workflow_managed(config, model) and not Path(entry["path"]).is_absolute():
            entry["path"] = str(Path(entry["path"]).resolve())
    if mirror is not None:
        config["mirror"] = mirror


def run_folder(runs: Path, name: str, *, resources: Path) -> Path:
    """``runs/<name>``, with ``resources`` linked in (the downloads every run shares; models come from the Hub
    cache)."""
    folder = runs / name
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "resources"
    if not link.exists() and not link.is_symlink():
        resources.mkdir(parents=True, exist_ok=True)
        link.symlink_to(resources.resolve(), target_is_directory=True)
    return folder


def write_settings(path: Path, config: dict, command: Sequence[str]) -> None:
    """The run's complete configuration, with the command that wrote it."""
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        f"# written by `{shlex.join(command)}` on {stamp}: the run's complete configuration, the only\n"
        f"# configuration file Snakemake reads for this run (the docs' configuration reference documents each key)\n"
    )
    write_text(header + yaml.safe_dump(config, sort_keys=False, allow_unicode=True), path)


def unwritable(path: Path, where: Path, what: str) -> ConfigError:
    """The one line for ``path`` of a run that its user cannot write; ``where`` is the run's ``what`` (its
    folder, its results) to make writable."""
    return ConfigError(
        f"{path} cannot be written (mode {path.stat().st_mode & 0o777:o}): make the run's {what} writable "
        f"(chmod -R u+w {where}) or run in another folder (--run NAME); nothing was run"
    )


@contextmanager
def run_lock(folder: Path) -> Iterator[None]:
    """Hold the run: one ``plmfair run`` at a time writes its settings and runs its Snakemake (a second
    is refused at once, changing nothing); a Snakemake already working in it is refused too."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        fh = open(folder / ".plmfair.lock", "w")  # noqa: SIM115 - held for the run, closed below
    except PermissionError:
        raise unwritable(folder, folder, "folder") from None
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise ConfigError(
                f"run {folder.name} is being run by another plmfair command; wait for it to finish "
                f"(nothing was changed)"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def being_run_now(folder: Path) -> bool:
    """Whether a ``plmfair run`` holds the run now (:func:`run_lock`), asked without taking it."""
    lock = folder / ".plmfair.lock"
    try:
        fh = open(lock)  # noqa: SIM115 - held only for the question
    except OSError:
        return False  # no lock file (never run by plmfair run), or one this user cannot read
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
    return False


def snakemake_locked(folder: Path) -> bool:
    """Whether a Snakemake holds (or held, and was killed holding) the run folder's lock."""
    locks = folder / ".snakemake" / "locks"
    return locks.is_dir() and any(locks.iterdir())
