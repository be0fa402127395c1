"""MozArt's metrics per model x language x annotator group on a cloze set with human answers."""

from plmfair.cloze_scoring import metrics_for_models
from plmfair.io import read_parquet, write_parquet
from plmfair.logs import configure_logging
from plmfair.metrics import ANNOTATION_SCORES_SCHEMA, METRICS_SCHEMA
from plmfair.models import MODEL_METADATA_SCHEMA

configure_logging(snakemake)
metrics, scores = metrics_for_models(
    annotations=read_parquet(path=snakemake.input.annotations),
    models=snakemake.params.models,
    predictions=snakemake.input.predictions,
    answer_scores=snakemake.input.answer_scores,
)
write_parquet(df=metrics, path=snakemake.output.metrics, schema_doc={**METRICS_SCHEMA, **MODEL_METADATA_SCHEMA})
write_parquet(df=scores, path=snakemake.output.annotation_scores, schema_doc=ANNOTATION_SCORES_SCHEMA)
