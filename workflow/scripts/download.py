"""Fetch one declared file from the mirror or its URL, verified by SHA-256."""

from plmfair.download import fetch
from plmfair.logs import configure_logging

configure_logging(snakemake)
fetch(
    filename=snakemake.wildcards.file,
    url=snakemake.params.url,
    sha256=snakemake.params.sha256,
    mirror=snakemake.params.mirror,
    dest=snakemake.output.file,
)
