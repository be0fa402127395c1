"""Score one CrowS-Pairs data set with one masked LM."""

from plmfair.crows_pairs import PAIR_SCHEMA, run_scoring
from plmfair.io import read_parquet, write_parquet
from plmfair.logs import configure_logging
from plmfair.models import model_spec

configure_logging(snakemake)
entry = dict(snakemake.params.model)
scores, meta = run_scoring(
    read_parquet(snakemake.input.pairs),
    model_spec(entry.pop("name"), entry),
    protocol=snakemake.params.protocol,
    precision=snakemake.params.precision,
    too_long=snakemake.params.too_long,
    token_budget=int(snakemake.resources.token_budget),
)
write_parquet(scores, snakemake.output.scores, schema_doc=PAIR_SCHEMA, meta=meta)
