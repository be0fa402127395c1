"""Predictions and answer log-probabilities of one model on one cloze set (MozArt or constructed)."""

from plmfair.cloze.schemas import ANSWER_SCHEMA
from plmfair.cloze.scoring_job import PREDICTION_SCHEMA, score_cloze_set
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging
from plmfair.scoring.specs import spec_from_entry

configure_logging(snakemake)
scoring = snakemake.params.scoring
predictions, answer_scores, meta = score_cloze_set(
    sentences=read_parquet(path=snakemake.input.sentences),
    annotations=read_parquet(path=snakemake.input.answers[0]) if snakemake.input.answers else None,
    spec=spec_from_entry(entry=snakemake.params.model, manifest=snakemake.input.model),
    langs=scoring["langs"],
    k=scoring["top_k"],
    num_beams=scoring["num_beams"],
    precision=scoring["precision"],
    token_budget=int(snakemake.resources.token_budget),
    threads=snakemake.threads,
)
write_parquet(df=predictions, path=snakemake.output.predictions, schema_doc=PREDICTION_SCHEMA, meta=meta)
write_parquet(df=answer_scores, path=snakemake.output.answer_scores, schema_doc=ANSWER_SCHEMA, meta=meta)
