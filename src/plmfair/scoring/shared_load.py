"""One model load for all of a model's scoring jobs in a run.

Each (model, data set) stays its own Snakemake job with its own output files: a data set added
later is one new job, and the others' files are not touched. What the jobs share is the load. The
first job of a model to run loads it, scores its own data set, then every other data set of that
model that is ready (its input files written, its outputs not there yet) and needs the same load
(precision) into the run's scoring cache, ``.plmfair/scoring-cache/<model>/<study>/<data set>.<key>/``;
each later job of the model finds its files there and writes them into place without loading (nor
importing torch). The key is a digest of everything that decides the scores: the input files'
contents, the model's manifest and entry, the job's settings, the plmfair code and the versions of
the scoring libraries, so a file is only ever taken by a job that would have computed it with the
same model and settings (the file's metadata names the device that did). A lock per model keeps
two jobs of it (of any study) from loading it side by side; a cache entry is removed when its job
takes it, and a data set's entries made with other inputs or settings when its job runs.

On a cluster the scoring jobs of a model share a Snakemake group (``score_{model}``), one
allocation whose resources are what its jobs declare together; the first job then does the
scoring of the group and the others copy.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from filelock import FileLock

from plmfair.io.atomic import atomic_path, sha256_of
from plmfair.scoring.specs import spec_from_entry

log = logging.getLogger(__name__)

CACHE_ROOT = Path(".plmfair", "scoring-cache")
Loaded = TypeVar("Loaded")


@dataclass(frozen=True)
class Task:
    """One data set's scoring by a model: what it is called in the logs, the files whose contents
    decide its result, where its outputs go (name -> path), the settings that decide it and how the
    model must be loaded for it (its precision: a load serves only the tasks that need it so)."""

    label: str
    inputs: tuple[str, ...]
    outputs: dict[str, str]
    settings: dict[str, Any] = field(default_factory=dict)
    loading: dict[str, Any] = field(default_factory=dict)

    def ready(self) -> bool:
        """Its inputs are written and its outputs are not: another job may score it ahead."""
        return all(Path(p).exists() for p in self.inputs) and not any(Path(p).exists() for p in self.outputs.values())


# the libraries whose versions decide a score beside plmfair's own code
SCORING_PACKAGES = ("torch", "transformers", "tokenizers", "accelerate")


def code_digest() -> str:
    """A digest of the plmfair package's sources and of the scoring libraries' versions: a scoring
    made by other code is not taken."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    for name in SCORING_PACKAGES:
        try:
            digest.update(f"{name}=={version(name)}".encode())
        except PackageNotFoundError:
            digest.update(f"{name} absent".encode())
    return digest.hexdigest()


def task_key(task: Task, *, model_files: Sequence[str], code: str) -> str:
    """The digest under which ``task``'s result is cached (see the module's docstring)."""
    record = {
        "inputs": [sha256_of(Path(p)) for p in task.inputs],
        "outputs": sorted(task.outputs),
        "model_files": [sha256_of(Path(p)) for p in model_files],
        "settings": task.settings,
        "loading": task.loading,
        "code": code,
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()[:32]


def score_with_one_load(
    own: Task,
    others: Sequence[Task],
    *,
    model: str,
    study: str,
    model_files: Sequence[str],
    load: Callable[[], Loaded],
    score: Callable[[Loaded, Task, dict[str, Path], str], None],
    cache_root: Path = CACHE_ROOT,
) -> None:
    """Write ``own``'s outputs (a data set of ``study``): from the cache when another job of the
    model scored it, else by loading the model (``load``, as ``own.loading`` says) and scoring it
    (``score(loaded, task, paths, scored_by)`` writes the task's outputs to ``paths``), then scoring
    every ready task of ``others`` that needs the same load into the cache. A failure on another
    task is logged and left to that task's own job."""
    folder = Path(cache_root, model, study)
    folder.mkdir(parents=True, exist_ok=True)
    code = code_digest()

    def entry_of(task: Task) -> Path:
        return folder / f"{task.label}.{task_key(task, model_files=model_files, code=code)}"

    with FileLock(folder.parent / ".lock"):  # one per model: its jobs of every study load it in turn
        entry = entry_of(own)
        for stale in folder.iterdir():  # its entries made with other inputs or settings: never taken
            if _label_of(stale) == own.label and stale != entry:
                shutil.rmtree(stale, ignore_errors=True)
        if _complete(entry, own):
            for name, path in own.outputs.items():
                with atomic_path(path) as tmp:  # a write of this job's own (sealed as one)
                    shutil.copyfile(entry / name, tmp)
            shutil.rmtree(entry)
            log.info("%s on %s: taken from the scoring cache (scored with the load of another job)", model, own.label)
            return
        loaded = load()
        score(loaded, own, {n: Path(p) for n, p in own.outputs.items()}, own.label)
        ahead = [
            t
            for t in others
            if t.label != own.label and t.loading == own.loading and t.ready() and not _complete(entry_of(t), t)
        ]
        for task in ahead:
            target = entry_of(task)
            partial = target.with_name(target.name + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir()
            try:
                score(loaded, task, {n: partial / n for n in task.outputs}, own.label)
            except Exception as exc:  # its own job scores it again and reports the error there
                log.warning("%s on %s: not scored ahead (%s); its own job will score it", model, task.label, exc)
                shutil.rmtree(partial, ignore_errors=True)
                continue
            try:
                partial.rename(target)
            except OSError:  # another job wrote it first (a job of the model on another node, unlocked)
                shutil.rmtree(partial, ignore_errors=True)
        log.info(
            "%s: one load for %d task(s) (data sets and extra passes): %s%s",
            model,
            1 + len(ahead),
            own.label,
            f", and ahead of their jobs {', '.join(t.label for t in ahead)}" if ahead else "",
        )


def _label_of(entry: Path) -> str:
    """The task label of a cache entry ``<label>.<key>`` (or of its ``.partial`` folder)."""
    return entry.name.removesuffix(".partial").rpartition(".")[0]


def _complete(entry: Path, task: Task) -> bool:
    return entry.is_dir() and all((entry / name).exists() for name in task.outputs)


def run_workflow_job(snakemake: Any, tasks: ModuleType, own_task: Callable[..., Task], label: str) -> None:
    """A workflow scoring job (``snakemake``: the rule's object) whose task is ``own_task(snakemake, label,
    model, **job)``, built from what its rule declares (its inputs and params); ``tasks`` is its study's module
    of model tasks (``STUDY``, ``model_tasks``, ``load_model``, ``score``: :mod:`plmfair.crows_pairs.model_tasks`,
    :mod:`plmfair.cloze.model_tasks`), the job's settings its ``model`` param, token budget and threads. The
    other tasks of the model, which its one load scores ahead for their own jobs, are built from the
    configuration by the plan functions those jobs' rules call (``model_tasks``), so each is found under the
    key its own job looks for."""
    config, model = snakemake.config, snakemake.wildcards.model
    job = {
        "entry": snakemake.params.model,
        "token_budget": int(snakemake.resources.token_budget),
        "threads": snakemake.threads,
    }
    own = own_task(snakemake, label, model, **job)
    spec = spec_from_entry(entry=snakemake.params.model, manifest=snakemake.input.model)
    score_with_one_load(
        own,
        tasks.model_tasks(config, model, **job),
        model=model,
        study=tasks.STUDY,
        model_files=[snakemake.input.model],
        load=lambda: tasks.load_model(spec, own, snakemake.threads),
        score=tasks.score,
    )
