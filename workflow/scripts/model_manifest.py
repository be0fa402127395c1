"""Sizes and SHA-256 of every file of a local model folder: the input its scoring jobs depend on."""

from plmfair.io.atomic import write_json
from plmfair.logs import configure_logging
from plmfair.scoring.specs import folder_manifest

configure_logging(snakemake)
write_json(obj=folder_manifest(folder=snakemake.params.folder), path=snakemake.output.manifest)
