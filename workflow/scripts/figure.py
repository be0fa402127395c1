"""One figure of plmfair.plan.targets.all_figures() drawn by its drawer (a library function) from its Parquet
inputs, as PNG and PDF."""

from plmfair.io.parquet import read_parquet
from plmfair.logs import configure_logging
from plmfair.registry import load_function

configure_logging(snakemake)
drawing = snakemake.params.drawing
load_function(drawing["drawer"])(
    **{role: read_parquet(path=path) for role, path in snakemake.input.items()},
    png=snakemake.output.png,
    pdf=snakemake.output.pdf,
    **drawing["options"],
)
