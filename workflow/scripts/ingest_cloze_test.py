"""MozArt zip to one Parquet row per annotation."""

from plmfair.annotations import MOZART_SCHEMA, read_mozart_zip
from plmfair.io import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
write_parquet(
    df=read_mozart_zip(path=snakemake.input.archive, languages=snakemake.params.languages),
    path=snakemake.output.annotations,
    schema_doc=MOZART_SCHEMA,
)
