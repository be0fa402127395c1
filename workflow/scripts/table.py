"""The tables of one job of plmfair.plan.output_jobs(): each built from its Parquet inputs and written as CSV,
Markdown, LaTeX and the report's HTML, with its caption in the report."""

from pathlib import Path

from plmfair.io.atomic import write_text
from plmfair.io.parquet import read_parquet
from plmfair.logs import configure_logging
from plmfair.rendering.captions import caption_stub
from plmfair.rendering.table_format import render_table

configure_logging(snakemake)
template = Path(snakemake.input.template).read_text()
for name, table in snakemake.params.outputs.items():
    render_table(
        frames={role: read_parquet(path=path) for role, path in table["inputs"].items()},
        **table["rendering"],
        **table["files"],
    )
    write_text(caption_stub(name, template), table["caption"])
