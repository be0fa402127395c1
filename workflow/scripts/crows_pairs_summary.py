"""Scores, intervals and tests per (data set, model); McNemar tests between models; the score and Wilson
interval per attribute bucket (length, differing tokens, origin, bias type)."""

import pandas as pd

from plmfair.crows_pairs.breakdowns import CROWS_BREAKDOWN_SCHEMA, crows_breakdowns
from plmfair.crows_pairs.changes import CHANGE_SCHEMA
from plmfair.crows_pairs.summary import SUMMARY_SCHEMA, read_pair_scores, summarise_runs
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
params = snakemake.params
summary, mcnemar = summarise_runs(
    runs={(run["dataset"], run["model"]): run["scores"] for run in params.runs},
    langs=params.langs,
    alpha=params.alpha,
    max_unknown=params.coverage["max_unknown"],
    strict=params.coverage["strict"],
)
pairs = {ds: read_parquet(path=path) for ds, path in params.pairs.items()}
breakdowns = pd.concat(
    [
        crows_breakdowns(
            scores=read_pair_scores(run["scores"]),
            pairs=pairs[run["dataset"]],
            dataset=run["dataset"],
            lang=params.langs[run["dataset"]],
            model=run["model"],
        )
        for run in params.runs
    ],
    ignore_index=True,
)
write_parquet(df=summary, path=snakemake.output.summary, schema_doc=SUMMARY_SCHEMA)
write_parquet(df=mcnemar, path=snakemake.output.mcnemar, schema_doc=CHANGE_SCHEMA)
write_parquet(df=breakdowns, path=snakemake.output.breakdowns, schema_doc=CROWS_BREAKDOWN_SCHEMA)
