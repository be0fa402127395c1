"""The lookup spaCy pipelines (tokenizer + POS/dependency lexicon) of the offline demo and tests, one per
language, each from its word list."""

from plmfair.cloze.construction.pos import build_lexicon_pipeline, read_lexicon
from plmfair.logs import configure_logging

configure_logging(snakemake)
for lang, pipeline in snakemake.params.pipelines.items():
    build_lexicon_pipeline(lang=lang, entries=read_lexicon(path=pipeline["lexicon"]), out_dir=pipeline["folder"])
