"""Counts per language of each ready-made cloze test and per CrowS-Pairs data set."""

from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging
from plmfair.runs.data_summary import DATA_SUMMARY_SCHEMA, data_summary

configure_logging(snakemake)
write_parquet(
    df=data_summary(
        cloze_tests={name: read_parquet(path=path) for name, path in snakemake.params.cloze_tests.items()},
        crows={name: read_parquet(path=path) for name, path in snakemake.params.crows_pairs.items()},
    ),
    path=snakemake.output.summary,
    schema_doc=DATA_SUMMARY_SCHEMA,
)
