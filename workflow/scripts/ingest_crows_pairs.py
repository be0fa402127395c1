"""A CrowS-Pairs file to one Parquet row per pair."""

from plmfair.data import CROWS_SCHEMA, read_crows_pairs
from plmfair.io import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
write_parquet(
    df=read_crows_pairs(path=snakemake.input.raw, fmt=snakemake.params.fmt, lang=snakemake.params.lang),
    path=snakemake.output.pairs,
    schema_doc=CROWS_SCHEMA,
)
