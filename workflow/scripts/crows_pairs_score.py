"""Score one CrowS-Pairs data set with one masked or causal LM, loading the model once for all of
its data sets in the run (plmfair.scoring.shared_load)."""

from plmfair.crows_pairs import plan
from plmfair.crows_pairs.schemas import PAIR_SCHEMA
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging
from plmfair.scoring.shared_load import Task, score_with_one_load
from plmfair.scoring.specs import spec_from_entry

configure_logging(snakemake)
model = snakemake.wildcards.model
spec = spec_from_entry(entry=snakemake.params.model, manifest=snakemake.input.model)
# everything that decides a data set's scores besides its pairs and the model's files
settings = {
    "model": snakemake.params.model,
    "protocol": snakemake.params.protocol,
    "precision": snakemake.params.precision,
    "too_long": snakemake.params.too_long,
    "token_budget": int(snakemake.resources.token_budget),
    "threads": snakemake.threads,
}


def task(dataset: str) -> Task:
    return Task(
        dataset,
        inputs=(plan.DATA.format(dataset=dataset),),
        outputs={"scores": plan.crows_pairs_scores_file(dataset, model)},
        settings=settings,
    )


def load_model():
    # torch and transformers only in the job that loads the model: a job whose file another job of
    # the model wrote imports neither
    from plmfair.scoring.loader import load

    return load(spec, precision=settings["precision"], threads=snakemake.threads)


def score(loaded, task: Task, paths, scored_by: str) -> None:
    from plmfair.crows_pairs.scoring_job import score_loaded  # torch: as in load_model

    scores, meta = score_loaded(
        read_parquet(path=task.inputs[0]),
        loaded,
        protocol=settings["protocol"],
        too_long=settings["too_long"],
        token_budget=settings["token_budget"],
    )
    meta["scored_in_job_of"] = scored_by  # the data set whose job loaded the model and scored this one
    write_parquet(df=scores, path=paths["scores"], schema_doc=PAIR_SCHEMA, meta=meta)


score_with_one_load(
    task(snakemake.wildcards.dataset),
    [task(ds) for ds, m in plan.crows_pairs_jobs(snakemake.config) if m == model],
    model=model,
    study="crows_pairs",
    model_files=[snakemake.input.model],
    load=load_model,
    score=score,
)
