"""What is in the data: each study's counts of the data sets it ingested (plmfair.runs.data_summary)."""

from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging
from plmfair.runs.data_summary import DATA_SUMMARY_SCHEMA, data_summary

configure_logging(snakemake)
frames = {
    study: {name: read_parquet(path=path) for name, path in files.items()}
    for study, files in snakemake.params.studies.items()
}
write_parquet(df=data_summary(frames), path=snakemake.output.summary, schema_doc=DATA_SUMMARY_SCHEMA)
