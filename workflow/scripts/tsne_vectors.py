"""Top predictions of one model for the configured quadruples of a ready-made cloze test, with their last-layer "
"vectors."""

from plmfair.cloze.schemas import TSNE_VECTORS_SCHEMA
from plmfair.cloze.vectors import run_tsne_vectors
from plmfair.io.parquet import read_parquet, write_parquet
from plmfair.logs import configure_logging
from plmfair.scoring.specs import spec_from_entry

configure_logging(snakemake)
vectors, meta = run_tsne_vectors(
    annotations=read_parquet(path=snakemake.input.annotations),
    spec=spec_from_entry(entry=snakemake.params.model, manifest=snakemake.input.model),
    s_ids=snakemake.params.sentences,
    k=snakemake.params.top_k,
    num_beams=snakemake.params.num_beams,
    precision=snakemake.params.precision,
    token_budget=int(snakemake.resources.token_budget),
    threads=snakemake.threads,
)
write_parquet(df=vectors, path=snakemake.output.vectors, schema_doc=TSNE_VECTORS_SCHEMA, meta=meta)
