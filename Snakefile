# plmfair: fairness of pretrained language models across groups and languages.
#
# Path convention (relative to the working directory, `--directory` for the demo):
#   resources/downloads/{file}                    verified downloads (mirror or URL), kept once for every run
#   results/downloads/{file}                      the run's own link to each
#   results/models/{hf_id}@{revision}/             models fetched from the Hub (links into its cache)
#   results/models/{model}/                        models the run builds and trains (demo)
#   results/manifests/{model}.json                 the run's manifest of each model: files, sizes, SHA-256
#   results/spacy/{lang}/                          lookup spaCy pipelines the run builds (demo)
#   results/data/<dataset>/....parquet             ingested data (a cloze set's answers: <cloze_set>/annotations)
#   results/<stage>/{dataset|model}/....parquet    one Parquet file per job of a stage (each path once, in its study's plan.py)
#   results/tables/<table>.{csv,md,tex,html}       tables for people (each study's outputs.py; plmfair.plan.targets)
#   results/figures/<figure>.{png,pdf}             figures (also in the Snakemake report)
#   results/logs/<stage>/...log, results/benchmarks/<stage>/...tsv
#   results/run.json                               the run's record (plmfair.runs.record): settings, provenance, headline,
#                                                  every published file with its SHA-256 (plan.published_files)
#   .plmfair/seals/results/...json                 what each job wrote (plmfair.io.atomic); .plmfair/altered/: set aside
from pathlib import Path

from snakemake.utils import min_version

from plmfair.config import validate_config
from plmfair.errors import ConfigError
from plmfair.runs.landing import REPORT_DOCUTILS, report_description
from plmfair.studies import rule_files

min_version("9.0")


configfile: "config/config.yaml"


try:
    validate_config(config, Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml")
except ConfigError as exc:
    raise SystemExit(f"plmfair: {exc}") from None


# the run's answers first when a report is made of a finished run (plmfair.runs.landing), else the tool's page;
# docutils reads every caption with raw HTML and file inclusion off
report: report_description("workflow/report/workflow.rst", docutils=Path(workflow.basedir) / REPORT_DOCUTILS)


include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/ingest.smk"
include: "workflow/rules/models.smk"


# each study's rules, as its record in plmfair.studies.STUDIES names them
for rule_file in rule_files():

    include: f"workflow/rules/{rule_file}"


include: "workflow/rules/outputs.smk"
include: "workflow/rules/record.smk"
include: "workflow/rules/overrides.smk"


# The run record alone: its inputs are every file the run publishes or reads back
# (plan.published_files). Snakemake does not remake a lost input of an up-to-date record: `plmfair run`
# names the lost and altered ones as targets first (cli._to_rebuild), so the next run rebuilds them. Not
# listed again here: each listing costs Snakemake a producer lookup per file (1,000 models x 10 sets: 1 s
# of a 21 s plan).
rule all:
    localrule: True
    input:
        plan.RUN_RECORD,
    default_target: True
