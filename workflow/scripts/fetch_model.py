"""Fetch one Hub model at its configured revision into resources/models/<name>."""

from plmfair.hub import fetch_model
from plmfair.logs import configure_logging

configure_logging(snakemake)
hub = snakemake.params.hub
fetch_model(
    name=snakemake.wildcards.hub_model,
    hf_id=hub["hf_id"],
    revision=hub["revision"],
    allow_pickle=hub["allow_pickle"],
    out_dir=snakemake.output.model,
)
