"""Each CrowS-Pairs verdict under every scoring choice (protocol, precision, tie rule, pair exclusions, data
version): the specifications, each verdict's robustness, and per data set whether the protocols rank the models
alike (plmfair.crows_pairs.robustness)."""

from plmfair.crows_pairs.robustness import ranking_agreement, robustness
from plmfair.crows_pairs.schemas import RANKING_SCHEMA, ROBUSTNESS_SCHEMA, SPECIFICATIONS_SCHEMA, read_pair_scores
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
runs = [
    {**run, "passes": [{**p, "scores": read_pair_scores(p["scores"])} for p in run["passes"]]}
    for run in snakemake.params.runs
]
specifications, verdicts = robustness(
    runs,
    langs=snakemake.params.langs,
    ties=snakemake.params.ties,
    exclusions=snakemake.input.exclusions[0] if snakemake.input.exclusions else None,
    alpha=snakemake.params.alpha,
    max_grid=snakemake.params.max_grid,
    versions=snakemake.params.versions,
    hypotheses=read_parquet(snakemake.input.hypotheses),
    replicates=snakemake.params.bootstrap,
    seed=snakemake.params.seed,
)
ranking = ranking_agreement(runs, langs=snakemake.params.langs, alpha=snakemake.params.alpha)
write_parquet(df=specifications, path=snakemake.output.specifications, schema_doc=SPECIFICATIONS_SCHEMA)
write_parquet(df=verdicts, path=snakemake.output.robustness, schema_doc=ROBUSTNESS_SCHEMA)
write_parquet(df=ranking, path=snakemake.output.ranking, schema_doc=RANKING_SCHEMA)
