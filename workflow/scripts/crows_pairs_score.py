"""Score one CrowS-Pairs data set with one masked or causal LM."""

from plmfair.crows_pairs.schemas import PAIR_SCHEMA
from plmfair.crows_pairs.scoring_job import run_scoring
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging
from plmfair.scoring.specs import spec_from_entry

configure_logging(snakemake)
scores, meta = run_scoring(
    pairs=read_parquet(path=snakemake.input.pairs),
    spec=spec_from_entry(entry=snakemake.params.model, manifest=snakemake.input.model),
    protocol=snakemake.params.protocol,
    precision=snakemake.params.precision,
    too_long=snakemake.params.too_long,
    token_budget=int(snakemake.resources.token_budget),
    threads=snakemake.threads,
)
write_parquet(df=scores, path=snakemake.output.scores, schema_doc=PAIR_SCHEMA, meta=meta)
