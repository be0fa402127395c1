"""Tokens, universal POS and dependency relations of one language of a parallel corpus."""

from plmfair.io import write_parquet
from plmfair.logs import configure_logging
from plmfair.pos import TOKENS_SCHEMA, tag_corpus_file

configure_logging(snakemake)
tokens, meta = tag_corpus_file(
    path=snakemake.input.text,
    lang=snakemake.wildcards.lang,
    pipeline=snakemake.params.pipeline,
    member=snakemake.params.member,
    tokenized=snakemake.params.tokenized,
    empty=snakemake.params.empty_lines,
    n_process=snakemake.threads,
)
write_parquet(df=tokens, path=snakemake.output.tokens, schema_doc=TOKENS_SCHEMA, meta=meta)
