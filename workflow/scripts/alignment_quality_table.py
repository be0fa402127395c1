"""Alignment quality of the eflomal step on gold alignments, every corpus that names some."""

from plmfair.logs import configure_logging
from plmfair.tables import write_alignment_quality_table

configure_logging(snakemake)
write_alignment_quality_table(
    quality_files=snakemake.input.quality, csv=snakemake.output.csv, md=snakemake.output.md, tex=snakemake.output.tex
)
