"""Score one CrowS-Pairs data set with one masked or causal LM, loading the model once for all of
its data sets in the run (plmfair.crows_pairs.model_tasks)."""

from plmfair.crows_pairs import model_tasks
from plmfair.logs import configure_logging
from plmfair.scoring.shared_load import run_workflow_job

configure_logging(snakemake)
run_workflow_job(snakemake, model_tasks, model_tasks.job_task, snakemake.wildcards.dataset)
