"""Each CrowS-Pairs verdict under every scoring choice (protocol, tie rule, pair exclusions): the
specifications and each verdict's robustness (plmfair.crows_pairs.robustness)."""

from plmfair.crows_pairs.robustness import robustness
from plmfair.crows_pairs.schemas import ROBUSTNESS_SCHEMA, SPECIFICATIONS_SCHEMA, read_pair_scores
from plmfair.io.parquet import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
specifications, verdicts = robustness(
    [
        {**run, "scores": {protocol: read_pair_scores(path) for protocol, path in run["scores"].items()}}
        for run in snakemake.params.runs
    ],
    langs=snakemake.params.langs,
    ties=snakemake.params.ties,
    exclusions=snakemake.input.exclusions[0] if snakemake.input.exclusions else None,
    alpha=snakemake.params.alpha,
    max_grid=snakemake.params.max_grid,
)
write_parquet(df=specifications, path=snakemake.output.specifications, schema_doc=SPECIFICATIONS_SCHEMA)
write_parquet(df=verdicts, path=snakemake.output.robustness, schema_doc=ROBUSTNESS_SCHEMA)
