"""MozArt's metrics per model x language x annotator group on a constructed set with human answers."""

from plmfair.io import write_csv, write_parquet
from plmfair.logs import configure_logging
from plmfair.metrics import METRICS_SCHEMA
from plmfair.mozart import metrics_and_disparity

configure_logging(snakemake)
metrics, disparity = metrics_and_disparity(
    annotations_path=snakemake.input.annotations,
    runs=[tuple(r) for r in snakemake.params.runs],
    predictions=snakemake.input.predictions,
    answer_scores=snakemake.input.answer_scores,
)
write_parquet(df=metrics, path=snakemake.output.metrics, schema_doc=METRICS_SCHEMA)
write_csv(df=disparity, path=snakemake.output.disparity)
