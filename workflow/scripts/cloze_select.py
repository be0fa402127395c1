"""Filter the candidates of one corpus and draw the balanced cloze sample."""

from plmfair.cloze import CONSTRUCTION_SCHEMA, SENTENCES_SCHEMA, construct_files
from plmfair.io import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
sentences, counts, meta = construct_files(
    dict(zip(snakemake.params.pivot["langs"], snakemake.input.tokens, strict=True)),
    dict(zip(snakemake.params.pivot["langs"][1:], snakemake.input.alignments, strict=True)),
    pivot=snakemake.params.pivot["pivot"],
    corpus=snakemake.wildcards.corpus,
    filters=snakemake.params.filters,
    n=snakemake.params.sample["n"],
    seed=snakemake.params.sample["seed"],
)
write_parquet(counts, snakemake.output.counts, schema_doc=CONSTRUCTION_SCHEMA, meta=meta)
write_parquet(sentences, snakemake.output.sentences, schema_doc=SENTENCES_SCHEMA, meta=meta)
