"""Precision, recall and AER of the eflomal step on a corpus's gold alignments, per symmetrisation,
with and without the corpus's own text in the run."""

from pathlib import Path

from plmfair.cloze.construction.alignment_quality import (
    ALIGNMENT_QUALITY_SCHEMA,
    GOLD_LINKS_SCHEMA,
    alignment_quality_files,
)
from plmfair.io.parquet import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
downloads = {Path(path).name: path for path in snakemake.input.downloads}  # download file names are unique
quality, links = alignment_quality_files(
    gold_sets={
        name: {
            **{key: value for key, value in gold.items() if key != "files"},
            **{role: {"path": downloads[ref["file"]], "member": ref["member"]} for role, ref in gold["files"].items()},
        }
        for name, gold in snakemake.params.gold.items()
    },
    corpus=snakemake.wildcards.corpus,
    pivot=snakemake.params.langs[0],
    token_files=snakemake.params.token_files,
    eflomal_options={**snakemake.params.eflomal_options, "threads": snakemake.threads},
)
write_parquet(df=quality, path=snakemake.output.quality, schema_doc=ALIGNMENT_QUALITY_SCHEMA)
write_parquet(df=links, path=snakemake.output.links, schema_doc=GOLD_LINKS_SCHEMA)
