"""Heatmap of the CrowS-Pairs decisive share per attribute bucket x model, one panel per data set."""

from plmfair.io.parquet import read_parquet
from plmfair.logs import configure_logging
from plmfair.rendering.plots import breakdown_heatmap

configure_logging(snakemake)
breakdown_heatmap(
    table=read_parquet(path=snakemake.input.breakdowns),
    png=snakemake.output.png,
    pdf=snakemake.output.pdf,
    value="score",
    columns="model",
    panels="dataset",
    title="CrowS-Pairs: % of decisive pairs preferring the more stereotyping sentence, by attribute bucket "
    "(descriptive, no test)",
    value_label="decisive share (%); 50: no preference",
    centre=50,
    count="n_decisive",
    count_label="decisive",
    empty_label="no decisive pair",
)
