# Paths of the plan's records. plmfair.plan decides which jobs exist and what each reads (torch-free,
# unit-tested); the functions here only turn its records into the paths of the stage files.
import re

from snakemake import resources as snakemake_resources
from snakemake.common import get_function_params, overwrite_function_params

from plmfair import plan
from plmfair import resources as job_needs  # each rule's declared memory and run time
from plmfair.io.download import mirror_copy_stamp
from plmfair.scoring.specs import model_files

MODEL_SPECS = plan.model_specs(config)
DOWNLOADS = {entry["file"]: entry for entry in plan.active_downloads(config).values()}
CROWS_SETS = plan.crows_pairs_sets(config)
CLOZE_CORPORA = plan.cloze_corpora(config)
CLOZE_SETS = plan.cloze_sets(config)
TABLES = plan.tables(config)
INGESTED_CLOZE_TESTS = {name: plan.annotations_file(name) for name in plan.cloze_tests(config)}
CONSTRUCTED_ANSWERS = [plan.annotations_file(s) for s in plan.constructed_answered_sets(config)]
INGESTED_CROWS_PAIRS = {ds: plan.crows_pairs_data_file(ds) for ds in plan.crows_pairs_ingested(config)}


def _alternatives(names):
    return "|".join(re.escape(n) for n in sorted(names)) or "(?!)"


wildcard_constraints:
    file=_alternatives(DOWNLOADS),
    dataset=_alternatives(CROWS_SETS),
    built_model=_alternatives(plan.built_models(config)),
    hub_model=_alternatives(plan.hub_stores(config)),
    model=_alternatives(MODEL_SPECS),
    corpus=_alternatives(CLOZE_CORPORA),
    lang="[a-z]{2,3}",
    cloze_set=_alternatives(CLOZE_SETS),
    cloze_test=_alternatives(plan.cloze_tests(config)),
    table=_alternatives(TABLES),


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
    return {"mem_mb": signed(job_needs.mem_mb(rule)), "runtime": signed(job_needs.runtime(rule))}


def scoring_resources(rule):
    """What every scoring job declares (crows_pairs_score, cloze_score, tsne_vectors): its memory
    and run time from its input and model (plmfair.resources), its model's GPUs, the CPUs beside each
    GPU for tokenisation and torch's host work, and its token budget (tokens per forward pass, batch
    size x padded length; 0: the default of plmfair.scoring.base.default_token_budget; raise it on a
    large GPU with --set-resources <rule>:token_budget=N)."""
    return {**sized(rule), "gpu": from_plan(plan.model_gpus, "model"), "cpus_per_gpu": SCORING_THREADS,
            "token_budget": 0}


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


def crows_pairs_scores(jobs):
    return [run["scores"] for run in plan.crows_pairs_runs(jobs)]


def corpus_token_files(corpus, langs):
    """Each language's tokens file of a corpus, by language: what a script reads by name."""
    return {lang: plan.set_file(corpus, f"tokens/{lang}") for lang in langs}


def corpus_tokens(corpus, langs):
    return list(corpus_token_files(corpus, langs).values())


def corpus_alignment_files(corpus, langs):
    """Each language's alignments to the pivot, by language."""
    return {lang: plan.set_file(corpus, f"alignments/{lang}") for lang in langs}


def spacy_load(pipeline):
    """What spacy.load is given: the folder the workflow built the pipeline in, or its name."""
    return f"results/spacy/{pipeline.lang}" if pipeline.built else pipeline.name


def spacy_built(pipelines):
    return [f"results/spacy/{p.lang}" for p in pipelines if p.built]


# ---- data and models


def get_crows_pairs_inputs(w):
    """The data set's file, and the ingested data set it borrows directions from (direction_from)."""
    source = CROWS_SETS[w.dataset].get("direction_from")
    return {"raw": download(CROWS_SETS[w.dataset]),
            "reference": [plan.crows_pairs_data_file(source)] if source else []}


@signed
def get_local_model_files(w):
    """A model the workflow builds or fetches: that rule's folder. A model given by path: every file in
    its folder, so that replacing one reruns the model's jobs."""
    folder = plan.model_folder(config, w.model)
    return [folder] if plan.workflow_managed(config, w.model) else [str(p) for p in model_files(folder)]


def get_run_record_inputs(wildcards):
    """What the run record summarises, by role (plmfair.plan.run_record_inputs)."""
    return plan.run_record_inputs(config)


def get_analysis_plan_inputs(wildcards):
    """The result files whose tests the run's analysis plan adjusts, by study (plmfair.plan.analysis_plan_inputs)."""
    return plan.analysis_plan_inputs(config)


def get_model_run_files():
    """One scoring output per model that runs (its run metadata holds what was loaded), by model."""
    return plan.model_run_files(config)


# ---- cloze construction


def get_cloze_bitext_files(w):
    bitexts = plan.corpus(config, w.corpus).bitexts().items()
    return {f"{lang}_{side}": download(e) for lang, pair in bitexts for side, e in zip(("pivot", "text"), pair)}


def get_cloze_tokenize_inputs(w):
    """A language's text file, or the corpus joined from its bitexts; the pipeline the workflow built."""
    entry = plan.corpus(config, w.corpus).text(w.lang)
    return {"text": plan.set_file(w.corpus, "joined") if entry is None else download(entry),
            "pipeline": spacy_built([plan.spacy_pipeline(config, w.lang)])}


def get_spacy_pipeline(w):
    return spacy_load(plan.spacy_pipeline(config, w.lang))


def get_cloze_align_inputs(w):
    """Both languages' tokens, and what the alignment route reads (a Pharaoh file, or extra text with
    the pipelines that tokenize it)."""
    route = plan.alignment_route(config, w.corpus, w.lang)
    pivot_tokens, tokens = corpus_tokens(w.corpus, [route.pivot, route.lang])
    return {"pivot_tokens": pivot_tokens, "tokens": tokens, "pipelines": spacy_built(route.pipelines),
            **{role: download(entry) for role, entry in route.downloads.items()}}


def get_cloze_align_settings(w):
    route = plan.alignment_route(config, w.corpus, w.lang)
    return {**route.settings, "pipelines": [spacy_load(p) for p in route.pipelines]}


def get_cloze_select_inputs(w):
    c = plan.corpus(config, w.corpus)
    return {"tokens": corpus_tokens(w.corpus, c.langs),
            "alignments": list(corpus_alignment_files(w.corpus, c.langs[1:]).values()),
            "join_counts": plan.set_file(w.corpus, "join_counts") if c.joined else [],
            "pipelines": spacy_built(plan.spacy_pipeline(config, lang) for lang in c.langs)}


def get_cloze_select_settings(w):
    """The corpus's languages (pivot first), whether its lines are tokenized, and each language's pipeline."""
    c = plan.corpus(config, w.corpus)
    return {"langs": list(c.langs), "tokenized": c.tokenized, "token_files": corpus_token_files(w.corpus, c.langs),
            "alignment_files": corpus_alignment_files(w.corpus, c.langs[1:]),
            "pipelines": {lang: spacy_load(plan.spacy_pipeline(config, lang)) for lang in c.langs}}


def get_gold_token_files(w):
    """The corpus text of the gold sets' languages, by language."""
    return corpus_token_files(w.corpus, plan.gold_langs(config, w.corpus))


def get_cloze_test_archive(w):
    """The archive of a ready-made cloze test (datasets.cloze_tests)."""
    return download(plan.cloze_tests(config)[w.cloze_test])


def get_tsne_vectors(w):
    """The t-SNE vectors of every model mapped for a ready-made cloze test."""
    return [plan.set_file(w.cloze_set, f"tsne/{m}") for m in plan.tsne_models(config, w.cloze_set)]


def get_answer_downloads(w):
    """A corpus's human answer files, by language."""
    return {lang: download(entry) for lang, entry in plan.corpus(config, w.corpus).answers().items()}


def get_answer_files(w):
    """The same files, as the rule's input."""
    return list(get_answer_downloads(w).values())


def get_gold_alignment_inputs(w):
    """The gold sets' downloads, and the corpus text of their languages (aligned together with them)."""
    golds = plan.gold_sets(config, w.corpus).values()
    return {"downloads": list(dict.fromkeys(download(entry) for gold in golds for entry in gold.files.values())),
            "tokens": corpus_tokens(w.corpus, plan.gold_langs(config, w.corpus))}


# ---- cloze sets (MozArt's and the constructed ones): one chain


@signed
def get_cloze_set_inputs(w):
    """A set's sentences and its human answers when it has them (plmfair.cloze.plan)."""
    return plan.cloze_set_inputs(config, w.cloze_set)


def get_cloze_set_scores(kind):
    """Every model's ``predictions`` or ``answer_scores`` file of a set, in the order of its models."""

    def files(w):
        return [run[kind] for run in plan.cloze_set_runs(config, w.cloze_set)]

    return files


# ---- tables, the report and what a run makes


def get_table(attribute):
    """A field of the table's record (inputs, category), or its rendering."""

    def field(w):
        value = getattr(TABLES[w.table], attribute)
        return value() if callable(value) else value

    return field
