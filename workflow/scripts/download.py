"""Fetch one declared file from the mirror or its URL into the shared store, verified by SHA-256, and link
the run's own copy to it."""

from plmfair.io.download import STORE, fetch
from plmfair.logs import configure_logging

configure_logging(snakemake)
# The mirror is where to look, not what the file is: read from config, not a param, so that
# moving the mirror folder reruns nothing.
fetch(
    filename=snakemake.wildcards.file,
    url=snakemake.params.source["url"],
    sha256=snakemake.params.source["sha256"],
    mirror=snakemake.config.get("mirror"),
    dest=snakemake.output.file,
    store=STORE,  # the job runs in the run folder, whose resources/ is the one every run shares
)
