"""A tiny model with a tokenizer trained on the ingested demo text: random weights, or trained a few
steps (``train_steps``) to fill MozArt's gaps with the annotators' answers, and its manifest."""

from plmfair.io.atomic import write_json
from plmfair.logs import configure_logging
from plmfair.scoring.specs import folder_manifest
from plmfair_demo import answered_gaps, build_tiny_model, corpus_texts

configure_logging(snakemake)
build = snakemake.params.build
build_tiny_model(
    kind=build["kind"],
    texts=corpus_texts(paths=snakemake.input.corpus),
    out_dir=snakemake.output.model,
    vocab_size=build["vocab_size"],
    hidden_size=build["hidden_size"],
    num_layers=build["num_layers"],
    num_heads=build["num_heads"],
    max_length=build["max_length"],
    seed=build["seed"],
    gaps=answered_gaps(paths=snakemake.input.corpus),
    train_steps=build["train_steps"],
    threads=snakemake.threads,
)
write_json(obj=folder_manifest(folder=snakemake.output.model), path=snakemake.output.manifest)
