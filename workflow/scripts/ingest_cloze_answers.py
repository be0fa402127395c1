"""Human answers (MozArt JSONL) to a constructed cloze set, one row per annotation."""

from plmfair.cloze.annotations import MOZART_SCHEMA
from plmfair.cloze.construction.answers import ingest_answers
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
write_parquet(
    df=ingest_answers(
        sentences=read_parquet(path=snakemake.input.sentences),
        answer_files=snakemake.params.answers,
    ),
    path=snakemake.output.annotations,
    schema_doc=MOZART_SCHEMA,
)
