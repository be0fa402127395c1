"""The run's results record, results/run.json (and its rendering for the report)."""

from plmfair.logs import configure_logging
from plmfair.runs.record import run_record, write_run_record

configure_logging(snakemake)
write_run_record(
    record=run_record(
        config=snakemake.params.config,
        models=next(iter(snakemake.input.models), None),
        model_runs=snakemake.input.model_runs,
        studies=snakemake.params.studies,
        plan=next(iter(snakemake.input.plan), None),
        data=snakemake.input.data,
        pinned=snakemake.params.pinned,
        published=snakemake.input.published,
        sealed_in=".",  # the job runs in the run folder
    ),
    json_path=snakemake.output.record,
    html_path=snakemake.output.html,
)
