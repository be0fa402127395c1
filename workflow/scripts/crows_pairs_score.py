"""Score one CrowS-Pairs data set with one masked or causal LM, loading the model once for all of
its data sets in the run (plmfair.crows_pairs.model_tasks)."""

from plmfair.crows_pairs import model_tasks
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
own = model_tasks.set_task(config, snakemake.wildcards.dataset, model, **job)
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
