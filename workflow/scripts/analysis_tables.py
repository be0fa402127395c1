"""Win/loss and mixed-effects tables of a group or language comparison."""

from plmfair.logs import configure_logging
from plmfair.tables import write_analysis_tables

configure_logging(snakemake)
out = snakemake.output
write_analysis_tables(
    winloss_path=snakemake.input.winloss,
    effects_path=snakemake.input.effects,
    winloss_files={"csv": out.winloss_csv, "md": out.winloss_md, "tex": out.winloss_tex},
    effects_files={"csv": out.effects_csv, "md": out.effects_md, "tex": out.effects_tex},
    conditions=snakemake.params.conditions,
    examples=snakemake.params.examples,
    label=snakemake.params.label,
    alpha=snakemake.params.alpha,
)
