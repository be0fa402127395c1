"""Forest plot of a comparison's rows (group gaps, or CrowS-Pairs languages' mixed-model effects), each
drawn with the interval and mark of its own test; the gap tests' tie-breaks (plmfair.cloze.ties) named
under the metrics they apply to."""

from plmfair.cloze.ties import TIE_BREAK
from plmfair.io.parquet import read_parquet
from plmfair.logs import configure_logging
from plmfair.rendering.plots import effects_forest_figure

configure_logging(snakemake)
effects_forest_figure(
    effects=read_parquet(path=snakemake.input.effects),
    png=snakemake.output.png,
    pdf=snakemake.output.pdf,
    title=snakemake.params.title,
    tie_breaks=TIE_BREAK,
)
