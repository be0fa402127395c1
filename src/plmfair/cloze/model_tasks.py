"""What one model does in the cloze studies, as tasks that one load of it serves
(:mod:`plmfair.scoring.shared_load`): each cloze set it fills (predictions and answer scores) and each
t-SNE vectors file of it. The two kinds of job (``cloze_score``, ``tsne_vectors``) build their tasks
here alike, so what one of them scored ahead is found by the other under the same key. Torch-free:
a job whose files another job wrote imports no model library.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plmfair.cloze import plan
from plmfair.cloze.schemas import ANSWER_SCHEMA, TSNE_VECTORS_SCHEMA
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.scoring.model_settings import model_precision, num_beams
from plmfair.scoring.shared_load import Task

if TYPE_CHECKING:  # the loaded model's type only: this module is torch-free
    from plmfair.scoring.loader import LoadedModel
    from plmfair.scoring.specs import ModelSpec

SET_OUTPUTS = ("predictions", "answer_scores")
STUDY = "cloze"  # the scoring cache's folder of these tasks


def _set_task(
    cloze_set: str, model: str, *, inputs: dict, scoring: dict, entry: dict, token_budget: int, threads: int
) -> Task:
    return Task(
        cloze_set,
        inputs=(str(inputs["sentences"]), *inputs["answers"]),
        outputs={kind: plan.cloze_scores_file(cloze_set, kind, model) for kind in SET_OUTPUTS},
        settings={"model": entry, "scoring": scoring, "token_budget": token_budget, "threads": threads},
        loading={"precision": scoring["precision"]},
    )


def _tsne_task(
    cloze_set: str, model: str, *, annotations: str, scoring: dict, entry: dict, token_budget: int, threads: int
) -> Task:
    return Task(
        f"tsne_{cloze_set}",
        inputs=(annotations,),
        outputs={"vectors": plan.set_file(cloze_set, f"tsne/{model}")},
        settings={"model": entry, "tsne": scoring, "token_budget": token_budget, "threads": threads},
        loading={"precision": scoring["precision"]},
    )


def set_task(config: dict, cloze_set: str, model: str, **job: Any) -> Task:
    """A cloze set filled by ``model`` (its predictions and the scores of its human answers), as another job of
    the model declares it (:func:`set_job_task`), from the configuration by the plan functions its rule calls:
    what this job's load scores ahead for it."""
    inputs, scoring = plan.cloze_set_inputs(config, cloze_set), plan.cloze_set_scoring(config, cloze_set, model)
    return _set_task(cloze_set, model, inputs=inputs, scoring=scoring, **job)


def set_job_task(snakemake: Any, cloze_set: str, model: str, **job: Any) -> Task:
    """A ``cloze_score`` job's own task from what its rule declares (its inputs, ``params.scoring``), never from
    the configuration."""
    answers = snakemake.input.get("answers", [])
    inputs = {"sentences": snakemake.input.sentences, "answers": [answers] if isinstance(answers, str) else answers}
    return _set_task(cloze_set, model, inputs=inputs, scoring=snakemake.params.scoring, **job)


def tsne_task(config: dict, cloze_set: str, model: str, **job: Any) -> Task:
    """The t-SNE vectors of ``model``'s top predictions for a ready-made cloze test's quadruples, as another job
    of the model declares it (:func:`tsne_job_task`), from the configuration."""
    tsne = config["mozart"]["tsne"]
    scoring = {
        "sentences": tsne["sentences"],
        "top_k": tsne["top_k"],
        "num_beams": num_beams(config, model, "mozart"),
        "precision": model_precision(config, model, "mozart"),
    }
    return _tsne_task(cloze_set, model, annotations=plan.annotations_file(cloze_set), scoring=scoring, **job)


def tsne_job_task(snakemake: Any, cloze_set: str, model: str, **job: Any) -> Task:
    """A ``tsne_vectors`` job's own task from what its rule declares, never from the configuration."""
    params = snakemake.params
    scoring = {k: getattr(params, k) for k in ("sentences", "top_k", "num_beams", "precision")}
    return _tsne_task(cloze_set, model, annotations=snakemake.input.annotations, scoring=scoring, **job)


def model_tasks(config: dict, model: str, **job: Any) -> list[Task]:
    """Every cloze task of ``model`` in the run: its cloze sets, then its t-SNE vectors files."""
    sets = [set_task(config, name, model, **job) for name in plan.model_cloze_sets(config, model)]
    tsne = [name for name in plan.tsne_sets(config) if model in plan.tsne_models(config, name)]
    vectors = [tsne_task(config, name, model, **job) for name in tsne]
    return sets + vectors


def load_model(spec: ModelSpec, task: Task, threads: int) -> LoadedModel:
    """The model loaded as ``task`` needs it."""
    # torch and transformers only in the job that loads the model: a job whose files another job
    # of the model wrote imports neither
    from plmfair.scoring.loader import load

    return load(spec, precision=task.loading["precision"], threads=threads)


def score(loaded: LoadedModel, task: Task, paths: Mapping[str, Path], scored_by: str) -> None:
    """Write ``task``'s outputs to ``paths`` with the loaded model; the metadata names the data set
    whose job loaded it."""
    # torch (the scoring job and the vectors' modules): as in load_model
    from plmfair.cloze.scoring_job import PREDICTION_SCHEMA, fill_cloze_set
    from plmfair.cloze.vectors import tsne_vectors

    if "vectors" in task.outputs:
        tsne = task.settings["tsne"]
        vectors, meta = tsne_vectors(
            read_parquet(path=task.inputs[0]),
            loaded,
            s_ids=tsne["sentences"],
            k=tsne["top_k"],
            num_beams=tsne["num_beams"],
            token_budget=task.settings["token_budget"],
        )
        meta["scored_in_job_of"] = scored_by
        write_parquet(df=vectors, path=paths["vectors"], schema_doc=TSNE_VECTORS_SCHEMA, meta=meta)
        return
    scoring, answers = task.settings["scoring"], task.inputs[1:]
    predictions, answer_scores, meta = fill_cloze_set(
        read_parquet(path=task.inputs[0]),
        read_parquet(path=answers[0]) if answers else None,
        loaded,
        langs=scoring["langs"],
        k=scoring["top_k"],
        num_beams=scoring["num_beams"],
        token_budget=task.settings["token_budget"],
    )
    meta["scored_in_job_of"] = scored_by
    write_parquet(df=predictions, path=paths["predictions"], schema_doc=PREDICTION_SCHEMA, meta=meta)
    write_parquet(df=answer_scores, path=paths["answer_scores"], schema_doc=ANSWER_SCHEMA, meta=meta)
