"""A job that is one library function: the rule's ``job`` param names it (plmfair.jobs)."""

from plmfair.jobs import run
from plmfair.logs import configure_logging

configure_logging(snakemake)
run(
    job=snakemake.params.job,
    rule=snakemake.rule,
    inputs={key: value for key, value in snakemake.input.items()},
    outputs={key: value for key, value in snakemake.output.items()},
    params={key: value for key, value in snakemake.params.items() if key != "job"},
    threads=snakemake.threads,
    resources={key: value for key, value in snakemake.resources.items()},
)
