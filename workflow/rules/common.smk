# Paths of the plan's records. plmfair.plan decides which jobs exist and what each reads (torch-free,
# unit-tested); the functions here only turn its records into the paths of the stage files.
import re

from snakemake import resources as snakemake_resources
from snakemake.common import get_function_params, overwrite_function_params

from plmfair import plan
from plmfair import resources as job_needs  # each rule's declared memory and run time
from plmfair.io.download import mirror_copy_stamp
from plmfair.scoring.specs import model_files
from plmfair.studies import rule_need

MODEL_SPECS = plan.model_specs(config)
DOWNLOADS = {entry["file"]: entry for entry in plan.active_downloads(config).values()}
TABLES = plan.tables(config)
FIGURES = plan.drawn_figures(config)
DATA_SUMMARY_INPUTS = plan.data_summary_inputs(config)


def _alternatives(names):
    return "|".join(re.escape(n) for n in sorted(names)) or "(?!)"


wildcard_constraints:
    file=_alternatives(DOWNLOADS),
    built_model=_alternatives(plan.built_models(config)),
    hub_model=_alternatives(plan.hub_stores(config)),
    model=_alternatives(MODEL_SPECS),
    lang="[a-z]{2,3}",


# Threads of a scoring job: torch's host threads, and on SLURM the CPUs beside each GPU (cpus_per_gpu).
SCORING_THREADS = 8


def signed(function):
    """``function`` (an input, params or resources function) with its parameters recorded, the record
    snakemake.ioutils' wrappers make: Snakemake otherwise reads its signature anew several times for
    every job (with Resource.evaluate's below, 2.3 s of 21 s planning 1,000 models x 10 data sets:
    docs/performance.md). Signed: the functions of every rule that runs once per model or per (model,
    data set), and the factories every rule uses (from_plan, downloaded, sized)."""
    overwrite_function_params(function, get_function_params(function))
    return function


# Snakemake (from 9.x's Resource class on) evaluates each resource of each job through
# Resource.evaluate and reads that method's signature twice a resource: five resources of each of a
# survey's 10,000 jobs. Its record is its own signature's, so nothing Snakemake passes changes.
if hasattr(snakemake_resources, "Resource"):
    signed(snakemake_resources.Resource.evaluate)


def sized(rule):
    """The memory and run time a job of ``rule`` declares for its input and attempt (plmfair.resources)."""
    need = rule_need(rule)
    return {"mem_mb": signed(job_needs.mem_mb(need)), "runtime": signed(job_needs.runtime(need))}


def scoring_resources(rule):
    """What every scoring job declares (each study's scoring rules): its memory
    and run time from its input and model (plmfair.resources), its model's GPUs, the CPUs beside each
    GPU for tokenisation and torch's host work, and its token budget (tokens per forward pass, batch
    size x padded length; 0: the default of plmfair.scoring.base.default_token_budget; raise it on a
    large GPU with --set-resources <rule>:token_budget=N)."""
    return {
        **sized(rule),
        "gpu": from_plan(plan.model_gpus, "model"),
        "cpus_per_gpu": SCORING_THREADS,
        "token_budget": 0,
    }


def from_plan(function, *wildcards, **fixed):
    """A params function handing a job exactly what it reads, ``function(config, <wildcards>, **fixed)``
    of plmfair.plan, the wildcards given by name."""

    def provider(w):
        return function(config, *(w[name] for name in wildcards), **fixed)

    return signed(provider)


def downloaded(function, *wildcards):
    """An input function: the download (or list of downloads) a plan function names."""

    def paths(w):
        entries = function(config, *(w[name] for name in wildcards))
        return [download(e) for e in entries] if isinstance(entries, list) else download(entries)

    return signed(paths)


def download(entry):
    return plan.downloaded(entry["file"])


def unverified_mirror_copy(wildcards):
    """The size and time of the mirror's copy of a download that has no sha256 (else "")."""
    if plan.download_source(config, wildcards.file)["sha256"]:
        return ""
    return mirror_copy_stamp(config.get("mirror"), wildcards.file)


# ---- models and the run


@signed
def get_local_model_files(w):
    """A model the workflow builds or fetches: that rule's folder. A model given by path: every file in
    its folder, so that replacing one reruns the model's jobs."""
    folder = plan.model_folder(config, w.model)
    return [folder] if plan.workflow_managed(config, w.model) else [str(p) for p in model_files(folder)]


def get_run_record_inputs(wildcards):
    """What the run record summarises, by role (plmfair.plan.run_record_inputs)."""
    return plan.run_record_inputs(config)


def get_hypothesis_files(wildcards):
    """The result files whose tests the run's hypotheses adjust, by study (plmfair.plan.hypothesis_files)."""
    return plan.hypothesis_files(config)


def get_model_run_files():
    """One scoring output per model that runs (its run metadata holds what was loaded), by model."""
    return plan.model_run_files(config)
