"""A cloze set's primary disparity verdict under each other metric and with each annotator left out: the
specifications and each verdict's robustness (plmfair.cloze.robustness)."""

from plmfair.cloze.robustness import cloze_robustness
from plmfair.cloze.schemas import CLOZE_ROBUSTNESS_SCHEMA, CLOZE_SPECIFICATIONS_SCHEMA
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
specifications, verdicts = cloze_robustness(
    read_parquet(path=snakemake.input.scores),
    alpha=snakemake.params.alpha,
    permutations=snakemake.params.permutations,
    seed=snakemake.params.seed,
    cloze_set=snakemake.wildcards.cloze_set,
    hypotheses=read_parquet(snakemake.input.hypotheses),
)
write_parquet(df=specifications, path=snakemake.output.specifications, schema_doc=CLOZE_SPECIFICATIONS_SCHEMA)
write_parquet(df=verdicts, path=snakemake.output.robustness, schema_doc=CLOZE_ROBUSTNESS_SCHEMA)
