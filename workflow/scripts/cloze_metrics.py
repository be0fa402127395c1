"""MozArt's metrics per model x language x annotator group on a cloze set with human answers, and
the set's overview (MozArt's Table 1)."""

from plmfair.cloze.metrics import ANNOTATION_SCORES_SCHEMA, OVERVIEW_SCHEMA, metrics_for_models, set_overview
from plmfair.cloze.schemas import METRICS_SCHEMA
from plmfair.io.parquet import read_parquet, read_parquet_meta, write_parquet
from plmfair.logs import configure_logging
from plmfair.scoring.coverage import COVERAGE_COLUMNS
from plmfair.scoring.specs import MODEL_METADATA_SCHEMA

configure_logging(snakemake)
annotations = read_parquet(path=snakemake.input.annotations)
metrics, scores = metrics_for_models(
    annotations=annotations,
    runs=snakemake.params.runs,
    max_unknown=snakemake.params.coverage["max_unknown"],
    strict=snakemake.params.coverage["strict"],
)
write_parquet(
    df=metrics,
    path=snakemake.output.metrics,
    schema_doc={**METRICS_SCHEMA, **MODEL_METADATA_SCHEMA, **COVERAGE_COLUMNS},
)
write_parquet(df=scores, path=snakemake.output.annotation_scores, schema_doc=ANNOTATION_SCORES_SCHEMA)
write_parquet(
    df=set_overview(
        annotations=annotations,
        prediction_metas={run["model"]: read_parquet_meta(run["predictions"]) for run in snakemake.params.runs},
    ),
    path=snakemake.output.overview,
    schema_doc=OVERVIEW_SCHEMA,
)
