"""The run's hypotheses: every marked test of every study, its family, adjusted p and mark."""

from plmfair.io.parquet import write_parquet
from plmfair.logs import configure_logging
from plmfair.multiplicity import DECIDED_SCHEMA
from plmfair.runs.hypotheses import run_hypotheses

configure_logging(snakemake)
write_parquet(
    df=run_hypotheses(files=snakemake.params.files, alpha=snakemake.params.alpha),
    path=snakemake.output.hypotheses,
    schema_doc=DECIDED_SCHEMA,
)
