"""Load a model of any family, and measure its scoring the same way for every study.

:func:`load` returns a :class:`LoadedModel`: the model (eval mode, on the device, in the
precision asked for), its tokenizer, and :meth:`LoadedModel.scorer`, the family's
:class:`~plmfair.scoring.base.Scorer`. :meth:`LoadedModel.stopwatch` times the scoring
(loading excluded) with CUDA synchronised before both readings, and
:meth:`LoadedModel.metadata` is the run metadata every result file carries.

Models load through the transformers Auto class of their family with
``trust_remote_code=False``; safetensors weights are preferred and PyTorch pickles are
used only when a model has no other.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from plmfair.errors import ConfigError, ModelError
from plmfair.models import ModelSpec
from plmfair.scoring import get_family, scorer_class

log = logging.getLogger(__name__)

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def pick_device(requested: str = "auto") -> torch.device:
    """``auto``: the GPU when there is one, else the CPU."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(requested)


def device_name(device: torch.device) -> str:
    """``cpu``, or ``cuda (<GPU name>)``."""
    return f"cuda ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else str(device)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


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


class Stopwatch:
    """Wall time of a block, with CUDA synchronised before the start and the end readings."""

    def __init__(self, device: torch.device):
        self.device = device
        self.seconds = float("nan")

    def __enter__(self) -> Stopwatch:
        _sync(self.device)
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        _sync(self.device)
        self.seconds = time.perf_counter() - self._t0


@dataclass
class LoadedModel:
    """A model ready to score: the model, its tokenizer, where and how it runs."""

    spec: ModelSpec
    model: torch.nn.Module
    tokenizer: object
    device: torch.device
    precision: str

    def scorer(self, *, token_budget: int = 8192, progress: bool = True):
        """The family's :class:`~plmfair.scoring.base.Scorer` for this model."""
        return scorer_class(self.spec.family)(self.model, self.tokenizer, name=self.spec.name,
                                              uncased=self.spec.uncased, token_budget=token_budget,
                                              progress=progress)

    def stopwatch(self) -> Stopwatch:
        return Stopwatch(self.device)

    def metadata(self, **extra) -> dict:
        """Run metadata: the model entry, precision, device, library versions and ``extra``."""
        import transformers

        return {**self.spec.metadata(), "precision": self.precision, "device": device_name(self.device),
                "torch": torch.__version__, "transformers": transformers.__version__, **extra}


def load(spec: ModelSpec, *, device: str | torch.device = "auto", precision: str = "fp32") -> LoadedModel:
    """Load the model and tokenizer of ``spec`` in eval mode on ``device`` with ``precision``."""
    import transformers

    transformers.utils.logging.disable_progress_bar()
    if precision not in DTYPES:
        raise ConfigError(f"precision must be one of {sorted(DTYPES)}, got {precision!r}")
    dev = pick_device(device) if isinstance(device, str) else device
    cls = getattr(transformers, get_family(spec.family).auto_class)
    tokenizer = load_tokenizer(spec)
    model = _from_pretrained(cls, spec, dtype=DTYPES[precision])
    model.to(dev)
    model.eval()
    return LoadedModel(spec, model, tokenizer, dev, precision)
