"""One table of plmfair.plan.targets.all_tables(): built from its Parquet inputs, written as CSV, Markdown,
LaTeX and the report's HTML."""

from plmfair.io.parquet import read_parquet
from plmfair.logs import configure_logging
from plmfair.rendering.table_format import render_table

configure_logging(snakemake)
out = snakemake.output
render_table(
    frames={role: read_parquet(path=path) for role, path in snakemake.input.items()},
    **snakemake.params.rendering,
    csv=out.csv,
    md=out.md,
    tex=out.tex,
    html=out.html,
)
