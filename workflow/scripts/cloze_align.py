"""Word alignments pivot -> one language: a Pharaoh file from config, or eflomal symmetrised."""

from plmfair.alignment import ALIGNMENT_SCHEMA, align_files
from plmfair.io import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
inputs = snakemake.input
links, meta = align_files(
    inputs.pivot_tokens,
    inputs.tokens,
    pharaoh=inputs.get("pharaoh"),
    extra_pivot=inputs.get("extra_pivot"),
    extra_text=inputs.get("extra_text"),
    **dict(snakemake.params.settings),
)
write_parquet(links, snakemake.output.alignments, schema_doc=ALIGNMENT_SCHEMA, meta=meta)
