"""A scoring job reads what its rule declares (issue 78): its own task comes from its rule's inputs and params,
never from the configuration, and equals the task its model's other jobs build for it from the configuration
(the one a shared load scores ahead), so the two cannot drift apart."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import DEMO_CONFIGS, DEMO_DATA, REPO

from plmfair.cloze import model_tasks as cloze_tasks
from plmfair.crows_pairs import model_tasks as crows_tasks


class Refused(dict):
    """A configuration no job's own task may read: any key asked for fails the test, naming it."""

    def __getitem__(self, key):
        raise AssertionError(f"the job read config[{key!r}], which its rule does not pass")

    def get(self, key, default=None):
        return self[key]


def demo_scoring_jobs(workdir: Path) -> tuple[list, dict]:
    """Every scoring job of the demo (with its bitext corpus and robustness analysis) as Snakemake plans it, and
    the run's configuration."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, ResourceSettings

    with SnakemakeApi(OutputSettings(dryrun=True, quiet={Quietness.ALL})) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            config_settings=ConfigSettings(configfiles=list(DEMO_CONFIGS), config={"mirror": str(DEMO_DATA)}),
            snakefile=REPO / "Snakefile",
            workdir=workdir,
        )
        workflow.dag(DAGSettings(targets=set())).execute_workflow(pseudo_executor="dryrun")
        inner = workflow._workflow
        kinds = ("crows_pairs_score", "crows_pairs_pass_score", "cloze_score", "tsne_vectors")
        jobs = [job for job in inner.dag.jobs if job.rule.name.startswith(kinds)]
        return jobs, inner.config


def own_tasks(job) -> list:
    """The tasks a job builds for itself, from a ``snakemake`` object holding its rule's inputs and params and a
    configuration that refuses every read."""
    snakemake = SimpleNamespace(params=job.params, input=job.input, wildcards=job.wildcards, config=Refused())
    model, settings = job.wildcards_dict["model"], {"entry": job.params.model, "token_budget": 0, "threads": 1}
    name = job.rule.name
    if name == "crows_pairs_score":
        builders = [crows_tasks.job_task]
    elif name.startswith("crows_pairs_pass_score"):
        builders = [partial(crows_tasks.job_task, protocol=p, precision=q) for p, q in job.params.passes]
    else:
        builders = [cloze_tasks.set_job_task if name == "cloze_score" else cloze_tasks.tsne_job_task]
    label = job.wildcards_dict.get("dataset") or job.wildcards_dict["cloze_set"]
    return [build(snakemake, label, model, **settings) for build in builders]


@pytest.mark.e2e
def test_a_scoring_jobs_own_task_is_what_its_rule_declares_and_what_its_models_other_jobs_build(tmp_path):
    jobs, config = demo_scoring_jobs(tmp_path)
    assert {job.rule.name for job in jobs} >= {"crows_pairs_score", "crows_pairs_pass_score", "cloze_score"}
    checked = 0
    for job in jobs:
        model = job.wildcards_dict["model"]
        settings = {"entry": job.params.model, "token_budget": 0, "threads": 1}
        study = crows_tasks if job.rule.name.startswith("crows_pairs") else cloze_tasks
        ahead = study.model_tasks(config, model, **settings)
        for task in own_tasks(job):
            assert task in ahead, (job.rule.name, job.wildcards_dict, task)
            checked += 1
    assert checked >= len(jobs)
