# Input functions and wildcard constraints shared by the stage files.
import re

from plmfair.config import download_entries
from plmfair.models import specs_from_config

MODEL_SPECS = specs_from_config(config)
DOWNLOADS = {entry["file"]: entry for entry in download_entries(config).values()}
CROWS_SETS = config["datasets"].get("crows_pairs", {})
BUILT_MODELS = {name: entry for name, entry in config["models"].items() if "build" in entry}

for _name, _entry in BUILT_MODELS.items():
    if _entry.get("path") != f"resources/models/{_name}":
        raise SystemExit(
            f"plmfair: config error at models.{_name}.path: a model with `build` must have "
            f"path: resources/models/{_name} (where the workflow builds it)"
        )


def _alternatives(names):
    return "|".join(re.escape(n) for n in sorted(names)) or "(?!)"


wildcard_constraints:
    file=_alternatives(DOWNLOADS),
    dataset=_alternatives(CROWS_SETS),
    built_model=_alternatives(BUILT_MODELS),
    model=_alternatives(MODEL_SPECS),
    lang="[a-z]{2,3}",


def get_download_url(wildcards):
    return DOWNLOADS[wildcards.file].get("url")


def get_download_sha256(wildcards):
    return DOWNLOADS[wildcards.file].get("sha256")


def get_mozart_archive():
    return f"resources/downloads/{config['datasets']['mozart']['file']}"


def get_crows_pairs_raw(wildcards):
    return f"resources/downloads/{CROWS_SETS[wildcards.dataset]['file']}"


def get_crows_pairs_format(wildcards):
    return CROWS_SETS[wildcards.dataset]["format"]


def get_crows_pairs_lang(wildcards):
    return CROWS_SETS[wildcards.dataset]["lang"]


def get_ingested_crows_pairs():
    return {name: f"results/data/crows_pairs/{name}.parquet" for name in CROWS_SETS}


def get_mozart_annotations():
    return ["results/data/mozart/annotations.parquet"] if "mozart" in config["datasets"] else []


def get_tiny_model_corpus():
    """The demo text a tiny model's tokenizer is trained on: every ingested sentence."""
    return get_mozart_annotations() + list(get_ingested_crows_pairs().values())


def get_ingest_outputs():
    return get_tiny_model_corpus() + ["results/tables/data_summary.csv"]


def get_tiny_model_build(wildcards):
    return BUILT_MODELS[wildcards.built_model]["build"]


def get_model_files(wildcards):
    """A model built by the workflow is an input of the jobs that use it; others load by id or path."""
    name = wildcards.model
    return [f"resources/models/{name}"] if name in BUILT_MODELS else []




def get_model_entry(wildcards):
    """The model's config entry: a change of id, path, revision or casing reruns its jobs."""
    return {"name": wildcards.model, **config["models"][wildcards.model]}


def get_crows_pairs_jobs():
    """(dataset, model) pairs to score: each model on the data sets whose language it covers."""
    study = config["crows_pairs"]
    return [
        (ds, m)
        for ds in study["datasets"]
        for m in study["models"]
        if MODEL_SPECS[m].runs_on(CROWS_SETS[ds]["lang"])
    ]


def get_crows_pairs_scores():
    return [f"results/crows_pairs/{ds}/{m}.parquet" for ds, m in get_crows_pairs_jobs()]


def get_crows_pairs_outputs():
    if not get_crows_pairs_jobs():
        return []
    return [
        "results/crows_pairs/summary.parquet",
        "results/tables/crows_pairs.csv",
        "results/figures/crows_pairs.png",
    ]


def get_final_outputs():
    return get_ingest_outputs() + get_crows_pairs_outputs() + get_mozart_outputs()


def get_mozart_langs():
    return config["datasets"].get("mozart", {}).get("languages", []) if config["mozart"]["models"] else []


def get_mozart_runs():
    """(model, lang) pairs of the MozArt study."""
    return [
        (m, lang)
        for m in config["mozart"]["models"]
        for lang in get_mozart_langs()
        if MODEL_SPECS[m].runs_on(lang)
    ]


def get_mozart_run_files(kind):
    return [f"results/mozart/{kind}/{m}/{lang}.parquet" for m, lang in get_mozart_runs()]


def get_mozart_table_files():
    """Tables 2-5 per model: {"model|metric": {"csv": ..., "md": ..., "tex": ...}}."""
    names = {"p_at_1": "table2_p_at_1", "spearman_rho": "table3_spearman", "p_at_5": "table4_p_at_5", "kendall_tau": "table5_kendall"}
    return {
        f"{m}|{metric}": {ext: f"results/tables/mozart_{name}_{m}.{ext}" for ext in ("csv", "md", "tex")}
        for m in config["mozart"]["models"]
        for metric, name in names.items()
    }


def get_mozart_table_outputs():
    return [path for files in get_mozart_table_files().values() for path in files.values()]


def get_mozart_outputs():
    if not get_mozart_runs():
        return []
    return ["results/mozart/metrics.parquet", "results/tables/mozart_disparity.csv", "results/figures/mozart_mrr.png"] + get_mozart_table_outputs()
