"""MozArt zip to one Parquet row per annotation."""

from plmfair.data import MOZART_SCHEMA, read_mozart_zip
from plmfair.io import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
write_parquet(
    read_mozart_zip(snakemake.input.archive, snakemake.params.languages),
    snakemake.output.annotations,
    schema_doc=MOZART_SCHEMA,
)
