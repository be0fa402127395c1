"""Win/loss, mixed-effects and permutation-test tables of a cloze set's annotator groups."""

from plmfair.logs import configure_logging
from plmfair.tables import write_group_tables

configure_logging(snakemake)
out = snakemake.output
write_group_tables(
    winloss_path=snakemake.input.winloss,
    effects_path=snakemake.input.effects,
    tests_path=snakemake.input.tests,
    files={kind: {ext: out[f"{kind}_{ext}"] for ext in ("csv", "md", "tex")} for kind in ("winloss", "effects", "tests")},
    cloze_set=snakemake.wildcards.cloze_set,
    alpha=snakemake.params.alpha,
)
