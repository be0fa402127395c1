"""Annotator groups compared with the annotator as the unit (MozArt or a constructed set): win/loss on
shared sentences, sentence-adjusted gaps, the omnibus and 2 x 2 tests, disparity, crossed mixed models."""

from plmfair.cloze.disparity import GROUP_DISPARITY_SCHEMA, group_disparity
from plmfair.cloze.group_effects import GROUP_EFFECTS_SCHEMA, group_effects
from plmfair.cloze.group_tests import (
    GROUP_GAPS_SCHEMA,
    GROUP_TESTS_SCHEMA,
    GROUP_WINLOSS_SCHEMA,
    group_gaps,
    group_tests,
    group_winloss,
)
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
scores = read_parquet(path=snakemake.input.scores)
alpha, reference = snakemake.params.alpha, snakemake.params.reference_group
permuted = {
    "cloze_set": snakemake.wildcards.cloze_set,
    "alpha": alpha,
    "permutations": snakemake.params.permutations,
    "seed": snakemake.params.seed,
}
write_parquet(
    df=group_winloss(scores=scores, **permuted), path=snakemake.output.winloss, schema_doc=GROUP_WINLOSS_SCHEMA
)
write_parquet(
    df=group_gaps(scores=scores, reference=reference, **permuted),
    path=snakemake.output.gaps,
    schema_doc=GROUP_GAPS_SCHEMA,
)
write_parquet(
    df=group_tests(scores=scores, reference=reference, **permuted),
    path=snakemake.output.tests,
    schema_doc=GROUP_TESTS_SCHEMA,
)
write_parquet(
    df=group_disparity(scores=scores, **permuted),
    path=snakemake.output.disparity,
    schema_doc=GROUP_DISPARITY_SCHEMA,
)
write_parquet(
    df=group_effects(scores=scores, reference=reference),
    path=snakemake.output.effects,
    schema_doc=GROUP_EFFECTS_SCHEMA,
)
