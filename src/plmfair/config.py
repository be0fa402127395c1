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
    _check_cloze(config)
    files: dict[str, tuple[str, dict]] = {}
    for where, entry in download_entries(config).items():
        if entry["file"] in files:
            other_where, other = files[entry["file"]]
            # several members of one archive name the same file: fine when it is the same download
            if (entry.get("url"), entry.get("sha256")) != (other.get("url"), other.get("sha256")):
                raise ConfigError(
                    f"config error at {where}.file: {entry['file']!r} is also the file of {other_where} with another "
                    f"url or sha256; downloads need distinct file names"
                )
            continue
        files[entry["file"]] = (where, entry)


def _check_cloze(config: dict) -> None:
    cloze = config.get("cloze", {})
    models = config.get("models", {})
    spacy = cloze.get("spacy", {})
    for i, name in enumerate(cloze.get("models", [])):
        if name not in models:
            raise ConfigError(
                f"config error at cloze.models.{i}: model {name!r} is not declared under `models` (declared: {sorted(models)})"
            )
    classes = len(cloze.get("filters", {}).get("pos", ["NOUN", "VERB", "ADJ", "ADV"]))
    n = cloze.get("sample", {}).get("n", 100)
    if cloze.get("corpora") and n % classes:
        raise ConfigError(
            f"config error at cloze.sample.n: {n} quadruples cannot be balanced across {classes} POS classes; "
            f"use a multiple of {classes}"
        )
    for name, corpus in cloze.get("corpora", {}).items():
        where = f"cloze.corpora.{name}"
        langs = list(corpus["text"])
        pivot = corpus.get("pivot", "en")
        if pivot not in langs:
            raise ConfigError(f"config error at {where}.pivot: {pivot!r} is not one of the text languages {langs}")
        for key in ("alignments", "align_extra", "answers"):
            for lang in corpus.get(key, {}):
                if lang not in langs or (key != "answers" and lang == pivot):
                    allowed = [x for x in langs if key == "answers" or x != pivot]
                    raise ConfigError(f"config error at {where}.{key}.{lang}: not a language of the corpus ({allowed})")
        for lang in langs:
            if lang not in spacy:
                raise ConfigError(
                    f"config error at cloze.spacy: no spaCy pipeline for {lang!r} (used by {where}); add "
                    f"`{lang}: <pipeline name>` (for example {lang}_core_news_sm)"
                )


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
        for lang, pair in corpus.get("align_extra", {}).items():
            for side, entry in pair.items():
                out[f"{where}.align_extra.{lang}.{side}"] = entry
    for lang, entry in config.get("cloze", {}).get("spacy", {}).items():
        if isinstance(entry, dict):
            out[f"cloze.spacy.{lang}.lexicon"] = entry["lexicon"]
    return out
