"""Whole-word predictions of one model for one language of a constructed cloze set (no answers yet)."""

from plmfair.io import read_parquet, write_parquet
from plmfair.logs import configure_logging
from plmfair.models import spec_from_entry
from plmfair.mozart import PREDICTION_SCHEMA, run_cloze_scoring

configure_logging(snakemake)
predictions, _, meta = run_cloze_scoring(
    annotations=read_parquet(path=snakemake.input.sentences),
    spec=spec_from_entry(entry=snakemake.params.model, manifest=snakemake.input.model),
    lang=snakemake.wildcards.lang,
    k=snakemake.params.top_k,
    num_beams=snakemake.params.num_beams,
    precision=snakemake.params.precision,
    token_budget=int(snakemake.resources.token_budget),
    threads=snakemake.threads,
    with_answers=False,
)
write_parquet(df=predictions, path=snakemake.output.predictions, schema_doc=PREDICTION_SCHEMA, meta=meta)
