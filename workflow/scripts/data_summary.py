"""Counts per MozArt language and per CrowS-Pairs data set."""

from plmfair.data_summary import DATA_SUMMARY_SCHEMA, data_summary
from plmfair.io import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
write_parquet(
    df=data_summary(
        mozart=read_parquet(path=snakemake.input.mozart[0]) if snakemake.input.mozart else None,
        crows={name: read_parquet(path=path) for name, path in snakemake.params.crows_pairs.items()},
    ),
    path=snakemake.output.summary,
    schema_doc=DATA_SUMMARY_SCHEMA,
)
