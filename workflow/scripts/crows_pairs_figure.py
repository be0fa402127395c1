"""Score per bias type per model with 95% intervals."""

from plmfair.io import read_parquet
from plmfair.logs import configure_logging
from plmfair.plots import crows_pairs_figure

configure_logging(snakemake)
crows_pairs_figure(
    summary=read_parquet(path=snakemake.input.summary), png=snakemake.output.png, pdf=snakemake.output.pdf
)
