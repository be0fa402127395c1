"""What each rule's jobs ask a scheduler for: memory and run time as functions of their input.

On SLURM the declared ``mem_mb`` is the job's limit (a job past it is killed) and ``runtime`` its
time limit; on a workstation ``mem_mb`` keeps Snakemake from starting more jobs than the memory
holds. So each rule declares what its jobs need at the size of their input (Snakemake resource
callables): a base (the interpreter and libraries the job imports, measured on the demo) plus a
slope per MB of input, fitted from ``make bench-cloze`` (cloze construction, 10,000 to 1,000,000
lines) and the demo's benchmark files; a scoring job adds its model's weights (from the model's
manifest, :func:`model_mb`). A retried job (``--retries``) asks for ``attempt`` times as much.
``benchmarks/bench_cloze.py`` prints each stage's measured peak beside what it declared and
fails if one used more. The fits and their measurements are in docs/performance.md.

Rules use ``mem_mb=resources.mem_mb("cloze_align")`` and ``runtime=resources.runtime(...)``; a
user's ``--set-resources`` still overrides them.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plmfair.registry import Registry


@dataclass(frozen=True)
class Need:
    """A rule's declared memory ``mem_base_mb + mem_per_input_mb x input MB`` and run time
    ``runtime_base_min + runtime_per_input_gb_min x input GB`` (input: the job's input files,
    plus the model's weights for a scoring job)."""

    mem_base_mb: int
    mem_per_input_mb: float
    runtime_base_min: int
    runtime_per_input_gb_min: float = 0.0

    def mem_mb(self, input_mb: float) -> int:
        return int(math.ceil((self.mem_base_mb + self.mem_per_input_mb * input_mb) / 100) * 100)

    def runtime(self, input_mb: float) -> int:
        return int(math.ceil(self.runtime_base_min + self.runtime_per_input_gb_min * input_mb / 1024))


# A job that reads tables and writes tables or figures: Python, pandas, pyarrow, matplotlib (under
# 300 MB on the demo) and a few copies of its input.
LIGHT = Need(1000, 4.0, 10, 10.0)
# A job that loads a model: torch and transformers (about 500 MB on the demo), then the weights,
# held once in the file's precision and once converted, and the activations of a token budget
# (make bench: a BERT-base shape, 710 MB of weights, peaks at 2,386 MB of 5,130 declared; an
# XLM-R-base shape, 1,110 MB, at 3,907 of 6,330).
SCORING = Need(3000, 3.0, 120, 120.0)

# The shared rules' fits; each study declares its own rules' (:attr:`plmfair.studies.StudyWorkflow.needs`), and
# :func:`plmfair.studies.rule_need` finds a rule's.
NEEDS: Registry[Need] = Registry(
    "rule",
    {
        "build_tiny_model": Need(2000, 4.0, 10),
        "fetch_model": Need(1000, 0.0, 120),
        "model_manifest": Need(1000, 0.0, 30),
        "download": Need(500, 0.0, 30),
    },
)


def need(rule: str) -> Need:
    """A shared rule's need: its own fit, or that of a light table-and-figure job."""
    return NEEDS.get(rule, LIGHT)


def model_mb(manifest: str | None) -> float:
    """MB of a model's weight files, from its manifest (``resources/manifests/<model>.json``); 0 when
    the manifest is not written yet (Snakemake evaluates the need again when the job starts)."""
    if not manifest or not Path(manifest).is_file():
        return 0.0
    files = json.loads(Path(manifest).read_text(encoding="utf-8")).get("files", [])
    weights = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack")
    return sum(f.get("bytes", 0) for f in files if str(f.get("file", "")).endswith(weights)) / 2**20


def _input_mb(input: Any) -> float:
    """MB of a job's input files (0 for one not written yet), with its model's weights. Local files are
    stat'ed here: Snakemake's ``input.size_mb`` runs an event loop per call, 2 ms a job, which was a
    quarter of planning 1,000 models x 10 data sets; a remote (storage) file is sized by its plugin."""
    files = list(input) if input is not None else []
    if any(getattr(f, "is_storage", False) for f in files):
        size = float(getattr(input, "size_mb", 0) or 0)
    else:
        size = sum(_local_bytes(f) for f in files) / 2**20
    return size + model_mb(getattr(input, "model", None)) if hasattr(input, "model") else size


def _local_bytes(path: str | os.PathLike) -> int:
    try:
        return os.path.getsize(path)
    except OSError:  # not written yet: sized again when the job starts
        return 0


def mem_mb(need: Need) -> Callable[[Any, Any, int], int]:
    """A resource callable: the MB a job with ``need`` declares for its input, times its attempt."""

    def declared(wildcards: Any, input: Any, attempt: int) -> int:  # Snakemake passes them by these names
        return need.mem_mb(_input_mb(input)) * attempt

    return declared


def runtime(need: Need) -> Callable[[Any, Any, int], int]:
    """A resource callable: the minutes a job with ``need`` declares for its input, times its attempt."""

    def declared(wildcards: Any, input: Any, attempt: int) -> int:  # Snakemake passes them by these names
        return need.runtime(_input_mb(input)) * attempt

    return declared
