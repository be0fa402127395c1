"""Counts per MozArt language and per CrowS-Pairs data set."""

from plmfair.data import data_summary
from plmfair.io import read_parquet, write_csv
from plmfair.logs import configure_logging

configure_logging(snakemake)
mozart = read_parquet(snakemake.input.mozart[0]) if snakemake.input.mozart else None
crows = {
    name: read_parquet(path)
    for name, path in zip(snakemake.params.crows_pairs, snakemake.input.crows_pairs, strict=True)
}
write_csv(data_summary(mozart, crows), snakemake.output.csv)
