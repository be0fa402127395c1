"""Figure 1 of the MozArt paper: MRR per group per language."""

from plmfair.cloze.figures import mozart_mrr_figure
from plmfair.cloze.schemas import read_metrics
from plmfair.logs import configure_logging

configure_logging(snakemake)
mozart_mrr_figure(
    metrics=read_metrics(path=snakemake.input.metrics), png=snakemake.output.png, pdf=snakemake.output.pdf
)
