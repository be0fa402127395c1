"""Planning at survey scale: how long Snakemake takes to plan N models x D CrowS-Pairs data sets, and
how much memory, as a user meets it (``snakemake --dry-run``), and how long the plan functions the
rules call take on their own.

Each configuration declares N Hub models (masked LMs, ids that are never fetched: a dry run reads
none) and D data sets (files a dry run does not read), with CrowS-Pairs on and the other studies
off, so every model is scored on every data set: N x D scoring jobs, plus each model's fetch and
manifest, the summary, tables and figures. Printed per N: the dry run's wall time and peak memory
(the Snakemake process), the jobs it planned, and the plan functions alone (every per-job call the
rules make, in this process); then the growth from the smallest N to each larger one, against
linear; and, per N, Snakemake's own floor measured in the same run: a trivial Snakefile whose dry run
plans the same number of jobs in the same shape (each model fetched, each data set read, every model
scored on every data set, one job gathering them), no plan functions and no config, with the ratio of the
workflow's dry run to it (goal: at most 1.5x); and the same jobs from a Snakefile whose rules carry the kinds of
directive every rule of the workflow carries, each as cheap as it can be (a script, three params and three
resources computed per job, a log, a benchmark file and a conda environment): what Snakemake itself spends
on those directives, so that the workflow's ratio to it is what its own plan, input and resource functions
add.

    python benchmarks/bench_plan.py [--models 100 300 1000] [--datasets 10] [--local] [--repeats 3]

``--local``: the models are local checkpoint folders (a sweep of one's own checkpoints), not Hub ids.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from plmfair import plan
from plmfair.config import load_config
from plmfair.crows_pairs import plan as crows_pairs_plan

REPO = Path(__file__).resolve().parents[1]


# the files of a local checkpoint folder (a BERT-style one), written empty: planning lists and stats them
LOCAL_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt")


def local_folders(root: Path, models: int) -> list[Path]:
    """``models`` local checkpoint folders under ``root`` (their files empty: a dry run reads none)."""
    folders = []
    for i in range(models):
        folder = root / f"model-{i}"
        folder.mkdir(parents=True, exist_ok=True)
        for name in LOCAL_FILES:
            (folder / name).touch()
        folders.append(folder)
    return folders


def survey_config(models: int, datasets: int, *, local: Path | None = None) -> dict:
    """A configuration of ``models`` masked LMs on ``datasets`` CrowS-Pairs data sets (CrowS-Pairs only):
    Hub ids, or with ``local`` folders under it."""
    sets = {f"set_{d}": {"file": f"set_{d}.csv", "lang": "en", "sha256": "0" * 64} for d in range(datasets)}
    if local is None:
        entries = {f"m{i}": {"hf_id": f"survey/model-{i}", "family": "mlm"} for i in range(models)}
    else:
        entries = {f"m{i}": {"path": str(f), "family": "mlm"} for i, f in enumerate(local_folders(local, models))}
    return {
        "models": entries,
        "datasets": {"crows_pairs": sets},
        "crows_pairs": {"datasets": list(sets), "models": None},
        "mozart": {"enabled": False},
        "cloze": {"enabled": False},
    }


def plan_calls(config: dict) -> float:
    """Seconds for every per-job plan call of the CrowS-Pairs rules (what Snakemake's params and input
    functions evaluate for each job)."""
    start = time.perf_counter()
    jobs = crows_pairs_plan.crows_pairs_jobs(config)
    for _, model in jobs:
        crows_pairs_plan.crows_pairs_protocol(config, model)
        plan.model_loading(config, model)
        plan.model_precision(config, model, "crows_pairs")
        plan.model_gpus(config, model)
    crows_pairs_plan.crows_pairs_language_jobs(config)
    plan.run_record_inputs(config)
    plan.tables(config)
    return time.perf_counter() - start


# Snakemake's floor: N x D jobs of one rule, each with a model's and a data set's file as inputs, the N
# fetches and D reads that make them, a gathering job, and `extra` jobs of their own to match a total
FLOOR = """\
MODELS = [f"m{{i}}" for i in range({models})]
SETS = [f"set_{{d}}" for d in range({datasets})]


def per_model(wildcards):
    return wildcards.get("model", "")


rule gather:
    input:
        expand("scores/{{model}}/{{name}}.parquet", model=MODELS, name=SETS),
        expand("extra/{{i}}.txt", i=range({extra})),
    output:
        "gathered.txt",
    shell:
        "touch {{output}}"


rule fetch:
    output:
        "models/{{model}}.json",
{fetch}

rule read:
    output:
        "data/{{name}}.parquet",
{read}

rule score:
    input:
        model="models/{{model}}.json",
        data="data/{{name}}.parquet",
    output:
        "scores/{{model}}/{{name}}.parquet",
{score}

rule extra:
    output:
        "extra/{{i}}.txt",
{extra_body}
"""
# a trivial rule's body ...
TRIVIAL = """\
    shell:
        "touch {output}"
"""
# ... and one with the kinds of directive every rule of the workflow has, each as cheap as it can be: a
# script, three params and three resources computed per job, a log, a benchmark file and a conda environment
# (Snakemake's own cost of those directives, none of plmfair's plan; a dry run without --sdm conda still
# reads each job's environment)
DIRECTIVES = """\
    params:
        model=per_model,
        protocol=per_model,
        precision=per_model,
    log:
        "logs/{rule}/{jobid}.log",
    benchmark:
        "benchmarks/{rule}/{jobid}.tsv"
    resources:
        mem_mb=lambda wildcards, input, attempt: 1000 * attempt,
        runtime=lambda wildcards, input, attempt: 10 * attempt,
        gpu=lambda wildcards: 0,
    conda:
        "env.yaml"
    script:
        "job.py"
"""


def floor_snakefile(path: Path, models: int, datasets: int, jobs: int, *, directives: bool = False) -> Path:
    """A trivial Snakefile at ``path`` whose dry run plans ``jobs`` jobs: the survey's shape (``models`` x
    ``datasets`` scoring jobs, their fetches and reads, one gathering job) and the rest as jobs of their own;
    with ``directives``, each rule but the gathering one has :data:`DIRECTIVES` (its script beside it)."""
    extra = jobs - (models * datasets + models + datasets + 1)
    if extra < 0:
        raise SystemExit(f"the workflow planned {jobs} jobs, fewer than the floor's shape alone")
    # each rule's log and benchmark named by its own wildcards
    jobids = {"fetch": "{model}", "read": "{name}", "score": "{model}/{name}", "extra_body": "{i}"}
    bodies = {
        rule: DIRECTIVES.format(rule=rule.removesuffix("_body"), jobid=jobid) if directives else TRIVIAL
        for rule, jobid in jobids.items()
    }
    text = FLOOR.format(models=models, datasets=datasets, extra=extra, **bodies)
    path.write_text(text, encoding="utf-8")
    (path.parent / "job.py").touch()
    (path.parent / "env.yaml").write_text("dependencies: [python]\n", encoding="utf-8")
    return path


def dry_run(config_path: Path | None, workdir: Path, snakefile: Path = REPO / "Snakefile") -> tuple[float, float, int]:
    """(seconds, peak memory in MB, jobs planned) of ``snakemake --dry-run`` on the configuration (None: the
    Snakefile's own, as the floor's)."""
    cmd = [
        str(Path(sys.executable).parent / "snakemake"),
        "--snakefile",
        str(snakefile),
        "--directory",
        str(workdir),
        "--cores",
        "1",
        "--dry-run",
        "--quiet",
        "rules",
        *(["--configfile", str(config_path)] if config_path else []),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"snakemake --dry-run failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KB on Linux; the largest child so far
    # the job stats table (printed twice by a dry run: before the jobs and again at its end) ends in its total
    totals = [line.split()[-1] for line in proc.stdout.splitlines() if line.startswith("total")]
    if not totals or not totals[0].isdigit():
        raise SystemExit(f"snakemake --dry-run printed no job total:\n{proc.stdout[-2000:]}")
    return seconds, max(peak, before) / 1024, int(totals[0])


def timed_dry_runs(
    config_path: Path, models: int, datasets: int, tmp: Path, repeats: int
) -> tuple[dict[str, list[float]], float, int]:
    """The seconds of each of ``repeats`` dry runs of the workflow on ``config_path``, of the trivial Snakefile
    and of the directives' Snakefile of as many jobs, taken in turn; the workflow's peak memory and jobs."""
    times: dict[str, list[float]] = {"workflow": [], "trivial": [], "directives": []}
    peak, jobs = 0.0, 0
    for repeat in range(repeats):
        seconds, peak, jobs = dry_run(config_path, tmp / f"work_{models}_{repeat}")
        times["workflow"].append(seconds)
        for kind in ("trivial", "directives"):
            folder = tmp / f"floor_{kind}_{models}_{repeat}"
            folder.mkdir()
            snakefile = floor_snakefile(folder / "Snakefile", models, datasets, jobs, directives=kind != "trivial")
            floor_seconds, _, floor_jobs = dry_run(None, folder / "work", snakefile)
            if floor_jobs != jobs:
                raise SystemExit(f"the {kind} floor planned {floor_jobs} jobs, the workflow {jobs}")
            times[kind].append(floor_seconds)
    return times, peak, jobs


def spread(times: list[float]) -> str:
    """A dry run's median and, over more than one repeat, its range."""
    median = statistics.median(times)
    return f"{median:5.1f} s" + (f" ({min(times):.1f}-{max(times):.1f})" if len(times) > 1 else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, nargs="+", default=[100, 300, 1000])
    ap.add_argument("--datasets", type=int, default=10)
    ap.add_argument("--local", action="store_true", help="local checkpoint folders instead of Hub ids")
    ap.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="dry runs of each Snakefile per size, taken in turn (the workflow's, the trivial one's, the directives'),"
        " so that a slow spell of the machine falls on all three; the ratios are of their medians",
    )
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted(args.models):
            path = Path(tmp) / f"survey_{n}.yaml"
            local = Path(tmp) / f"checkpoints_{n}" if args.local else None
            path.write_text(yaml.safe_dump(survey_config(n, args.datasets, local=local)))
            config = load_config([path])
            calls = plan_calls(config)
            times, peak, jobs = timed_dry_runs(path, n, args.datasets, Path(tmp), args.repeats)
            medians = {kind: statistics.median(seconds) for kind, seconds in times.items()}
            seconds, floor_seconds, directives_seconds = medians["workflow"], medians["trivial"], medians["directives"]
            rows.append((n, seconds, peak, jobs, calls))
            print(
                f"{n:>5} {'local' if args.local else 'Hub'} models x {args.datasets} data sets: "
                f"snakemake --dry-run {spread(times['workflow'])}, peak memory "
                f"{peak:7.0f} MB (the largest Snakemake so far), {jobs:>6} jobs; plan functions alone {calls:6.2f} s; "
                f"a trivial Snakefile's {jobs} jobs {spread(times['trivial'])}: "
                f"{seconds / floor_seconds:.2f}x Snakemake's floor (goal at most 1.5x); the same jobs with the "
                f"workflow's kinds of directive {spread(times['directives'])} "
                f"({directives_seconds / floor_seconds:.2f}x the floor): the workflow "
                f"{seconds / directives_seconds:.2f}x that",
                flush=True,
            )
    if args.repeats > 1:
        print(f"(each time the median of {args.repeats} dry runs, their range in brackets)")
    base = rows[0]
    for n, seconds, _, _, calls in rows[1:]:
        print(
            f"{base[0]} -> {n} models ({n / base[0]:.0f}x): dry run {seconds / base[1]:.1f}x, plan functions "
            f"{calls / max(base[4], 1e-9):.1f}x (linear: {n / base[0]:.0f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
