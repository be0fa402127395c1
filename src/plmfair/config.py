"""Configuration checks: the JSON schema (through ``snakemake.utils.validate``) and cross-references.

Every problem is reported as one line that names the key: ``config error at
models.xlmr_base.family: 'mllm' is not one of ['mlm', 'seq2seq']``.
"""

from __future__ import annotations

import os

from plmfair.errors import ConfigError


def _key_path(error) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "(top level)"


def validate_config(config: dict, schema: str | os.PathLike) -> dict:
    """Validate ``config`` in place (filling defaults); raise :class:`ConfigError` with one line on failure."""
    import jsonschema
    import yaml
    from snakemake.utils import validate

    try:
        validate(config, str(schema), set_default=True)
    except Exception as exc:  # snakemake wraps the jsonschema error in a WorkflowError
        with open(schema, encoding="utf-8") as fh:
            schema_obj = yaml.safe_load(fh)
        errors = list(jsonschema.Draft202012Validator(schema_obj).iter_errors(config))
        if not errors:
            raise ConfigError(f"config error: {exc}") from exc
        best = jsonschema.exceptions.best_match(errors)
        raise ConfigError(f"config error at {_key_path(best)}: {best.message}") from None
    check_references(config)
    return config


def check_references(config: dict) -> None:
    """Names used by the studies must be declared, and of a family the study can use."""
    models = config.get("models", {})
    crows_sets = config.get("datasets", {}).get("crows_pairs", {})
    for study in ("mozart", "crows_pairs"):
        for i, name in enumerate(config.get(study, {}).get("models", [])):
            if name not in models:
                raise ConfigError(
                    f"config error at {study}.models.{i}: model {name!r} is not declared under `models` "
                    f"(declared: {sorted(models)})"
                )
            if study == "crows_pairs" and models[name]["family"] != "mlm":
                raise ConfigError(
                    f"config error at crows_pairs.models.{i}: {name!r} is a {models[name]['family']} model; "
                    f"the CrowS-Pairs protocol needs a masked LM (family: mlm)"
                )
    for i, name in enumerate(config.get("crows_pairs", {}).get("datasets", [])):
        if name not in crows_sets:
            raise ConfigError(
                f"config error at crows_pairs.datasets.{i}: data set {name!r} is not declared under "
                f"datasets.crows_pairs (declared: {sorted(crows_sets)})"
            )
    files: dict[str, str] = {}
    for where, entry in download_entries(config).items():
        if entry["file"] in files:
            raise ConfigError(
                f"config error at {where}.file: {entry['file']!r} is also the file of {files[entry['file']]}; "
                f"downloads need distinct file names"
            )
        files[entry["file"]] = where


def download_entries(config: dict) -> dict[str, dict]:
    """Every declared download, keyed by its config location (``datasets.crows_pairs.fr``)."""
    out = {}
    ds = config.get("datasets", {})
    if "mozart" in ds:
        out["datasets.mozart"] = ds["mozart"]
    for name, entry in ds.get("crows_pairs", {}).items():
        out[f"datasets.crows_pairs.{name}"] = entry
    return out
