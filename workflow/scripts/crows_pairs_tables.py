"""Tables 4 and 5 of the French CrowS-Pairs paper, and the McNemar comparisons."""

from plmfair.logs import configure_logging
from plmfair.tables import write_crows_pairs_tables

configure_logging(snakemake)
out = snakemake.output
write_crows_pairs_tables(
    summary_path=snakemake.input.summary,
    mcnemar_path=snakemake.input.mcnemar,
    table4_csv=out.table4_csv,
    table4_md=out.table4_md,
    table4_tex=out.table4_tex,
    table5_csv=out.table5_csv,
    table5_md=out.table5_md,
    table5_tex=out.table5_tex,
    mcnemar_csv=out.mcnemar_csv,
)
