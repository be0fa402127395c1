"""P@1, P@5, MRR and correlations per model x language x group, and the scores of every annotation."""

from plmfair.io import read_parquet, write_parquet
from plmfair.logs import configure_logging
from plmfair.metrics import ANNOTATION_SCORES_SCHEMA, METRICS_SCHEMA
from plmfair.models import MODEL_METADATA_SCHEMA
from plmfair.mozart import metrics_for_runs

configure_logging(snakemake)
metrics, scores = metrics_for_runs(
    annotations=read_parquet(path=snakemake.input.annotations),
    runs=[tuple(r) for r in snakemake.params.runs],
    predictions=snakemake.input.predictions,
    answer_scores=snakemake.input.answer_scores,
)
write_parquet(df=metrics, path=snakemake.output.metrics, schema_doc={**METRICS_SCHEMA, **MODEL_METADATA_SCHEMA})
write_parquet(df=scores, path=snakemake.output.annotation_scores, schema_doc=ANNOTATION_SCORES_SCHEMA)
