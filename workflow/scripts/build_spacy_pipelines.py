"""A lookup spaCy pipeline (tokenizer + POS/dependency lexicon) for the offline demo and tests."""

from plmfair.cloze.construction.pos import build_lexicon_pipeline, read_lexicon
from plmfair.logs import configure_logging

configure_logging(snakemake)
build_lexicon_pipeline(
    lang=snakemake.params.lang,
    entries=read_lexicon(path=snakemake.input.lexicon),
    out_dir=snakemake.output.pipeline,
)
