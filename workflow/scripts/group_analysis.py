"""Annotator groups compared with the annotator as the unit (MozArt or a constructed set): win/loss on
shared sentences, permutation tests, crossed mixed models."""

from plmfair.group_tests import (
            GROUP_EFFECTS_SCHEMA,
            GROUP_TESTS_SCHEMA,
            GROUP_WINLOSS_SCHEMA,
            group_effects,
            group_winloss,
)
from plmfair.io import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
scores = read_parquet(path=snakemake.input.scores)
settings = {"alpha": snakemake.params.alpha, "permutations": snakemake.params.permutations,
            "seed": snakemake.params.seed}
write_parquet(df=group_winloss(scores=scores, **settings), path=snakemake.output.winloss,
              schema_doc=GROUP_WINLOSS_SCHEMA)
effects, tests = group_effects(scores=scores, reference=snakemake.params.reference_group, **settings)
write_parquet(df=effects, path=snakemake.output.effects, schema_doc=GROUP_EFFECTS_SCHEMA)
write_parquet(df=tests, path=snakemake.output.tests, schema_doc=GROUP_TESTS_SCHEMA)
