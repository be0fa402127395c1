"""MozArt's Tables 1-5 of a cloze set with answers, and its group-disparity table."""

from plmfair.logs import configure_logging
from plmfair.tables import write_cloze_tables

configure_logging(snakemake)
out = snakemake.output
write_cloze_tables(
    metrics_path=snakemake.input.metrics,
    annotations_path=snakemake.input.annotations,
    prediction_paths=snakemake.input.predictions,
    files={name: {ext: out[f"{name}_{ext}"] for ext in ("csv", "md", "tex")}
           for name in ("table1", "table2_p_at_1", "table3_spearman", "table4_p_at_5", "table5_kendall")},
    disparity_csv=out.disparity,
    cloze_set=snakemake.wildcards.cloze_set,
    alpha=snakemake.params.alpha,
)
