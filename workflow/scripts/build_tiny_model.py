"""A tiny random-weight model with a tokenizer trained on the ingested demo text."""

from plmfair.logs import configure_logging
from plmfair.tiny_models import build_tiny_model, corpus_texts

configure_logging(snakemake)
build = dict(snakemake.params.build)
build_tiny_model(
    build.pop("kind"),
    corpus_texts(snakemake.input.corpus),
    snakemake.output.model,
    **build,
)
