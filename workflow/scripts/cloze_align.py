"""Word alignments pivot -> one language: a Pharaoh file from config, or eflomal symmetrised."""

from plmfair.cloze.construction.alignment import align_files
from plmfair.logs import configure_logging

configure_logging(snakemake)
inputs = snakemake.input
settings = snakemake.params.settings
align_files(
    pivot_tokens=inputs.pivot_tokens,
    tokens=inputs.tokens,
    out=snakemake.output.alignments,
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
