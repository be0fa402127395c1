"""t-SNE coordinates of every model's top predictions per quadruple, and their figure."""

import pandas as pd

from plmfair.cloze.figures import tsne_figure
from plmfair.cloze.tsne import TSNE_SCHEMA, project
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
vectors = pd.concat([read_parquet(path=path) for path in snakemake.input.vectors], ignore_index=True)
coordinates = project(vectors=vectors, perplexity=snakemake.params.perplexity, seed=snakemake.params.seed)
write_parquet(df=coordinates, path=snakemake.output.coordinates, schema_doc=TSNE_SCHEMA)
tsne_figure(coordinates=coordinates, png=snakemake.output.png, pdf=snakemake.output.pdf)
