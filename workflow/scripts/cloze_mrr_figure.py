"""Figure 1 of the MozArt paper: MRR per group per language."""

from plmfair.io import read_parquet
from plmfair.logs import configure_logging
from plmfair.plots import mozart_mrr_figure

configure_logging(snakemake)
mozart_mrr_figure(
    metrics=read_parquet(path=snakemake.input.metrics), png=snakemake.output.png, pdf=snakemake.output.pdf
)
