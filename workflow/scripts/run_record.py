"""The run's results record, results/run.json (and its rendering for the report)."""

from plmfair.io.atomic import write_text
from plmfair.logs import configure_logging
from plmfair.runs.record import run_record, write_run_record
from plmfair.runs.record_page import record_page

configure_logging(snakemake)
record = run_record(
    config=snakemake.params.config,
    models=next(iter(snakemake.input.models), None),
    model_runs=snakemake.input.model_runs,
    studies=snakemake.params.studies,
    hypotheses=next(iter(snakemake.input.hypotheses), None),
    data=snakemake.input.data,
    pinned=snakemake.params.pinned,
    published=snakemake.input.published,
    sealed_in=".",  # the job runs in the run folder
)
write_run_record(record, json_path=snakemake.output.record)
write_text(record_page(record), snakemake.output.html)
