"""Every table of results/tables as an HTML table for the Snakemake report."""

from plmfair.logs import configure_logging
from plmfair.tables import write_report_tables

configure_logging(snakemake)
write_report_tables(table_dir="results/tables", out_dir=snakemake.output.tables)
