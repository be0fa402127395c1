"""The models that ran, with the metadata their scoring jobs recorded (results/models.parquet and tables)."""

from plmfair.logs import configure_logging
from plmfair.tables import write_models_table

configure_logging(snakemake)
write_models_table(
    run_files=snakemake.input.runs,
    parquet=snakemake.output.models,
    csv=snakemake.output.csv,
    md=snakemake.output.md,
    tex=snakemake.output.tex,
)
