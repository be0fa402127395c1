"""The model registry: config entries to loaded transformers models and tokenizers.

A model entry (``models.<name>`` in the config) has ``hf_id`` (a Hugging Face id) or
``path`` (a local folder), ``family`` (``mlm`` or ``seq2seq``), optional ``revision``,
``uncased`` (lower-case input first, as the CrowS-Pairs protocol does for uncased
models) and ``languages`` (the data languages it is evaluated on; empty = all).
Models load through the Auto classes with ``trust_remote_code=False``; safetensors
weights are preferred and PyTorch pickles are used only when a model has no other.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import torch

from plmfair.errors import ConfigError, ModelError

log = logging.getLogger(__name__)

FAMILIES = ("mlm", "seq2seq")


@dataclass(frozen=True)
class ModelSpec:
    """One model entry of the config."""

    name: str
    family: str
    hf_id: str | None = None
    path: str | None = None
    revision: str | None = None
    uncased: bool = False
    languages: tuple[str, ...] = field(default_factory=tuple)

    @property
    def source(self) -> str:
        return self.path if self.path else self.hf_id  # type: ignore[return-value]

    def runs_on(self, lang: str) -> bool:
        return not self.languages or lang in self.languages

    def metadata(self) -> dict:
        return {
            "model": self.name,
            "model_source": self.source,
            "model_revision": self.revision,
            "model_family": self.family,
            "model_uncased": self.uncased,
        }


def model_spec(name: str, entry: dict) -> ModelSpec:
    """Validate one ``models.<name>`` entry and turn it into a :class:`ModelSpec`."""
    if not isinstance(entry, dict):
        raise ConfigError(f"models.{name}: expected a mapping with hf_id or path, family, ...")
    if bool(entry.get("hf_id")) == bool(entry.get("path")):
        raise ConfigError(f"models.{name}: give exactly one of `hf_id` (a Hugging Face id) or `path` (a local folder)")
    family = entry.get("family")
    if family not in FAMILIES:
        raise ConfigError(f"models.{name}.family: expected one of {FAMILIES}, got {family!r}")
    return ModelSpec(
        name=name,
        family=family,
        hf_id=entry.get("hf_id"),
        path=entry.get("path"),
        revision=entry.get("revision"),
        uncased=bool(entry.get("uncased", False)),
        languages=tuple(entry.get("languages") or ()),
    )


def spec_from_entry(entry: dict) -> ModelSpec:
    """A :class:`ModelSpec` from a scoring rule's ``model`` parameter: the ``models.<name>`` entry
    with its ``name`` added (``get_model_entry`` in ``common.smk``)."""
    entry = dict(entry)
    return model_spec(entry.pop("name"), entry)


def pick_device(requested: str = "auto") -> torch.device:
    """``auto``: the GPU when there is one, else the CPU."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(requested)


DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def _from_pretrained(cls, spec: ModelSpec, **kwargs):
    source = spec.source
    if spec.path and not Path(spec.path).is_dir():
        raise ModelError(
            f"model {spec.name!r}: local path {spec.path} does not exist; build or download the model there, "
            f"or set models.{spec.name}.path to the folder holding its config.json and weights"
        )
    common = {"revision": spec.revision, "trust_remote_code": False}
    try:
        return cls.from_pretrained(source, use_safetensors=True, **common, **kwargs)
    except (OSError, ValueError) as first:
        if "safetensors" in str(first).lower() or "model.safetensors" in str(first):
            log.warning("model %s has no safetensors weights; loading its PyTorch weights instead", spec.name)
            try:
                return cls.from_pretrained(source, use_safetensors=False, **common, **kwargs)
            except (OSError, ValueError) as second:
                first = second
        raise ModelError(
            f"model {spec.name!r} ({source}) could not be loaded: {first}. Without network access, download it "
            f"elsewhere (e.g. `huggingface-cli download {spec.hf_id or source} --local-dir DIR`), copy DIR here "
            f"and set models.{spec.name}.path: DIR in your config"
        ) from first


def load_tokenizer(spec: ModelSpec):
    """The model's tokenizer (fast, from its own files)."""
    from transformers import AutoTokenizer

    return _from_pretrained(AutoTokenizer, spec)


def load_model(spec: ModelSpec, *, device: torch.device | str = "cpu", precision: str = "fp32"):
    """Load ``(model, tokenizer)`` for a spec, in eval mode on ``device`` with ``precision``."""
    import transformers

    transformers.utils.logging.disable_progress_bar()
    if precision not in DTYPES:
        raise ConfigError(f"precision must be one of {sorted(DTYPES)}, got {precision!r}")
    if spec.family == "mlm":
        cls = transformers.AutoModelForMaskedLM
    else:
        cls = transformers.AutoModelForSeq2SeqLM
    tokenizer = load_tokenizer(spec)
    model = _from_pretrained(cls, spec, dtype=DTYPES[precision])
    model.to(device)
    model.eval()
    return model, tokenizer


def specs_from_config(config: dict) -> dict[str, ModelSpec]:
    """Every ``models`` entry of the config as a spec."""
    return {name: model_spec(name, entry) for name, entry in (config.get("models") or {}).items()}
