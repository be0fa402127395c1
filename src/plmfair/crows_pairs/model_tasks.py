"""What one model does in the CrowS-Pairs study, as tasks that one load of it serves
(:mod:`plmfair.scoring.shared_load`): each data set it scores. Every scoring job of the model builds
the same tasks here, so what one of them scored ahead is found by the others under the same key.
Torch-free: a job whose file another job wrote imports no model library.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plmfair.crows_pairs import plan
from plmfair.crows_pairs.schemas import PAIR_SCHEMA
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.scoring.model_settings import model_precision
from plmfair.scoring.shared_load import Task

if TYPE_CHECKING:  # the loaded model's type only: this module is torch-free
    from plmfair.scoring.loader import LoadedModel
    from plmfair.scoring.specs import ModelSpec

STUDY = plan.STUDY  # the scoring cache's folder of these tasks


def pair_task(
    dataset: str,
    model: str,
    *,
    protocol: str,
    precision: str,
    own_precision: str,
    too_long: str,
    unknown_tokens: str,
    entry: dict,
    token_budget: int,
    threads: int,
    extra_pass: bool = False,
) -> Task:
    """A CrowS-Pairs data set scored by ``model`` under ``protocol`` and ``precision``: its own scoring, or an
    extra pass of the robustness analysis (a task of the same load, labelled ``<dataset>+<protocol>-<precision>``;
    another precision than the load's, ``own_precision``, scores the load's copy in it)."""
    if extra_pass:
        label, scores = f"{dataset}+{protocol}-{precision}", plan.pass_scores_file(dataset, model, protocol, precision)
    else:
        label, scores = dataset, plan.crows_pairs_scores_file(dataset, model)
    return Task(
        label,
        inputs=(plan.DATA.format(dataset=dataset),),
        outputs={"scores": scores},
        settings={
            "model": entry,
            "protocol": protocol,
            "precision": precision,
            "too_long": too_long,
            "unknown_tokens": unknown_tokens,
            "token_budget": token_budget,
            "threads": threads,
        },
        loading={"precision": own_precision},
    )


def job_task(
    snakemake: Any,
    dataset: str,
    model: str,
    *,
    protocol: str | None = None,
    precision: str | None = None,
    **job: Any,
) -> Task:
    """A scoring job's own task from what its rule declares (``snakemake.params``: the precision the model runs
    in, the too-long and unknown-token rules, and the protocol of its own scoring), never from the
    configuration; ``protocol`` and ``precision``: an extra pass's."""
    params = snakemake.params
    return pair_task(
        dataset,
        model,
        protocol=protocol or params.protocol,
        precision=precision or params.precision,
        own_precision=params.precision,
        too_long=params.too_long,
        unknown_tokens=params.unknown_tokens,
        extra_pass=protocol is not None,
        **job,
    )


def set_task(
    config: dict,
    dataset: str,
    model: str,
    *,
    entry: dict,
    token_budget: int,
    threads: int,
    protocol: str | None = None,
    precision: str | None = None,
) -> Task:
    """The same task as another job of the model declares it (:func:`job_task`), from the configuration by the
    plan functions its rule's params call: what this job's load scores ahead for it."""
    own = model_precision(config, model, STUDY)
    return pair_task(
        dataset,
        model,
        protocol=protocol or plan.crows_pairs_protocol(config, model),
        precision=precision or own,
        own_precision=own,
        too_long=config["crows_pairs"]["too_long"],
        unknown_tokens=config["crows_pairs"]["unknown_tokens"],
        entry=entry,
        token_budget=token_budget,
        threads=threads,
        extra_pass=protocol is not None,
    )


def model_tasks(config: dict, model: str, **job: Any) -> list[Task]:
    """Every CrowS-Pairs task of ``model`` in the run: each data set under its own protocol and precision,
    and under each other pass of the robustness analysis."""
    own = [set_task(config, ds, model, **job) for ds, m in plan.crows_pairs_jobs(config) if m == model]
    return own + [
        set_task(config, ds, model, protocol=p, precision=q, **job)
        for ds, m, p, q in plan.pass_jobs(config)
        if m == model
    ]


def load_model(spec: ModelSpec, task: Task, threads: int) -> LoadedModel:
    """The model loaded as ``task`` needs it."""
    # torch and transformers only in the job that loads the model: a job whose file another job of
    # the model wrote imports neither
    from plmfair.scoring.loader import load

    return load(spec, precision=task.loading["precision"], threads=threads)


def score(loaded: LoadedModel, task: Task, paths: Mapping[str, Path], scored_by: str) -> None:
    """Write ``task``'s per-pair scores to ``paths`` with the loaded model; the metadata names the
    data set whose job loaded it."""
    from plmfair.crows_pairs.scoring_job import score_loaded  # torch: as in load_model

    if task.settings["precision"] != loaded.precision:  # a pass in full precision: the load's copy in it
        loaded = loaded.in_precision(task.settings["precision"])
    scores, meta = score_loaded(
        read_parquet(path=task.inputs[0]),
        loaded,
        protocol=task.settings["protocol"],
        too_long=task.settings["too_long"],
        unknown_tokens=task.settings["unknown_tokens"],
        token_budget=task.settings["token_budget"],
    )
    meta["scored_in_job_of"] = scored_by
    write_parquet(df=scores, path=paths["scores"], schema_doc=PAIR_SCHEMA, meta=meta)
