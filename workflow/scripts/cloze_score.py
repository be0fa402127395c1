"""Predictions and answer log-probabilities of one model on one cloze set (MozArt or constructed),
loading the model once for all of its cloze sets in the run (plmfair.scoring.shared_load)."""

from plmfair.cloze import plan
from plmfair.cloze.schemas import ANSWER_SCHEMA
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging
from plmfair.scoring.shared_load import Task, score_with_one_load
from plmfair.scoring.specs import spec_from_entry

configure_logging(snakemake)
config, model = snakemake.config, snakemake.wildcards.model
spec = spec_from_entry(entry=snakemake.params.model, manifest=snakemake.input.model)
OUTPUTS = ("predictions", "answer_scores")


def task(cloze_set: str) -> Task:
    inputs = plan.cloze_set_inputs(config, cloze_set)
    # everything that decides a set's scores besides its files and the model's
    settings = {
        "model": snakemake.params.model,
        "scoring": plan.cloze_set_scoring(config, cloze_set, model),
        "token_budget": int(snakemake.resources.token_budget),
        "threads": snakemake.threads,
    }
    return Task(
        cloze_set,
        inputs=(inputs["sentences"], *inputs["answers"]),
        outputs={kind: plan.cloze_scores_file(cloze_set, kind, model) for kind in OUTPUTS},
        settings=settings,
    )


def load_model():
    # torch and transformers only in the job that loads the model: a job whose files another job
    # of the model wrote imports neither
    from plmfair.scoring.loader import load

    return load(spec, precision=snakemake.params.scoring["precision"], threads=snakemake.threads)


def score(loaded, task: Task, paths, scored_by: str) -> None:
    from plmfair.cloze.scoring_job import PREDICTION_SCHEMA, fill_cloze_set  # torch: as in load_model

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
    meta["scored_in_job_of"] = scored_by  # the set whose job loaded the model and scored this one
    write_parquet(df=predictions, path=paths["predictions"], schema_doc=PREDICTION_SCHEMA, meta=meta)
    write_parquet(df=answer_scores, path=paths["answer_scores"], schema_doc=ANSWER_SCHEMA, meta=meta)


score_with_one_load(
    task(snakemake.wildcards.cloze_set),
    [task(name) for name in plan.model_cloze_sets(config, model)],
    model=model,
    study="cloze",
    model_files=[snakemake.input.model],
    load=load_model,
    score=score,
)
