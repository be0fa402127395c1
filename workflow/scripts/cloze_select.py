"""Filter the candidates of one corpus, tag the lines the sample examines, and draw the balanced sample."""

from plmfair.cloze.construction.selection import (
    CONSTRUCTION_SCHEMA,
    SENTENCES_SCHEMA,
    construct_files,
)
from plmfair.io.parquet import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
corpus = snakemake.params.corpus
langs = corpus["langs"]  # pivot first
sentences, counts, meta = construct_files(
    token_files=corpus["token_files"],
    alignment_files=corpus["alignment_files"],
    pivot=langs[0],
    corpus=snakemake.wildcards.corpus,
    filters=snakemake.params.filters,
    n=snakemake.params.sample["n"],
    seed=snakemake.params.sample["seed"],
    examine=snakemake.params.sample["examine"],
    pipelines=corpus["pipelines"],
    tokenized=corpus["tokenized"],
    join_counts=snakemake.input.join_counts or None,
)
write_parquet(df=counts, path=snakemake.output.counts, schema_doc=CONSTRUCTION_SCHEMA, meta=meta)
write_parquet(df=sentences, path=snakemake.output.sentences, schema_doc=SENTENCES_SCHEMA, meta=meta)
