"""Win/loss and mixed effects of annotator groups on the sentences they share (MozArt or a constructed set)."""

from plmfair.disparity import (
    GROUP_EFFECTS_SCHEMA,
    GROUP_WINLOSS_SCHEMA,
    group_effects,
    group_winloss,
)
from plmfair.io import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
scores = read_parquet(path=snakemake.input.scores)
write_parquet(
    df=group_winloss(scores=scores, alpha=snakemake.params.alpha),
    path=snakemake.output.winloss,
    schema_doc=GROUP_WINLOSS_SCHEMA,
)
write_parquet(
    df=group_effects(
        scores=scores,
        reference=snakemake.params.reference_group,
        annotator_variance=snakemake.params.annotator_variance,
    ),
    path=snakemake.output.effects,
    schema_doc=GROUP_EFFECTS_SCHEMA,
)
