"""Tokens of one language of a parallel corpus (spaCy's tokenizer; tagging comes later, where needed)."""

from plmfair.cloze.construction.pos import tokenize_corpus_file
from plmfair.logs import configure_logging

configure_logging(snakemake)
tokenize_corpus_file(
    path=snakemake.input.text,
    out=snakemake.output.tokens,
    lang=snakemake.wildcards.lang,
    pipeline=snakemake.params.pipeline,
    member=snakemake.params.reading["member"],
    tokenized=snakemake.params.reading["tokenized"],
    empty=snakemake.params.empty_lines,
)
