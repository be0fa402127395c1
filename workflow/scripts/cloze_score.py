"""Predictions and answer log-probabilities of one model on one cloze set (MozArt or constructed),
loading the model once for all of its cloze tasks in the run (plmfair.cloze.model_tasks)."""

from plmfair.cloze import model_tasks
from plmfair.logs import configure_logging
from plmfair.scoring.shared_load import score_with_one_load
from plmfair.scoring.specs import spec_from_entry

configure_logging(snakemake)
config, model = snakemake.config, snakemake.wildcards.model
job = {
    "entry": snakemake.params.model,
    "token_budget": int(snakemake.resources.token_budget),
    "threads": snakemake.threads,
}
own = model_tasks.set_task(config, snakemake.wildcards.cloze_set, model, **job)
spec = spec_from_entry(entry=snakemake.params.model, manifest=snakemake.input.model)
score_with_one_load(
    own,
    model_tasks.model_tasks(config, model, **job),
    model=model,
    study=model_tasks.STUDY,
    model_files=[snakemake.input.model],
    load=lambda: model_tasks.load_model(spec, own, snakemake.threads),
    score=model_tasks.score,
)
