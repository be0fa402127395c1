"""Counts left after each cloze filter, per corpus and language."""

from plmfair.cloze import write_construction_table
from plmfair.logs import configure_logging

configure_logging(snakemake)
write_construction_table(snakemake.input.counts, **dict(snakemake.output))
