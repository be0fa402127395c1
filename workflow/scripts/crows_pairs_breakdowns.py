"""CrowS-Pairs score and Wilson interval per attribute bucket (length, differing tokens, origin, bias type)."""

import pandas as pd

from plmfair.crows_pairs.breakdowns import CROWS_BREAKDOWN_SCHEMA, crows_breakdowns
from plmfair.crows_pairs.summary import read_pair_scores
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
pairs = {ds: read_parquet(path=path) for ds, path in snakemake.params.pairs.items()}
parts = [
    crows_breakdowns(
        scores=read_pair_scores(run["scores"]),
        pairs=pairs[run["dataset"]],
        dataset=run["dataset"],
        lang=snakemake.params.langs[run["dataset"]],
        model=run["model"],
    )
    for run in snakemake.params.runs
]
write_parquet(
    df=pd.concat(parts, ignore_index=True), path=snakemake.output.breakdowns, schema_doc=CROWS_BREAKDOWN_SCHEMA
)
