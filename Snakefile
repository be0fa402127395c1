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
    validate_config(config)  # the shared schema and each study package's part of it (plmfair.config)
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


# The run's results record (plmfair.runs.record): what to cite a number with. Its inputs are the results it
# summarises, so it is never older than they are; the configuration it echoes is a param, so a change of
# setting rewrites it (a change that alters no result reruns this job alone). It is the workflow's target:
# its inputs are every file the run publishes or reads back (plan.published_files). Snakemake does not
# remake a lost input of an up-to-date record: `plmfair run` names the lost and altered ones as targets first
# (cli._to_rebuild), so the next run rebuilds them.
rule run_record:
    localrule: True
    default_target: True
    input:
        unpack(get_run_record_inputs),
    output:
        record=plan.RUN_RECORD,
        html=report(
            plan.RUN_RECORD_HTML,
            caption="workflow/report/run_record.rst",
            category=plan.report_category("data"),
            subcategory="Run record",
            labels={"record": plan.RUN_RECORD},
        ),
    params:
        config=plan.recorded_config(config),
        studies=plan.recorded_files(config),
        pinned=plan.pinned_checksums(config),
    log:
        "results/logs/run_record.log",
    resources:
        **sized("run_record"),
    conda:
        "envs/stats.yaml"
    script:
        "workflow/scripts/run_record.py"


# (last: its checks need every rule defined)
include: "workflow/rules/overrides.smk"
