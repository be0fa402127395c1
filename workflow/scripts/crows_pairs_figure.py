"""Score per bias type per model with 95% intervals."""

from plmfair.crows_pairs.figures import crows_pairs_figure
from plmfair.io.parquet import read_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
crows_pairs_figure(
    summary=read_parquet(path=snakemake.input.summary), png=snakemake.output.png, pdf=snakemake.output.pdf
)
