"""Score one CrowS-Pairs data set with one model under each protocol and precision other than its own pair
(the extra passes of the robustness analysis), as tasks of the model's one load in the run
(plmfair.crows_pairs.model_tasks): the first loads the model and scores the others with it."""

from functools import partial

from plmfair.crows_pairs import model_tasks
from plmfair.logs import configure_logging
from plmfair.scoring.shared_load import run_workflow_job

configure_logging(snakemake)
for protocol, precision in snakemake.params.passes:
    run_workflow_job(
        snakemake,
        model_tasks,
        partial(model_tasks.job_task, protocol=protocol, precision=precision),
        snakemake.wildcards.dataset,
    )
