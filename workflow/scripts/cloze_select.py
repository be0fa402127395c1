"""Filter the candidates of one corpus and draw the balanced cloze sample."""

from plmfair.cloze import CONSTRUCTION_SCHEMA, SENTENCES_SCHEMA, construct_files
from plmfair.io import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
langs = snakemake.params.pivot["langs"]
sentences, counts, meta = construct_files(
    token_files=dict(zip(langs, snakemake.input.tokens, strict=True)),
    alignment_files=dict(zip(langs[1:], snakemake.input.alignments, strict=True)),
    pivot=snakemake.params.pivot["pivot"],
    corpus=snakemake.wildcards.corpus,
    filters=snakemake.params.filters,
    n=snakemake.params.sample["n"],
    seed=snakemake.params.sample["seed"],
)
write_parquet(df=counts, path=snakemake.output.counts, schema_doc=CONSTRUCTION_SCHEMA, meta=meta)
write_parquet(df=sentences, path=snakemake.output.sentences, schema_doc=SENTENCES_SCHEMA, meta=meta)
