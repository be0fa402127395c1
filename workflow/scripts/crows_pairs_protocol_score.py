"""Score one CrowS-Pairs data set with one masked LM under a protocol other than its own (the robustness
analysis), as a task of the model's one load in the run (plmfair.crows_pairs.model_tasks)."""

from functools import partial

from plmfair.crows_pairs import model_tasks
from plmfair.logs import configure_logging
from plmfair.scoring.shared_load import run_workflow_job

configure_logging(snakemake)
run_workflow_job(
    snakemake,
    model_tasks,
    partial(model_tasks.set_task, protocol=snakemake.wildcards.protocol),
    snakemake.wildcards.dataset,
)
