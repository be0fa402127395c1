"""Precision, recall and AER of the eflomal step on a corpus's gold alignments, per symmetrisation,
with and without the corpus's own text in the run."""

from plmfair.alignment import ALIGNMENT_QUALITY_SCHEMA, GOLD_LINKS_SCHEMA, alignment_quality_files
from plmfair.io import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
inputs = snakemake.input
gold = snakemake.params.gold
quality, links = alignment_quality_files(
    gold_sets={
        name: {**settings, **{key: {"path": inputs[f"{name}__{key}"], "member": member}
                              for key, member in settings["members"].items()}}
        for name, settings in gold.items()
    },
    corpus=snakemake.wildcards.corpus,
    pivot=snakemake.params.pivot["pivot"],
    token_files={key.removeprefix("tokens__"): path for key, path in inputs.items() if key.startswith("tokens__")},
    eflomal_options={**snakemake.params.eflomal_options, "threads": snakemake.threads},
)
write_parquet(df=quality, path=snakemake.output.quality, schema_doc=ALIGNMENT_QUALITY_SCHEMA)
write_parquet(df=links, path=snakemake.output.links, schema_doc=GOLD_LINKS_SCHEMA)
