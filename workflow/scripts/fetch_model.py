"""Fetch one Hub model at its configured revision into the run's results/models/<hf_id>@<revision>
(hard links into the Hub cache)."""

from plmfair.io.hub import fetch_model
from plmfair.logs import configure_logging
from plmfair.scoring.model_settings import hub_store_names

configure_logging(snakemake)
hub = snakemake.params.hub
fetch_model(
    # the config names of the models fetched into this folder, for the messages only (not a param: naming
    # the same id and revision once more must not fetch it again)
    name=hub_store_names(snakemake.config, snakemake.wildcards.hub_model),
    hf_id=hub["hf_id"],
    revision=hub["revision"],
    allow_pickle=hub["allow_pickle"],
    out_dir=snakemake.output.model,
)
