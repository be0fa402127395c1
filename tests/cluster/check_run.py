"""Checks after the demo ran through profiles/slurm (called by tests/cluster/run.sh).

The jobs that are not localrules went through sbatch (each has its SLURM log, written by the
job on the node), the scoring jobs of each model ran as one group job, localrules did not
go to SLURM, and every scoring result was written by a job that ran there.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from plmfair.config import load_config
from plmfair.crows_pairs import plan as crows_pairs_plan
from plmfair.io.parquet import read_parquet_meta
from plmfair.plan.model_runs import models_in_use

SUBMITTED = re.compile(r"has been submitted with SLURM jobid (\d+) \(log: (\S+)\)\.")
SUBMITTED_ON_CLUSTER = {
    "ingest_cloze_test",
    "ingest_crows_pairs",
    "build_tiny_model",
    "cloze_tokenize",
    "cloze_align",
    "cloze_select",
    "cloze_metrics",
    "crows_pairs_summary",
    "group_analysis",
}
LOCAL = {"download", "model_manifest", "data_summary", "crows_pairs_tables", "cloze_tables", "cloze_sheets"}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--config", type=Path, required=True)
    args = parser.parse_args()
    args.work = args.work.resolve()
    problems = []

    submitted = SUBMITTED.findall(args.log.read_text())
    if not submitted:
        problems.append("no job was submitted with sbatch")
    folders = set()
    for jobid, log in submitted:
        path = Path(log)
        if not path.is_file() or "Snakemake version" not in path.read_text(errors="replace"):
            problems.append(f"SLURM job {jobid}: its log {path} is missing or was not written by the job")
        folders.add(path.relative_to(args.work / ".snakemake" / "slurm_logs").parts[0])
    rules = {f.removeprefix("rule_") for f in folders if f.startswith("rule_")}
    for rule in sorted(SUBMITTED_ON_CLUSTER - rules):
        problems.append(f"rule {rule} did not go through sbatch")
    for rule in sorted(LOCAL & rules):
        problems.append(f"localrule {rule} was submitted to SLURM")

    config = load_config([args.config])
    models = set(models_in_use(config))
    for model in sorted(models):
        if not any(f.startswith(f"group_score_{model}_") for f in folders):
            problems.append(f"the scoring jobs of {model} did not run as one group job")
    for dataset, model in crows_pairs_plan.crows_pairs_jobs(config):
        meta = read_parquet_meta(args.work / f"results/crows_pairs/{dataset}/{model}.parquet")
        if meta.get("device") is None or meta.get("threads") is None:
            problems.append(f"results/crows_pairs/{dataset}/{model}.parquet lacks device or threads metadata")

    for problem in problems:
        print(f"test-cluster: FAILED: {problem}")
    if not problems:
        print(
            f"test-cluster: {len(submitted)} SLURM jobs, each with its log; {len(models)} models scored in group "
            f"jobs; localrules ran locally"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
