"""The models that ran: what each one's first scoring job measured (results/models.parquet)."""

from plmfair.io.parquet import read_parquet_meta, write_parquet
from plmfair.logs import configure_logging
from plmfair.scoring.specs import MODELS_SCHEMA, models_frame

configure_logging(snakemake)
write_parquet(
    df=models_frame(
        run_metas={name: read_parquet_meta(path) for name, path in snakemake.params.runs.items()},
        languages=snakemake.params.languages,
    ),
    path=snakemake.output.models,
    schema_doc=MODELS_SCHEMA,
)
