"""Score one CrowS-Pairs data set with one model under a protocol and precision other than its own pair (an
extra pass of the robustness analysis), as a task of the model's one load in the run
(plmfair.crows_pairs.model_tasks)."""

from functools import partial

from plmfair.crows_pairs import model_tasks
from plmfair.logs import configure_logging
from plmfair.scoring.shared_load import run_workflow_job

configure_logging(snakemake)
run_workflow_job(
    snakemake,
    model_tasks,
    partial(model_tasks.set_task, protocol=snakemake.wildcards.protocol, precision=snakemake.wildcards.precision),
    snakemake.wildcards.dataset,
)
