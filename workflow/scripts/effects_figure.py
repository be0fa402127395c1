"""Forest plot of a comparison's rows (group gaps with their intervals and the run's analysis plan's marks,
or CrowS-Pairs languages' mixed-model effects as effect sizes); the gap tests' tie-breaks (plmfair.cloze.ties)
named under the metrics they apply to."""

from plmfair.cloze.ties import TIE_BREAK
from plmfair.io.parquet import read_parquet
from plmfair.logs import configure_logging
from plmfair.rendering.plots import effects_forest_figure

configure_logging(snakemake)
effects_forest_figure(
    effects=read_parquet(path=snakemake.input.effects),
    plan=read_parquet(path=snakemake.input.plan) if "plan" in snakemake.input.keys() else None,
    png=snakemake.output.png,
    pdf=snakemake.output.pdf,
    title=snakemake.params.title,
    tie_breaks=TIE_BREAK,
    alpha=snakemake.params.alpha,
)
