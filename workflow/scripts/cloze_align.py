"""Word alignments pivot -> one language: a Pharaoh file from config, or eflomal symmetrised."""

from plmfair.alignment import ALIGNMENT_SCHEMA, align_files
from plmfair.io import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
inputs = snakemake.input
settings = snakemake.params.settings
links, meta = align_files(
    pivot_tokens=inputs.pivot_tokens,
    tokens=inputs.tokens,
    pharaoh=inputs.get("pharaoh"),
    pharaoh_member=settings.get("pharaoh_member"),
    extra_pivot=inputs.get("extra_pivot"),
    extra_text=inputs.get("extra_text"),
    extra_members=settings.get("extra_members", (None, None)),
    extra_lines=settings.get("extra_lines"),
    pipelines=settings.get("pipelines"),
    langs=settings["langs"],
    tokenized=settings.get("tokenized", False),
    symmetrisation=settings.get("symmetrisation", "intersection"),
    eflomal_options={**settings.get("eflomal_options", {}), "threads": snakemake.threads},
)
write_parquet(df=links, path=snakemake.output.alignments, schema_doc=ALIGNMENT_SCHEMA, meta=meta)
