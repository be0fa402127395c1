"""Counts left after each cloze filter, per corpus and language."""

from plmfair.logs import configure_logging
from plmfair.tables import write_construction_table

configure_logging(snakemake)
write_construction_table(
    count_files=snakemake.input.counts, csv=snakemake.output.csv, md=snakemake.output.md, tex=snakemake.output.tex
)
