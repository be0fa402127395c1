"""Configuration checks: the JSON schema (through ``snakemake.utils.validate``), then the
cross-references of :func:`plmfair.plan.check_config`; and the list of declared downloads.

Every problem is reported as one line that names the key: ``config error at
models.xlmr_base.family: 'mllm' is not one of ['causal', 'mlm', 'seq2seq']``.
"""

from __future__ import annotations

import os
from pathlib import Path

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
    from plmfair.plan import check_config

    check_config(config)
    return config


# The schema beside the workflow (plmfair is installed from its checkout).
SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


def load_config(paths: list[str | os.PathLike], *, schema: str | os.PathLike = SCHEMA) -> dict:
    """The configuration a run gets from ``--configfile`` files: merged key by key in order, as
    Snakemake merges them, then validated with the schema's defaults filled in
    (:func:`validate_config`), so that tools run before Snakemake read what the workflow reads."""
    import yaml
    from snakemake.utils import update_config

    config: dict = {}
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            update_config(config, yaml.safe_load(fh) or {})
    return validate_config(config, schema)


def download_entries(config: dict) -> dict[str, dict]:
    """Every declared download, keyed by its config location (``datasets.crows_pairs.fr``)."""
    out = {}
    ds = config.get("datasets", {})
    if "mozart" in ds:
        out["datasets.mozart"] = ds["mozart"]
    for name, entry in ds.get("crows_pairs", {}).items():
        out[f"datasets.crows_pairs.{name}"] = entry
    for name, corpus in config.get("cloze", {}).get("corpora", {}).items():
        where = f"cloze.corpora.{name}"
        for key in ("text", "alignments", "answers"):
            for lang, entry in corpus.get(key, {}).items():
                out[f"{where}.{key}.{lang}"] = entry
        for key in ("align_extra", "bitexts", "gold_alignments"):
            for name, group in corpus.get(key, {}).items():
                for side, entry in group.items():
                    if isinstance(entry, dict):
                        out[f"{where}.{key}.{name}.{side}"] = entry
    for lang, entry in config.get("cloze", {}).get("spacy", {}).items():
        if isinstance(entry, dict):
            out[f"cloze.spacy.{lang}.lexicon"] = entry["lexicon"]
    return out
