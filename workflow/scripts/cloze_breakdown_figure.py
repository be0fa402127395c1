"""Heatmap of a cloze set's MRR per attribute bucket x annotator group, one panel per model."""

from plmfair.cloze.annotations import GROUPS
from plmfair.io.parquet import read_parquet
from plmfair.logs import configure_logging
from plmfair.rendering.plots import breakdown_heatmap

configure_logging(snakemake)
table = read_parquet(path=snakemake.input.breakdowns)
breakdown_heatmap(
    table=table[table["lang"] == "all"],
    png=snakemake.output.png,
    pdf=snakemake.output.pdf,
    value="mrr",
    columns="group",
    panels="model",
    title=snakemake.params.title,
    column_order=(*GROUPS, "all"),
    shared_rows=True,
    value_label="MRR over the top 5 (%)",
    count_label="annotations",
)
