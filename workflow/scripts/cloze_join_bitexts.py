"""A multi-way corpus from pivot-language bitexts: the lines whose pivot sentence is in every bitext."""

from plmfair.cloze.construction.bitext import JOINED_SCHEMA, join_bitext_files
from plmfair.cloze.construction.selection import CONSTRUCTION_SCHEMA
from plmfair.io.parquet import write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
join = snakemake.params.join
joined, counts, meta = join_bitext_files(
    bitexts={
        lang: ((snakemake.input[f"{lang}_pivot"], pivot_member), (snakemake.input[f"{lang}_text"], member))
        for lang, (pivot_member, member) in join["members"].items()
    },
    pivot=join["pivot"],
    corpus=snakemake.wildcards.corpus,
    duplicates=join["duplicates"],
)
write_parquet(df=counts, path=snakemake.output.counts, schema_doc=CONSTRUCTION_SCHEMA, meta=meta)
write_parquet(df=joined, path=snakemake.output.joined, schema_doc=JOINED_SCHEMA, meta=meta)
