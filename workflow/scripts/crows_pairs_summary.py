"""Scores, intervals and tests per (data set, model); McNemar tests between models."""

from plmfair.crows_pairs.changes import CHANGE_SCHEMA
from plmfair.crows_pairs.summary import SUMMARY_SCHEMA, summarise_runs
from plmfair.io.parquet import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
summary, mcnemar = summarise_runs(
    runs={(run["dataset"], run["model"]): run["scores"] for run in snakemake.params.runs},
    langs=snakemake.params.langs,
    alpha=snakemake.params.alpha,
    max_unknown=snakemake.params.coverage["max_unknown"],
    strict=snakemake.params.coverage["strict"],
)
write_parquet(df=summary, path=snakemake.output.summary, schema_doc=SUMMARY_SCHEMA)
write_parquet(df=mcnemar, path=snakemake.output.mcnemar, schema_doc=CHANGE_SCHEMA)
