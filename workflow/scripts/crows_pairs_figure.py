"""Decisive share per bias type per model with the intervals of its sign test and the analysis plan's marks."""

from plmfair.crows_pairs.figures import crows_pairs_figure
from plmfair.io.parquet import read_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
crows_pairs_figure(
    summary=read_parquet(path=snakemake.input.summary),
    plan=read_parquet(path=snakemake.input.plan),
    png=snakemake.output.png,
    pdf=snakemake.output.pdf,
)
