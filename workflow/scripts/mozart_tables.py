"""Tables 2-5 of the MozArt paper per model, and the group-disparity table."""

from plmfair.logs import configure_logging
from plmfair.tables import write_paper_tables

configure_logging(snakemake)
write_paper_tables(
    metrics_path=snakemake.input.metrics,
    out_dir_files=snakemake.params.files,
    disparity_csv=snakemake.output.disparity,
    alpha=snakemake.params.alpha,
)
