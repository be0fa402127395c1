"""A MODEL argument of ``plmfair run``: ``[name=]folder-or-hub-id[:key=value...]`` read into a
``models.<name>`` entry. A folder must hold a ``config.json`` (checked before anything reads or hashes
it); options are keys of a ``models.<name>`` entry (``mine=../m:uncased=true:revision=abc``), values read
as YAML. Its family is read off its ``config.json`` and an uncased tokenizer (``do_lower_case``) makes it
``uncased``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from plmfair.config import schema_properties
from plmfair.errors import ConfigError, did_you_mean
from plmfair.io.hub import fetch_elsewhere, hub_reachable
from plmfair.scoring import FAMILIES, family_by_class_name
from plmfair.scoring.specs import require_model_folder

MODEL_NAME = re.compile(r"[A-Za-z0-9_]+")


def model_schema() -> dict:
    """The keys of a ``models.<name>`` entry, as the configuration schema gives them."""
    return schema_properties()["models"]["additionalProperties"]["properties"]


def model_options() -> list[str]:
    """The keys a MODEL argument may set (``models.<name>`` keys but its source)."""
    return [key for key in model_schema() if key not in ("path", "hf_id", "build")]


def model_name(source: str) -> str:
    """A config name for a model: the folder's or the id's last part, in letters, digits and ``_``."""
    return re.sub(r"[^A-Za-z0-9_]", "_", Path(source.rstrip("/")).name) or "model"


def detect_family(source: str, *, local: bool, offline: bool = False) -> str:
    """The family of a checkpoint, read off its ``config.json``: a local folder's by its
    architectures' class names when each says one (:func:`plmfair.scoring.family_by_class_name`:
    no transformers, whose import takes seconds; a model type transformers does not know is then
    refused by the scoring job's loader, in one line), otherwise by transformers' Auto tables
    (:func:`plmfair.scoring.loader.checkpoint_families`). A Hub id ``offline`` is read from the Hub cache alone."""
    if local:
        path = Path(source) / "config.json"
        try:
            fields = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ConfigError(
                f"model {source}: {path} is not valid JSON ({exc}); put back the model's own config.json"
            ) from None
        named = _named_family(fields)
        if named:
            return named
    # transformers is heavy: only the jobs that load a model import it
    from transformers import AutoConfig

    # torch (through the loader), as transformers above: only when a checkpoint's family is read off it
    from plmfair.scoring.loader import checkpoint_families

    try:
        config = AutoConfig.from_pretrained(source, local_files_only=local or offline, trust_remote_code=False)
    except (OSError, ValueError) as exc:
        # not in the cache, and --family would not help: its run's fetch job would stop the same way
        if offline and isinstance(exc, OSError):
            raise ConfigError(
                f"model {source}: the Hub cannot be reached and {source} is not in the Hub cache. "
                f"{fetch_elsewhere(source)}, or download it to a folder and give the folder"
            ) from None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"model {source}: its config.json cannot be read ({first}); give its family with "
            f"--family {'|'.join(FAMILIES)}"
        ) from None
    fits = checkpoint_families(config)
    if not fits:
        raise ConfigError(
            f"model {source} is a {config.model_type} model that no plmfair family ({', '.join(FAMILIES)}) can score"
        )
    return fits[0]


def _named_family(fields: object) -> str | None:
    """The family of the first architecture of a ``config.json`` whose model type and every
    architecture name it (None otherwise: the Auto tables decide)."""
    if not isinstance(fields, dict):
        return None
    model_type, architectures = fields.get("model_type"), fields.get("architectures")
    if not isinstance(model_type, str) or not isinstance(architectures, list) or not architectures:
        return None
    named = [family_by_class_name(a, model_type) if isinstance(a, str) else None for a in architectures]
    return named[0] if all(named) else None


def is_uncased(source: str, *, local: bool, offline: bool = False) -> bool:
    """Whether the tokenizer lower-cases its input (``do_lower_case`` in ``tokenizer_config.json``); a Hub
    id's ``offline`` from the Hub cache alone."""
    if local:
        path = Path(source) / "tokenizer_config.json"
    else:
        try:
            # only when the Hub or its cache is asked
            from huggingface_hub import hf_hub_download

            path = Path(hf_hub_download(source, "tokenizer_config.json", local_files_only=offline))
        except Exception:  # noqa: BLE001 - no tokenizer config (or offline): cased, as the config default
            return False
    try:
        return bool(json.loads(path.read_text(encoding="utf-8")).get("do_lower_case", False))
    except (OSError, ValueError):
        return False


@dataclass(frozen=True)
class ModelArgument:
    """A MODEL of the command line: ``[name=]source[:key=value...]``."""

    text: str
    name: str
    source: str
    options: dict = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> ModelArgument:
        spec, *parts = text.split(":")
        options = {}
        allowed = model_options()
        for part in parts:
            key, sep, value = part.partition("=")
            if not sep or not key:
                raise ConfigError(f"model option {part!r} (in {text!r}): write key=value, e.g. {spec}:uncased=true")
            if key not in allowed:
                raise ConfigError(
                    f"model option {key!r} (in {text!r}){did_you_mean(key, allowed)}: the options are "
                    f"{', '.join(allowed)}"
                )
            try:
                options[key] = yaml.safe_load(value) if value else None
            except yaml.YAMLError as exc:
                raise ConfigError(
                    f"model option {part!r} (in {text!r}): {value!r} is not a YAML value "
                    f"({getattr(exc, 'problem', None) or 'cannot be read'}); e.g. "
                    f"{spec}:languages=[fr,en]"
                ) from None
        name, sep, source = spec.partition("=")
        if not sep:
            name, source = model_name(spec), spec
        if not MODEL_NAME.fullmatch(name):
            raise ConfigError(f"model name {name!r} (in {text!r}): use letters, digits and _ only")
        return cls(text, name, source, options)

    def named(self, name: str) -> str:
        """This argument with another name (for a command that keeps two models apart)."""
        options = "".join(
            f":{k}={yaml.safe_dump(v, default_flow_style=True).strip().removesuffix('...').strip()}"
            for k, v in self.options.items()
        )
        return f"{name}={self.source}{options}"


def model_entry(text: str, *, family: str | None = None) -> tuple[str, dict]:
    """``[name=]folder-or-hub-id[:key=value...]`` as (name, ``models.<name>`` entry); a folder by its
    absolute path, checked to be a model folder (``config.json``) before anything reads it."""
    arg = ModelArgument.parse(text)
    folder = Path(arg.source).expanduser()
    local = folder.is_dir()
    if not local and ("/" not in arg.source or arg.source.startswith((".", "/", "~"))):
        raise ConfigError(
            f"model {arg.source!r}: no such folder, and not a Hugging Face id (owner/name); give the "
            f"folder holding config.json and the weights, or a Hub id"
        )
    if local and "revision" in arg.options:
        raise ConfigError(
            f"model {text!r}: revision= pins a commit of a Hugging Face id, and {arg.source} is a local folder "
            f"(its files are hashed into the record instead): drop :revision={arg.options['revision']}"
        )
    if local:
        require_model_folder(folder.resolve())
    where = str(folder.resolve()) if local else arg.source
    entry: dict[str, object] = {"path": where} if local else {"hf_id": arg.source}
    # asked once for both reads: offline, the Hub cache answers at once instead of the Hub client's retries
    offline = not local and not hub_reachable()
    entry["family"] = arg.options.get("family") or family or detect_family(where, local=local, offline=offline)
    if is_uncased(where, local=local, offline=offline):
        entry["uncased"] = True
    entry.update({k: v for k, v in arg.options.items() if k != "family"})
    return arg.name, entry
