"""Log-probability of every human answer to a constructed cloze set, for one model and language."""

from plmfair.io import read_parquet, write_parquet
from plmfair.logs import configure_logging
from plmfair.models import spec_from_entry
from plmfair.mozart import ANSWER_SCHEMA, run_cloze_scoring

configure_logging(snakemake)
_, answer_scores, meta = run_cloze_scoring(
    annotations=read_parquet(path=snakemake.input.annotations),
    spec=spec_from_entry(entry=snakemake.params.model, manifest=snakemake.input.model),
    lang=snakemake.wildcards.lang,
    precision=snakemake.params.precision,
    token_budget=int(snakemake.resources.token_budget),
    threads=snakemake.threads,
    with_predictions=False,
)
write_parquet(df=answer_scores, path=snakemake.output.answer_scores, schema_doc=ANSWER_SCHEMA, meta=meta)
