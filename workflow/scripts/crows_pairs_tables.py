"""Tables 4 and 5 of the French CrowS-Pairs paper, and the McNemar comparisons."""

from plmfair.crows_pairs import write_tables
from plmfair.logs import configure_logging

configure_logging(snakemake)
write_tables(snakemake.input.summary, snakemake.input.mcnemar, **dict(snakemake.output))
