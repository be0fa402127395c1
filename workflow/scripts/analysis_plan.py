"""The run's analysis plan: every marked test of every study, its family, adjusted p and mark."""

from plmfair.io.parquet import write_parquet
from plmfair.logs import configure_logging
from plmfair.multiplicity import ANALYSIS_PLAN_SCHEMA
from plmfair.runs.analysis_plan import analysis_plan

configure_logging(snakemake)
write_parquet(
    df=analysis_plan(files=snakemake.params.files, alpha=snakemake.params.alpha),
    path=snakemake.output.plan,
    schema_doc=ANALYSIS_PLAN_SCHEMA,
)
