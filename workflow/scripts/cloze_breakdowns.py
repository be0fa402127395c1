"""P@1, P@5 and MRR of a cloze set per attribute bucket (POS, length, agreement, answer pieces, multi-word)."""

from plmfair.cloze.breakdowns import CLOZE_BREAKDOWN_SCHEMA, cloze_breakdowns
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging

configure_logging(snakemake)
write_parquet(
    df=cloze_breakdowns(
        scores=read_parquet(path=snakemake.input.scores),
        annotations=read_parquet(path=snakemake.input.annotations),
    ),
    path=snakemake.output.breakdowns,
    schema_doc=CLOZE_BREAKDOWN_SCHEMA,
)
