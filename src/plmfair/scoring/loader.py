"""Load a model of any family, and measure its scoring the same way for every study.

:func:`load` returns a :class:`LoadedModel`: the model (eval mode, on the device, in the
precision asked for), its tokenizer, and :meth:`LoadedModel.scorer`, the family's
:class:`~plmfair.scoring.base.Scorer`. :meth:`LoadedModel.stopwatch` times the scoring
(loading excluded) with CUDA synchronised before both readings, and
:meth:`LoadedModel.metadata` is the run metadata every result file carries.

Models load through the transformers Auto class of their family with
``trust_remote_code=False``. Before any weight is read, a local folder must hold
config.json and safetensors weights, and the checkpoint's architecture must be one the
family loads (else the error names the family that fits). PyTorch pickles load only with
``allow_pickle: true``. Weights must cover the model: a missing tensor, which transformers
would fill with random values, stops the run.
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
    """``auto``: the visible GPU with the most free memory (so that jobs started side by side on a
    workstation with several GPUs spread over them), else the CPU."""
    if requested != "auto":
        return torch.device(requested)
    if not torch.cuda.is_available():
        return torch.device("cpu")
    free = [torch.cuda.mem_get_info(i)[0] for i in range(torch.cuda.device_count())]
    return torch.device("cuda", free.index(max(free)))


def device_name(device: torch.device) -> str:
    """``cpu``, or ``cuda (<GPU name>)``."""
    return f"cuda ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else str(device)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")
OFFLINE_HINT = ("Without network access, download it elsewhere (`hf download {id} --local-dir DIR`), copy DIR here "
                "and set models.{name}.path: DIR in your config")


def check_local_folder(spec: ModelSpec) -> None:
    """A local model folder must exist and hold config.json and safetensors weights (pickles only
    with ``allow_pickle``)."""
    folder = Path(spec.source)
    where = f"model {spec.name!r}: local folder {folder}"
    if not folder.is_dir():
        raise ModelError(f"{where} does not exist; build or download the model there, or set models.{spec.name}.path "
                         f"to the folder holding its config.json and weights")
    if not (folder / "config.json").is_file():
        raise ModelError(f"{where} has no config.json; a model folder holds config.json, the tokenizer files and "
                         f"*.safetensors weights, as save_pretrained writes them; fix models.{spec.name}.path")
    files = [f.name for f in folder.iterdir() if f.is_file()]
    if any(f.endswith(".safetensors") for f in files):
        return
    pickles = sorted(f for f in files if f.endswith(PICKLE_SUFFIXES))
    if not pickles:
        raise ModelError(f"{where} has no weights (*.safetensors); copy the model's weights there")
    if not spec.allow_pickle:
        raise ModelError(f"{where} has PyTorch pickle weights only ({', '.join(pickles)}); plmfair loads safetensors "
                         f"only, because unpickling a file can run code. Convert them to safetensors, or, if you trust "
                         f"the file, set models.{spec.name}.allow_pickle: true")


def check_family(spec: ModelSpec) -> None:
    """The checkpoint's architecture must be one the family's Auto class loads; otherwise say which family fits."""
    from transformers import AutoConfig
    from transformers.models.auto import modeling_auto

    from plmfair.scoring import FAMILIES

    try:
        config = AutoConfig.from_pretrained(spec.source, **_where_from(spec))
    except (OSError, ValueError) as exc:
        raise ModelError(f"model {spec.name!r} ({spec.source}): its config.json cannot be read ({_first_line(exc)}). "
                         + OFFLINE_HINT.format(id=spec.hf_id or spec.source, name=spec.name)) from None
    model_type = config.model_type
    fits = [f.name for f in FAMILIES.values() if model_type in getattr(modeling_auto, f.auto_mapping)]
    if spec.family in fits:
        return
    arch = ", ".join(getattr(config, "architectures", None) or [model_type])
    hint = (f"it fits family {' or '.join(fits)}: set models.{spec.name}.family: {fits[0]}" if fits
            else f"no plmfair family ({', '.join(FAMILIES)}) can score it")
    raise ModelError(f"model {spec.name!r} ({spec.source}) is a {model_type} model ({arch}), which family "
                     f"{spec.family!r} cannot load; {hint}")


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _where_from(spec: ModelSpec) -> dict:
    """A local folder is read as it is (never a download); a Hub id at its revision."""
    if spec.is_local:
        return {"local_files_only": True, "trust_remote_code": False}
    return {"revision": spec.revision, "trust_remote_code": False}


def _from_pretrained(cls, spec: ModelSpec, **kwargs):
    """``cls.from_pretrained`` for the spec: safetensors only (pickles with ``allow_pickle``), and
    every load error as one line naming the model."""
    from safetensors import SafetensorError

    common = _where_from(spec)
    try:
        try:
            return cls.from_pretrained(spec.source, use_safetensors=True, **common, **kwargs)
        except (OSError, ValueError) as exc:
            if "safetensors" not in str(exc).lower():
                raise
            if not spec.allow_pickle:
                raise ModelError(
                    f"model {spec.name!r} ({spec.source}) has no safetensors weights; plmfair loads safetensors only, "
                    f"because unpickling a file can run code. Convert them, or, if you trust the file, set "
                    f"models.{spec.name}.allow_pickle: true") from None
            log.warning("model %s: loading its PyTorch pickle weights (allow_pickle: true)", spec.name)
            return cls.from_pretrained(spec.source, use_safetensors=False, **common, **kwargs)
    except SafetensorError as exc:
        raise ModelError(f"model {spec.name!r} ({spec.source}): its weights cannot be read ({_first_line(exc)}); the "
                         f"file is truncated or corrupt: download or build the model again") from None
    except (OSError, ValueError) as exc:
        raise ModelError(f"model {spec.name!r} ({spec.source}) could not be loaded: {_first_line(exc)}. "
                         + OFFLINE_HINT.format(id=spec.hf_id or spec.source, name=spec.name)) from None


def load_tokenizer(spec: ModelSpec):
    """The model's tokenizer (fast, from its own files)."""
    from transformers import AutoTokenizer

    return _from_pretrained(AutoTokenizer, spec)


def load_weights(cls, spec: ModelSpec, **kwargs):
    """The model with its weights, which must cover it: a tensor missing from the checkpoint would be
    filled with random values (a folder with the encoder only, a classifier given as a masked LM),
    so it stops the run. Unexpected tensors (a pretraining head the scoring does not use, such as
    BERT's next-sentence head) are logged."""
    model, info = _from_pretrained(cls, spec, output_loading_info=True, **kwargs)
    missing = sorted(info.get("missing_keys") or [])
    mismatched = sorted(str(k[0]) if isinstance(k, tuple) else str(k) for k in info.get("mismatched_keys") or [])
    if missing or mismatched:
        problem = (f"lacks {len(missing)} tensor(s) the {type(model).__name__} needs ({', '.join(missing[:8])}"
                   f"{', ...' if len(missing) > 8 else ''})" if missing
                   else f"has tensors of the wrong shape ({', '.join(mismatched[:8])})")
        raise ModelError(f"model {spec.name!r} ({spec.source}): the checkpoint {problem}; transformers would fill them "
                         f"with random weights. Give a checkpoint of the whole {spec.family} model (with its language "
                         f"modelling head)")
    if info.get("unexpected_keys"):
        log.info("model %s: %d checkpoint tensor(s) not used by %s (%s)", spec.name, len(info["unexpected_keys"]),
                 type(model).__name__, ", ".join(sorted(info["unexpected_keys"])[:5]))
    return model


def architecture(model: torch.nn.Module, tokenizer) -> dict:
    """The ``model_*`` facts of :data:`plmfair.models.MODEL_METADATA_SCHEMA` read off the loaded
    model and tokenizer: parameters, layers, hidden size, vocabulary, tokenizer kind, maximum length."""
    from plmfair.scoring.base import max_input_length

    cfg = model.config

    def first(*names):
        return next((v for n in names if isinstance(v := getattr(cfg, n, None), int)), None)

    layers = first("num_hidden_layers", "n_layer", "num_layers", "n_layers")
    if getattr(cfg, "is_encoder_decoder", False) and layers is not None:
        layers += first("num_decoder_layers") or layers
    out_emb = model.get_output_embeddings()
    backend = getattr(tokenizer, "backend_tokenizer", None)
    return {
        "model_parameters": sum(p.numel() for p in model.parameters()),
        "model_layers": layers,
        "model_hidden_size": first("hidden_size", "d_model", "n_embd", "emb_dim", "dim"),
        "model_vocab_size": int(out_emb.weight.shape[0]) if out_emb is not None else first("vocab_size", "n_words"),
        "model_tokenizer": type(backend.model).__name__ if backend is not None else type(tokenizer).__name__,
        "model_max_length": max_input_length(model, tokenizer),
    }


def default_token_budget(device: torch.device) -> int:
    """Tokens per forward pass when the job does not set ``resources: token_budget``.

    Measured on an H100 with base-size models over the 1,677 French CrowS-Pairs (README, Speed):
    16,384 was 12% faster than 8,192, 32,768 no faster again and 65,536 slower; the scores were
    the same at every budget. On a CPU larger batches only cost memory."""
    return 16384 if device.type == "cuda" else 8192


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

    def scorer(self, *, token_budget: int = 0, progress: bool = True):
        """The family's :class:`~plmfair.scoring.base.Scorer` for this model; ``token_budget`` 0:
        the device's default (:func:`default_token_budget`)."""
        return scorer_class(self.spec.family)(self.model, self.tokenizer, name=self.spec.name,
                                              uncased=self.spec.uncased,
                                              token_budget=token_budget or default_token_budget(self.device),
                                              progress=progress)

    def stopwatch(self) -> Stopwatch:
        return Stopwatch(self.device)

    def metadata(self, **extra) -> dict:
        """Run metadata: the model entry, precision, device, library versions and ``extra``."""
        import transformers

        return {**self.spec.metadata(), **architecture(self.model, self.tokenizer),
                "precision": self.precision, "device": device_name(self.device),
                "threads": torch.get_num_threads(), "torch": torch.__version__, "transformers": transformers.__version__, **extra}


def load(spec: ModelSpec, *, device: str | torch.device = "auto", precision: str = "fp32",
         threads: int | None = None) -> LoadedModel:
    """Load the model and tokenizer of ``spec`` in eval mode on ``device`` with ``precision``,
    after checking the local folder, the family and the weights (every problem one line).
    ``threads``: the CPU threads torch may use (the job's ``threads:``; None: torch's default)."""
    import transformers

    transformers.utils.logging.disable_progress_bar()
    if precision not in DTYPES:
        raise ConfigError(f"precision must be one of {sorted(DTYPES)}, got {precision!r}")
    if threads:
        torch.set_num_threads(int(threads))
    dev = pick_device(device) if isinstance(device, str) else device
    if spec.is_local:
        check_local_folder(spec)
    check_family(spec)
    cls = getattr(transformers, get_family(spec.family).auto_class)
    tokenizer = load_tokenizer(spec)
    model = load_weights(cls, spec, dtype=DTYPES[precision])
    model.to(dev)
    model.eval()
    return LoadedModel(spec, model, tokenizer, dev, precision)
