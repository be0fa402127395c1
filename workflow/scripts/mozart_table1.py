"""Table 1 of the MozArt paper: data per language and tokens per sentence per model."""

from plmfair.logs import configure_logging
from plmfair.tables import write_mozart_table1

configure_logging(snakemake)
write_mozart_table1(
    annotations_path=snakemake.input.annotations,
    prediction_paths=snakemake.input.predictions,
    csv=snakemake.output.csv,
    md=snakemake.output.md,
    tex=snakemake.output.tex,
)
