"""CrowS-Pairs data sets (languages) compared on the pairs they share, per model."""

from plmfair.crows_pairs.languages import (
    LANGUAGE_EFFECTS_SCHEMA,
    LANGUAGE_WINLOSS_SCHEMA,
    language_effects,
    language_winloss,
)
from plmfair.crows_pairs.summary import read_pair_scores
from plmfair.io.parquet import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
per_pair = {(run["dataset"], run["model"]): read_pair_scores(run["scores"]) for run in snakemake.params.runs}
write_parquet(
    df=language_winloss(per_pair=per_pair, langs=snakemake.params.langs, alpha=snakemake.params.alpha),
    path=snakemake.output.winloss,
    schema_doc=LANGUAGE_WINLOSS_SCHEMA,
)
write_parquet(
    df=language_effects(per_pair=per_pair, langs=snakemake.params.langs),
    path=snakemake.output.effects,
    schema_doc=LANGUAGE_EFFECTS_SCHEMA,
)
