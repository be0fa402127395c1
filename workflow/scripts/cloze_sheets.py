"""Annotation sheets (CSV, batches of sentences) for every language of a constructed cloze set."""

from plmfair.cloze.construction.answers import write_annotation_sheets
from plmfair.io.parquet import read_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
write_annotation_sheets(
    sentences=read_parquet(path=snakemake.input.sentences),
    out_dir=snakemake.output.sheets,
    batch_size=snakemake.params.batch_size,
)
