"""The figures of one job of plmfair.plan.output_jobs(): each drawn by its drawer (a library function) from its
Parquet inputs, as PNG and PDF, with its caption in the report."""

from pathlib import Path

from plmfair.io.atomic import write_text
from plmfair.io.parquet import read_parquet
from plmfair.logs import configure_logging
from plmfair.registry import load_function
from plmfair.rendering.captions import caption_stub

configure_logging(snakemake)
template = Path(snakemake.input.template).read_text()
for name, figure in snakemake.params.outputs.items():
    drawing = figure["drawing"]
    load_function(drawing["drawer"])(
        **{role: read_parquet(path=path) for role, path in figure["inputs"].items()},
        **figure["files"],
        **drawing["options"],
    )
    write_text(caption_stub(name, template), figure["caption"])
