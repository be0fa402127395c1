"""Predictions and answer log-probabilities of one model on one cloze set (MozArt or constructed),
loading the model once for all of its cloze tasks in the run (plmfair.cloze.model_tasks)."""

from plmfair.cloze import model_tasks
from plmfair.logs import configure_logging
from plmfair.scoring.shared_load import run_workflow_job

configure_logging(snakemake)
run_workflow_job(snakemake, model_tasks, model_tasks.set_job_task, snakemake.wildcards.cloze_set)
