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

import atexit
import gc
import logging
import pickle
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from plmfair.errors import ConfigError, ModelError
from plmfair.scoring import FAMILIES, family_by_class_name, get_family, scorer_class
from plmfair.scoring.base import Scorer, input_device, max_input_length
from plmfair.scoring.specs import ModelSpec
from plmfair.scoring.tokenization import check_tokenizer_packages, install_hint

if TYPE_CHECKING:  # transformers loads when a model does
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

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
OFFLINE_HINT = (
    "Without network access, download it elsewhere (`hf download {id} --local-dir DIR`), copy DIR here "
    "and set models.{name}.path: DIR in your config"
)


def what_to_fix(spec: ModelSpec) -> str:
    """The fix a load error suggests: a local folder is what the user has (never told to download
    itself); a Hub model can be downloaded elsewhere."""
    if spec.is_local:
        return "Check the folder's files (config.json, tokenizer files, weights) against a working copy of the model"
    return OFFLINE_HINT.format(id=spec.hf_id, name=spec.name)


def check_local_folder(spec: ModelSpec) -> None:
    """A local model folder must exist and hold config.json and safetensors weights (pickles only
    with ``allow_pickle``)."""
    folder = Path(spec.source)
    where = f"model {spec.name!r}: local folder {folder}"
    if not folder.is_dir():
        raise ModelError(
            f"{where} does not exist; build or download the model there, or set models.{spec.name}.path "
            f"to the folder holding its config.json and weights"
        )
    if not (folder / "config.json").is_file():
        raise ModelError(
            f"{where} has no config.json; a model folder holds config.json, the tokenizer files and "
            f"*.safetensors weights, as save_pretrained writes them; fix models.{spec.name}.path"
        )
    files = [f.name for f in folder.iterdir() if f.is_file()]
    if any(f.endswith(".safetensors") for f in files):
        return
    pickles = sorted(f for f in files if f.endswith(PICKLE_SUFFIXES))
    if not pickles:
        raise ModelError(f"{where} has no weights (*.safetensors); copy the model's weights there")
    if not spec.allow_pickle:
        raise ModelError(
            f"{where} has PyTorch pickle weights only ({', '.join(pickles)}); plmfair loads safetensors "
            f"only, because unpickling a file can run code. Convert them to safetensors, or, if you trust "
            f"the file, set models.{spec.name}.allow_pickle: true"
        )


def checkpoint_families(config: PretrainedConfig) -> list[str]:
    """The families a checkpoint is, read off what it is: the classes ``config.architectures``
    names, looked up in transformers' Auto tables (a class they do not list by what its name says,
    :func:`plmfair.scoring.family_by_class_name`), else its ``model_type``. A class in two tables
    (XLM's and FlauBERT's ``*WithLMHeadModel``) is a masked LM unless the config makes it causal;
    so is a model type without architectures that has both."""
    # transformers is heavy: only the jobs that load a model import it
    from transformers.models.auto import modeling_auto

    def tables(name: str, *, by_class: bool) -> list[str]:
        out = []
        for family in FAMILIES.values():
            table = getattr(modeling_auto, family.auto_mapping)
            if (name in table.values()) if by_class else (name in table):
                out.append(family.name)
        return out

    def one(fits: list[str]) -> list[str]:
        if len(fits) < 2:
            return fits
        if getattr(config, "causal", False) or getattr(config, "is_decoder", False):
            return ["causal"] if "causal" in fits else fits[:1]
        return ["mlm"] if "mlm" in fits else ["seq2seq"] if "seq2seq" in fits else fits[:1]

    found: list[str] = []
    for arch in getattr(config, "architectures", None) or []:
        fits = one(tables(arch, by_class=True))
        if not fits:  # a class the Auto tables do not list: its name says what it is
            named = family_by_class_name(arch, config.model_type)
            fits = [named] if named else []
        found += [f for f in fits if f not in found]
    return found or one(tables(config.model_type, by_class=False))


def check_family(spec: ModelSpec) -> None:
    """The checkpoint must be of the declared family (:func:`checkpoint_families`); otherwise one line
    naming the declared family and the one that fits, before any weight is read or score written."""
    # transformers is heavy: only the jobs that load a model import it
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(spec.source, **_where_from(spec))
    except (OSError, ValueError) as exc:
        raise ModelError(
            f"model {spec.name!r} ({spec.source}): its config.json cannot be read ({_first_line(exc)}). "
            + what_to_fix(spec)
        ) from None
    if getattr(config, "auto_map", None):
        log.info(
            "model %s: its config.json names its own code (auto_map: %s); plmfair never runs a model's own code "
            "and loads transformers' class for model_type %r",
            spec.name,
            ", ".join(sorted(config.auto_map)),
            config.model_type,
        )
    fits = checkpoint_families(config)
    if spec.family in fits:
        return
    arch = ", ".join(getattr(config, "architectures", None) or [config.model_type])
    hint = (
        f"it is a {fits[0]} model ({FAMILIES[fits[0]].description}): set models.{spec.name}.family: {fits[0]}"
        if fits
        else f"no plmfair family ({', '.join(FAMILIES)}) can score it"
    )
    raise ModelError(
        f"model {spec.name!r} ({spec.source}) is declared family {spec.family!r} but its checkpoint is a {arch}; {hint}"
    )


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _where_from(spec: ModelSpec) -> dict:
    """A local folder is read as it is (never a download); a Hub id at its revision."""
    if spec.is_local:
        return {"local_files_only": True, "trust_remote_code": False}
    return {"revision": spec.revision, "trust_remote_code": False}


def _from_pretrained(cls: Any, spec: ModelSpec, **kwargs: Any) -> Any:
    """``cls.from_pretrained`` for the spec: safetensors only (pickles with ``allow_pickle``), and
    every load error as one line naming the model."""
    # only when a checkpoint is read
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
                    f"models.{spec.name}.allow_pickle: true"
                ) from None
            log.warning("model %s: loading its PyTorch pickle weights (allow_pickle: true)", spec.name)
            try:
                return cls.from_pretrained(spec.source, use_safetensors=False, **common, **kwargs)
            except pickle.UnpicklingError as unpickling:  # torch's weights-only load refused what the file holds
                raise ModelError(
                    f"model {spec.name!r} ({spec.source}): its pickle weights hold objects other than tensors "
                    f"({_first_line(unpickling)[:160]}); they were not loaded, since unpickling them could run "
                    f"code: use weights saved as tensors only, best as safetensors"
                ) from None
    except SafetensorError as exc:
        raise ModelError(
            f"model {spec.name!r} ({spec.source}): its weights cannot be read ({_first_line(exc)}); the "
            f"file is truncated or corrupt: download or build the model again"
        ) from None
    except (OSError, ValueError) as exc:
        package = _required_package(exc)
        if package:
            raise ModelError(
                f"model {spec.name!r} ({spec.source}): loading it needs {package}, not installed; run "
                f"{install_hint([package])}"
            ) from None
        raise ModelError(
            f"model {spec.name!r} ({spec.source}) could not be loaded: {_first_line(exc)}. {what_to_fix(spec)}"
        ) from None


def _required_package(exc: Exception) -> str | None:
    """The package an error says must be installed (transformers words it several ways), else None.
    A bare SentencePiece file read without sentencepiece is reported as a missing ``tiktoken``: it
    needs sentencepiece (and protobuf), not tiktoken."""
    text = str(exc)
    match = re.search(
        r"`?([\w.-]+)`? is required|[Yy]ou need to (?:install|have) ([\w.-]+)|pip install ([\w.-]+)", text
    )
    if not match:
        return None
    package = next(g for g in match.groups() if g)
    return "sentencepiece protobuf" if package == "tiktoken" else package


def load_tokenizer(spec: ModelSpec) -> PreTrainedTokenizerBase:
    """The model's tokenizer from its own files: Rust-backed where transformers has one (a bare
    SentencePiece ``.model`` file is converted, which needs sentencepiece and protobuf), else its
    Python tokenizer (FlauBERT's needs sacremoses). A missing package is one line with the pip
    command, checked before transformers gets to misname it."""
    # transformers is heavy: only the jobs that load a model import it
    from transformers import AutoTokenizer

    if spec.is_local:
        check_tokenizer_packages(spec.source, model=spec.name)
    try:
        return _from_pretrained(AutoTokenizer, spec)
    except ImportError as exc:
        raise ModelError(
            f"model {spec.name!r} ({spec.source}): its tokenizer needs a package that is not installed "
            f"({_first_line(exc)}); install it, e.g. {install_hint(['sentencepiece', 'protobuf', 'sacremoses'])}"
        ) from None


def load_weights(cls: Any, spec: ModelSpec, **kwargs: Any) -> PreTrainedModel:
    """The model with its weights, which must cover it: a tensor missing from the checkpoint would be
    filled with random values (a folder with the encoder only, a classifier given as a masked LM),
    so it stops the run. Unexpected tensors (a pretraining head the scoring does not use, such as
    BERT's next-sentence head) are logged."""
    model, info = _from_pretrained(cls, spec, output_loading_info=True, **kwargs)
    missing = sorted(info.get("missing_keys") or [])
    mismatched = sorted(str(k[0]) if isinstance(k, tuple) else str(k) for k in info.get("mismatched_keys") or [])
    if missing or mismatched:
        problem = (
            f"lacks {len(missing)} tensor(s) the {type(model).__name__} needs ({', '.join(missing[:8])}"
            f"{', ...' if len(missing) > 8 else ''})"
            if missing
            else f"has tensors of the wrong shape ({', '.join(mismatched[:8])})"
        )
        raise ModelError(
            f"model {spec.name!r} ({spec.source}): the checkpoint {problem}; transformers would fill them "
            f"with random weights. Give a checkpoint of the whole {spec.family} model (with its language "
            f"modelling head)"
        )
    if info.get("unexpected_keys"):
        log.info(
            "model %s: %d checkpoint tensor(s) not used by %s (%s)",
            spec.name,
            len(info["unexpected_keys"]),
            type(model).__name__,
            ", ".join(sorted(info["unexpected_keys"])[:5]),
        )
    return model


def check_tokenizer_fits(
    spec: ModelSpec, tokenizer: PreTrainedTokenizerBase, model: Any, *, margin: float = 0.1
) -> None:
    """The tokenizer is the model's: it has the vocabulary the model's config declares (less a margin:
    embedding rows are often padded to a round number), and every id it can produce, its special
    tokens' included, has an embedding row. A folder whose tokenizer files are missing gets an empty
    tokenizer from transformers (every word unknown, every pair neutral: a score from text the model
    cannot read); a tokenizer of another model indexes past the embeddings. Either is one line."""
    rows = model.get_input_embeddings().num_embeddings
    declared = int(getattr(model.config, "vocab_size", None) or rows)
    entries = len(tokenizer)
    where = f"model {spec.name!r} ({spec.source})"
    if entries < (1 - margin) * declared:
        raise ModelError(
            f"{where}: the tokenizer has {entries:,} entries, the model's config declares {declared:,}: "
            f"tokenizer files missing (tokenizer.json, vocab.txt, spiece.model, ...) or another "
            f"model's? Give the folder its own tokenizer files"
        )
    vocab = tokenizer.get_vocab()
    highest = max([*vocab.values(), *tokenizer.all_special_ids], default=-1)
    if highest >= rows:
        raise ModelError(
            f"{where}: the tokenizer produces ids up to {highest:,}, the model has {rows:,} embedding rows: "
            f"the tokenizer and the weights come from different models"
        )


def architecture(model: Any, tokenizer: PreTrainedTokenizerBase) -> dict:
    """The ``model_*`` facts of :data:`plmfair.scoring.specs.MODEL_METADATA_SCHEMA` read off the loaded
    model and tokenizer: parameters, layers, hidden size, vocabulary, tokenizer kind, maximum length."""
    cfg = model.config

    def first(*names: str) -> int | None:
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


class Stopwatch:
    """Wall time of a block, with CUDA synchronised before the start and the end readings."""

    def __init__(self, device: torch.device):
        self.device = device
        self.seconds = float("nan")

    def __enter__(self) -> Stopwatch:
        _sync(self.device)
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        _sync(self.device)
        self.seconds = time.perf_counter() - self._t0


@dataclass
class LoadedModel:
    """A model ready to score: the model, its tokenizer, where and how it runs."""

    spec: ModelSpec
    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    device: torch.device
    precision: str
    _copies: dict = field(default_factory=dict, repr=False, compare=False)

    def scorer(self, *, token_budget: int = 0, progress: bool = True) -> Scorer:
        """The family's :class:`~plmfair.scoring.base.Scorer` for this model; ``token_budget`` 0:
        the device's default (:func:`plmfair.scoring.base.default_token_budget`)."""
        return scorer_class(self.spec.family)(
            self.model,
            self.tokenizer,
            name=self.spec.name,
            uncased=self.spec.uncased,
            token_budget=token_budget,
            progress=progress,
        )

    def stopwatch(self) -> Stopwatch:
        return Stopwatch(self.device)

    def in_precision(self, precision: str) -> LoadedModel:
        """The same model loaded again in ``precision`` on the same device, once per job (kept for the
        next data set the job scores)."""
        if precision not in self._copies:
            self._copies[precision] = load(self.spec, device=self.device, precision=precision)
        return self._copies[precision]

    def metadata(self, **extra: Any) -> dict:
        """Run metadata: the model entry, precision, device, library versions and ``extra``."""
        # transformers is heavy: only the jobs that load a model import it
        import transformers

        return {
            **self.spec.metadata(),
            **architecture(self.model, self.tokenizer),
            "precision": self.precision,
            "device": device_name(self.device),
            "device_map": placement(self.model),
            "threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            **extra,
        }


def _device_map_kwargs(spec: ModelSpec) -> dict:
    """``from_pretrained`` arguments that spread a model over the visible devices (accelerate):
    GPUs first, then the CPU, then an offload folder on disk removed when the process ends."""

    offload = tempfile.mkdtemp(prefix=f"plmfair-offload-{spec.name}-")
    atexit.register(shutil.rmtree, offload, ignore_errors=True)
    # GPUs by index, sizes as accelerate reads them ("70GiB", or bytes)
    max_memory = (
        {int(k) if k.isdigit() else k: int(v) if v.isdigit() else v for k, v in spec.max_memory.items()}
        if spec.max_memory
        else None
    )
    return {"device_map": spec.device_map, "max_memory": max_memory, "offload_folder": offload}


def placement(model: torch.nn.Module) -> str:
    """Where a model spread by ``device_map`` lives: its devices and the share of parameters on each
    (``cuda:0 62%, cuda:1 38%``); empty for a model on one device."""
    device_map = getattr(model, "hf_device_map", None)
    if not device_map or len(set(device_map.values())) < 2:
        return ""
    sizes: dict[str, int] = {}
    for name, param in model.named_parameters():
        module = max((m for m in device_map if name == m or name.startswith(m + ".") or m == ""), key=len, default=None)
        where = str(device_map.get(module, "?"))
        where = f"cuda:{where}" if where.isdigit() else where
        sizes[where] = sizes.get(where, 0) + param.numel()
    total = sum(sizes.values())
    return ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in sizes.items())


def load(
    spec: ModelSpec, *, device: str | torch.device = "auto", precision: str = "fp32", threads: int | None = None
) -> LoadedModel:
    """Load the model and tokenizer of ``spec`` in eval mode on ``device`` with ``precision``,
    after checking the local folder, the tokenizer's packages, the family and the weights (every
    problem one line). A spec with ``device_map`` is spread over the devices instead (accelerate;
    ``max_memory`` caps each). ``threads``: the CPU threads torch may use (the job's ``threads:``;
    None: torch's default)."""
    # transformers is heavy: only the jobs that load a model import it
    import transformers

    start = time.perf_counter()
    transformers.utils.logging.disable_progress_bar()
    if precision not in DTYPES:
        raise ConfigError(f"precision must be one of {sorted(DTYPES)}, got {precision!r}")
    if threads:
        torch.set_num_threads(int(threads))
    if spec.is_local:
        check_local_folder(spec)
    check_family(spec)
    cls = getattr(transformers, get_family(spec.family).auto_class)
    tokenizer = load_tokenizer(spec)
    if spec.device_map:
        model = load_weights(cls, spec, dtype=DTYPES[precision], **_device_map_kwargs(spec))
        dev = input_device(model)
        log.info("model %s spread by device_map %s: %s", spec.name, spec.device_map, placement(model) or dev)
    else:
        dev = pick_device(device) if isinstance(device, str) else device
        model = load_weights(cls, spec, dtype=DTYPES[precision])
        model.to(dev)  # type: ignore[arg-type]  # transformers types its wrapped .to without self
    check_tokenizer_fits(spec, tokenizer, model)
    model.eval()
    # torch, transformers and the model are hundreds of thousands of objects that live as long as the
    # job: out of the garbage collector's generations, a collection no longer walks them (one took
    # 0.2 s in the middle of a beam search of the demo's tiny mT5)
    gc.freeze()
    seconds = time.perf_counter() - start
    log.info("loaded %s (%s, %s) on %s in %.1f s", spec.name, spec.source, precision, device_name(dev), seconds)
    return LoadedModel(spec, model, tokenizer, dev, precision)
