"""CrowS-Pairs score and Wilson interval per attribute bucket (length, differing tokens, origin, bias type)."""

import pandas as pd

from plmfair.breakdowns import CROWS_BREAKDOWN_SCHEMA, crows_breakdowns
from plmfair.crows_pairs import read_pair_scores
from plmfair.io import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
pairs = {ds: read_parquet(path=path) for ds, path in zip(snakemake.params.langs, snakemake.input.pairs, strict=True)}
parts = []
for (dataset, model), scores in zip(snakemake.params.jobs, snakemake.input.scores, strict=True):
    parts.append(crows_breakdowns(
        scores=read_pair_scores(scores),
        pairs=pairs[dataset],
        dataset=dataset,
        lang=snakemake.params.langs[dataset],
        model=model,
    ))
write_parquet(df=pd.concat(parts, ignore_index=True), path=snakemake.output.breakdowns,
              schema_doc=CROWS_BREAKDOWN_SCHEMA)
