"""A CrowS-Pairs file to one Parquet row per pair, read as its data set entry describes it."""

from plmfair.crows_pairs.reader import CROWS_SCHEMA, read_crows_pairs
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
reading = snakemake.params.reading
write_parquet(
    df=read_crows_pairs(
        path=snakemake.input.raw,
        lang=reading["lang"],
        fmt=reading["format"],
        delimiter=reading["delimiter"],
        columns=reading["columns"],
        bias_type_aliases=reading["bias_type_aliases"],
        direction_aliases=reading["direction_aliases"],
        default_direction=reading["default_direction"],
        id_prefix_aliases=reading["id_prefix_aliases"],
        duplicate_ids=reading["duplicate_ids"],
        reference=read_parquet(path=snakemake.input.reference[0]) if snakemake.input.reference else None,
    ),
    path=snakemake.output.pairs,
    schema_doc=CROWS_SCHEMA,
)
