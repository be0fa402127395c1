"""Win/loss and mixed-effects tables of the CrowS-Pairs data sets (languages) compared on shared pairs."""

from plmfair.logs import configure_logging
from plmfair.tables import write_language_tables

configure_logging(snakemake)
out = snakemake.output
write_language_tables(
    winloss_path=snakemake.input.winloss,
    effects_path=snakemake.input.effects,
    files={kind: {ext: out[f"{kind}_{ext}"] for ext in ("csv", "md", "tex")} for kind in ("winloss", "effects")},
    alpha=snakemake.params.alpha,
)
