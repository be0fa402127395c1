"""Configuration checks: the JSON schema (through ``snakemake.utils.validate``), then the
cross-references of :func:`check_config` (names declared, families that fit the study,
languages of the data, corpora consistent, downloads distinct). Imports run one way: this
module reads the plan (:mod:`plmfair.plan`), the plan never validates.

Every problem is reported as one line that names the key: ``config error at
models.xlmr_base.family: 'mllm' is not one of ['causal', 'mlm', 'seq2seq']``.
"""

from __future__ import annotations

import ast
import copy
import functools
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plmfair.errors import ConfigError, did_you_mean
from plmfair.plan.downloads import download_entries
from plmfair.scoring import FAMILIES
from plmfair.scoring.model_settings import is_built, model_specs
from plmfair.studies import STUDIES, STUDY_SCHEMA, DataChoice, section, study_packages

if TYPE_CHECKING:  # jsonschema's types only: it loads where a configuration is validated
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator


def _key_path(error: ValidationError) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "(top level)"


def validate_config(config: dict, schema: Mapping | None = None) -> dict:
    """Validate ``config`` in place against the configuration's schema (:func:`config_schema`, or ``schema``),
    filling its defaults; raise :class:`ConfigError` with one line on failure."""
    # only when a config or a record is validated
    import jsonschema

    schema = config_schema() if schema is None else schema
    _check_moved(config)
    errors = list(_with_defaults()(schema).iter_errors(config))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        if best.validator == "uniqueItems":
            seen: set = set()
            repeated = []
            for x in best.instance:
                if x in seen:
                    repeated.append(x)
                seen.add(x)
            message = f"{repeated[0]!r} is listed twice (each name once: a repeat would count its results twice)"
        elif shapes := _worded_shapes(best):  # the schema's words for "none of these shapes"
            best, message = shapes, shapes.schema["errorMessage"]
        else:
            message = best.message
        if len(message) > 300:  # a value can be huge (a YAML alias bomb): an excerpt
            message = message[:200] + f" ... ({len(message):,} characters)"
        raise ConfigError(f"config error at {_key_path(best)}: {message}") from None
    _check_finite(config)
    check_config(config)
    return config


@functools.cache
def _with_defaults() -> type[Validator]:
    """JSON Schema 2020-12's validator that fills each missing property with its schema's default (a copy of
    it) as it validates (jsonschema's recipe, as Snakemake's ``validate(set_default=True)``)."""
    from jsonschema import Draft202012Validator, validators  # as validate_config: only where one is checked

    check_properties = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(
        validator: Validator, properties: Mapping, instance: object, schema: Mapping
    ) -> Iterator[ValidationError]:
        if isinstance(instance, dict):  # JSON's object, as validator.is_type(instance, "object") reads it
            for name, subschema in properties.items():
                if isinstance(subschema, Mapping) and "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from check_properties(validator, properties, instance, schema)

    return validators.extend(Draft202012Validator, {"properties": set_defaults})


def _worded_shapes(error: ValidationError | None) -> ValidationError | None:
    """The ``anyOf`` that ``error`` is one failed branch of (or is), where the schema words it
    (``errorMessage``): a branch's own complaint ("False was expected") would mislead."""
    while error is not None:
        if error.validator == "anyOf" and "errorMessage" in error.schema:
            return error
        error = error.parent
    return None


def _check_finite(node: object, where: str = "") -> None:
    """Every number of the configuration is finite: JSON Schema's numbers admit YAML's ``.nan`` and ``.inf``,
    which would fail a job minutes later (a confidence level of nan)."""
    if isinstance(node, dict):
        for key, value in node.items():
            _check_finite(value, f"{where}.{key}" if where else str(key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _check_finite(value, f"{where}.{i}")
    elif isinstance(node, float) and not math.isfinite(node):
        raise ConfigError(f"config error at {where}: {node} is not a finite number; give a number")


def check_sections(config: dict, *, source: str) -> None:
    """A user's configuration (``source``: its files) before anything reads it: each section the schema makes
    a mapping is one, and so is each model's entry (a list there is one line naming the key, not a traceback).
    The whole configuration is validated once merged (:func:`validate_config`)."""
    sections = schema_properties()
    for key, value in config.items():
        if sections.get(key, {}).get("type") == "object" and not isinstance(value, dict):
            raise ConfigError(f"config error at {key} (in {source}): {value!r} is not a mapping; write {key}: {{...}}")
    for name, entry in (config.get("models") or {}).items():
        if not isinstance(entry, dict):
            raise ConfigError(
                f"config error at models.{name} (in {source}): {entry!r} is not a mapping; write "
                f"{name}: {{path: ..., family: ...}} or {name}: {{hf_id: ..., family: ...}}"
            )


def _check_moved(config: dict) -> None:
    """A key of an earlier version's config, named with where it lives now (the schema alone would only
    say that it is not allowed): the studies' (:attr:`plmfair.studies.StudyConfig.moved`) and the shared ones."""
    moved = {**MOVED, **{key: words for study in STUDIES.values() for key, words in study.config.moved.items()}}
    for key, words in moved.items():
        *path, last = key.split(".")
        if last in section(config, path):
            raise ConfigError(f"config error at {key}: {words}")


# keys of an earlier version's shared sections, with what to do instead
MOVED = {
    "analysis.bootstrap": "no interval a run prints is a bootstrap's any more (each is one whose coverage make "
    "bench-stats measures: docs/statistics.md); remove the key",
}


# The schema of the sections every study shares, beside the workflow (plmfair is installed from its checkout);
# each study package's own part is beside its code (plmfair.studies.study_packages).
SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


@functools.cache
def _config_schema() -> dict:
    import yaml  # as validate_config: only where a configuration is read

    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    kinds = schema["properties"]["datasets"].setdefault("properties", {})
    for package in study_packages():
        where = f"src/plmfair/{package.name}/{STUDY_SCHEMA}"
        fragment = yaml.safe_load(package.schema.read_text(encoding="utf-8")) or {}
        for part, into in (("datasets", kinds), ("properties", schema["properties"])):
            for key, value in (fragment.get(part) or {}).items():
                if key in into:
                    raise ConfigError(
                        f"{where}: {part}.{key} is declared twice (once more in the shared schema or "
                        "another study's); give it another name"
                    )
                into[key] = _shared(value, schema, where)
    return schema


def config_schema() -> dict:
    """The configuration's JSON schema: the shared sections (:data:`SCHEMA`) with each study package's data set
    kinds (under ``datasets``) and sections (:func:`plmfair.studies.study_packages`), its ``x-shared: NAME``
    entries replaced by the shared schema's ``x-NAME``; a copy, made from one reading."""
    return copy.deepcopy(_config_schema())


def _shared(node: object, schema: dict, where: str) -> object:
    """``node`` of a study's schema with each ``x-shared: NAME`` of its mappings merged from the shared
    schema's ``x-NAME`` (the mapping's own keys win, as YAML's merge keys)."""
    if isinstance(node, list):
        return [_shared(item, schema, where) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _shared(value, schema, where) for key, value in node.items() if key != "x-shared"}
    if "x-shared" in node:
        name = f"x-{node['x-shared']}"
        if name not in schema:
            raise ConfigError(
                f"{where}: x-shared: {node['x-shared']} names nothing (the shared schema has "
                f"{', '.join(k[2:] for k in schema if k.startswith('x-'))})"
            )
        out = {**copy.deepcopy(schema[name]), **out}
    return out


@functools.cache
def schema_properties() -> dict:
    """The top-level keys of the configuration schema (:func:`config_schema`), read once."""
    return config_schema()["properties"]


def load_config(paths: list[str | os.PathLike], *, schema: Mapping | None = None) -> dict:
    """The configuration a run gets from ``--configfile`` files: merged key by key in order, as
    Snakemake merges them, then validated with the schema's defaults filled in
    (:func:`validate_config`), so that tools run before Snakemake read what the workflow reads."""
    # only when a config or a record is read
    import yaml
    from snakemake.utils import update_config

    config: dict = {}
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            update_config(config, yaml.safe_load(fh) or {})
    return validate_config(config, schema)


def schema_default(key: str) -> Any:
    """The configuration schema's default of ``key`` (dotted: ``analysis.alpha``), for a tool run outside a
    run's configuration (``plmfair compare``) that takes the same setting."""
    value = validate_config({})
    for part in key.split("."):
        value = value[part]
    return value


def known_languages(config: dict) -> list[str]:
    """Every language some data set the config declares is in; an entry switched off (``enabled: false``)
    is not read: it may name no files (a default corpus left out by a config file of its own)."""
    return sorted(
        {
            lang
            for study in STUDIES.values()
            for choice in study.data.choices
            for entry in choice.entries(config).values()
            if entry.get("enabled", True)
            for lang in choice.languages(entry)
        }
    )


def check_config(config: dict) -> None:
    """Names used by the studies must be declared and fit the study; one line naming the key otherwise."""
    specs = model_specs(config)
    _check_data_folders(config)
    for registered in STUDIES.values():
        if registered.config.check:
            registered.config.check(config)
    # every model list: each study's, and those of its data sets' entries that may carry their own
    lists = [(study, f"{study}.models", config[study].get("models") or []) for study in STUDIES]
    lists += [
        (name, f"{'.'.join(choice.declared)}.{entry_name}.models", entry.get("models") or [])
        for name, study in STUDIES.items()
        for choice in study.data.choices
        if choice.own_models
        for entry_name, entry in choice.entries(config).items()
    ]
    for study, key, names in lists:
        for i, name in enumerate(names):
            where = f"config error at {key}.{i}"
            if name not in specs:
                raise ConfigError(
                    f"{where}: model {name!r} is not declared under `models`{did_you_mean(name, specs)} "
                    f"(declared: {sorted(specs)})"
                )
            family = FAMILIES[specs[name].family]
            if not family.scores(study):
                able = sorted(f.name for f in FAMILIES.values() if f.scores(study))
                raise ConfigError(
                    f"{where}: {name!r} is a {family.name} model; the {study} study scores the families {able}"
                )
    known = known_languages(config)
    for name, spec in specs.items():
        for i, lang in enumerate(spec.languages):
            if lang not in known:
                raise ConfigError(
                    f"config error at models.{name}.languages.{i}: {lang!r} is not a language of any data set"
                    f"{did_you_mean(lang, known)} (languages of the data: {known})"
                )
    for name, spec in specs.items():
        if spec.path:
            # loaded when called: Snakemake's own pattern, where a local folder is given
            from snakemake.pathvars import PATHVAR_REGEX

            pathvar = PATHVAR_REGEX.search(spec.path)
            if pathvar:  # the rules' paths would be rewritten (<results> -> results) or stop the run
                raise ConfigError(
                    f"config error at models.{name}.path: {spec.path} holds {pathvar.group(0)}, which Snakemake "
                    f"reads in a path as a path variable (pathvars); move the folder, or link it, to a path "
                    f"without <...>"
                )
        if spec.path and not is_built(config, name) and not Path(spec.path).is_dir():
            raise ConfigError(
                f"config error at models.{name}.path: folder {spec.path} does not exist (relative paths "
                f"start from the working directory {Path.cwd()}); give the folder holding the model"
            )
        if spec.path and spec.revision is not None:
            raise ConfigError(
                f"config error at models.{name}.revision: a revision pins a commit of a Hugging Face id (hf_id), "
                f"and this model is the folder {spec.path}, whose files are hashed instead: remove revision"
            )
    _check_downloads(config)


def _check_data_folders(config: dict) -> None:
    """Each data set ingested at ``results/data/<name>/`` (a study's output ``results/data/{name}/``) has a
    name of its own: no other such data set's, and no folder a study keeps there itself
    (``results/data/crows_pairs/``)."""
    kept = {
        output.split("/")[2]: study.title
        for study in STUDIES.values()
        for output in study.outputs.folders
        if output.startswith("results/data/") and "{" not in output
    }
    claimed: dict[str, DataChoice] = {}
    for study in STUDIES.values():
        if "results/data/{name}/" not in study.outputs.folders:
            continue
        for choice in study.data.choices:
            for name in choice.entries(config):
                where = f"config error at {'.'.join(choice.declared)}.{name}"
                if name in kept:
                    raise ConfigError(
                        f"{where}: results/data/{name}/ holds the {kept[name]} data sets; give the {choice.noun} "
                        f"another name"
                    )
                other = claimed.setdefault(name, choice)
                if other is not choice:
                    raise ConfigError(f"{where}: {other.kind} has that name; give the {choice.noun} another name")


def _check_downloads(config: dict) -> None:
    """A download is a plain file name; entries naming the same file must be the same download
    (several members of one archive)."""
    files: dict[str, tuple[str, dict]] = {}
    for where, entry in download_entries(config).items():
        name = entry["file"]
        if name in (".", "..") or "/" in name or "\\" in name:
            raise ConfigError(
                f"config error at {where}.file: {name!r} is not a plain file name; give the name the file "
                f"is stored under in resources/downloads/, results/downloads/ and in the mirror (no folder, no '..')"
            )
        if entry["file"] in files:
            other_where, other = files[entry["file"]]
            if (entry.get("url"), entry.get("sha256")) != (other.get("url"), other.get("sha256")):
                raise ConfigError(
                    f"config error at {where}.file: {entry['file']!r} is also the file of {other_where} with another "
                    f"url or sha256; downloads need distinct file names"
                )
            continue
        files[entry["file"]] = (where, entry)


# Resources every plmfair rule reads as a whole number (Snakemake's own mem/disk/runtime also take
# "16GB" and "2h"); an expression over these names is Snakemake's and is left to it.
INTEGER_RESOURCES = ("mem_mb", "mem_mib", "disk_mb", "disk_mib", "gpu", "cpus_per_gpu", "token_budget")
_EXPRESSION_NAMES = {
    "input",
    "threads",
    "attempt",
    "wildcards",
    "params",
    "resources",
    "rulename",
    "min",
    "max",
    "int",
    "round",
    "abs",
    "float",
    "len",
    "sum",
}


def _bad_override(raw: object, *, integer: bool) -> bool:
    """Whether a ``--set-threads``/``--set-resources`` value cannot be what Snakemake takes: an
    integer where one is needed, or an expression naming something Snakemake does not give it."""
    if raw is None or isinstance(raw, bool):
        return True
    if isinstance(raw, int):
        return raw < 0
    try:
        tree = ast.parse(str(raw).strip(), mode="eval")
    except SyntaxError:  # "2h", "16GB": Snakemake reads them where a size or a time span is meant
        return integer
    if isinstance(tree.body, ast.Constant):
        value = tree.body.value
        return (not isinstance(value, int) or value < 0) if integer else False
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return bool(names - _EXPRESSION_NAMES)


def check_overrides(
    threads: Mapping[str, object], resources: Mapping[str, Mapping[str, object]], rules: Iterable[str]
) -> None:
    """Refuse, in one line each, ``--set-threads`` and ``--set-resources`` values Snakemake would
    otherwise fail on deep in its scheduler (``crows_pairs_score=two``: a 55-line traceback) or a
    rule name that matches no rule (silently ignored). ``threads``: rule -> raw value;
    ``resources``: rule -> resource -> raw value; ``rules``: the workflow's rule names."""
    problems = []
    for option, given in (
        ("--set-threads", {r: {"threads": v} for r, v in threads.items()}),
        ("--set-resources", resources),
    ):
        for rule, values in given.items():
            if rule not in rules:
                problems.append(f"{option} {rule}: no rule of that name{did_you_mean(rule, rules)}")
                continue
            for name, raw in values.items():
                if _bad_override(raw, integer=name == "threads" or name in INTEGER_RESOURCES):
                    shown = f"{rule}={raw}" if name == "threads" else f"{rule}:{name}={raw}"
                    example = f"{rule}=4" if name == "threads" else f"{rule}:{name}=8000"
                    problems.append(
                        f"{option} {shown}: {name} takes a whole number (or an expression of input, "
                        f"threads, attempt), e.g. {option} {example}"
                    )
    if problems:
        raise ConfigError("; ".join(problems))
