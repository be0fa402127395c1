"""Models' settings: their specs, which models a study scores, where each is loaded from and how (the job plan is
:mod:`plmfair.plan`; which jobs score each model, :mod:`plmfair.plan.model_runs`)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

from plmfair.scoring import FAMILIES
from plmfair.scoring.specs import ModelSpec, model_spec, specs_from_config
from plmfair.studies import enabled, study_languages

# what the last models mapping seen gives (its specs, its Hub folders), by what it is and the mapping's identity,
# kept while the mapping is unchanged: Snakemake plans with one config, and the rules' functions ask for them
# once per job (thousands of times at survey scale)
_OF_MODELS: dict[str, tuple[int, dict, Any]] = {}

# the run's manifest of each model (its files, sizes and SHA-256): every scoring job's model input
MODEL_MANIFEST = "results/manifests/{model}.json"
T = TypeVar("T")


def _of_models(config: dict, what: str, build: Callable[[dict], T]) -> T:
    """``build(config)``, a value that depends on the configuration's models only, made once while its models
    mapping is the same object with the same content (made again when it changes)."""
    models = config.get("models", {})
    cached = _OF_MODELS.get(what)
    if cached is not None and cached[0] == id(models) and cached[1] == models:
        return cached[2]
    value = build(config)
    _OF_MODELS[what] = (id(models), copy.deepcopy(models), value)
    return value


def model_specs(config: dict) -> dict[str, ModelSpec]:
    """Every model's spec, built once per configuration (rebuilt when its models change)."""
    return _of_models(config, "specs", specs_from_config)


def spec_of(config: dict, model: str) -> ModelSpec:
    """One model's spec, built alone: a per-job plan function that built every model's spec made
    planning quadratic in the models (1,000 models x 10 data sets: a million specs)."""
    return model_spec(model, config["models"][model])


def fits(spec: ModelSpec, study: str, langs: list[str]) -> bool:
    """The model's family can be scored on the study and it covers one of ``langs``."""
    return FAMILIES[spec.family].scores(study) and any(spec.runs_on(lang) for lang in langs)


def study_models(config: dict, study: str) -> list[str]:
    """The models of a study: none when it is switched off, else its explicit list, else every
    declared model that fits it."""
    if not enabled(config, study):
        return []
    explicit = config[study].get("models")
    if explicit is not None:
        return list(explicit)
    langs = study_languages(config, study)
    return [name for name, spec in model_specs(config).items() if fits(spec, study, langs)]


def built_models(config: dict) -> dict[str, dict]:
    """Models the workflow builds itself (``build:``), by name."""
    return {name: entry for name, entry in config.get("models", {}).items() if "build" in entry}


def is_built(config: dict, name: str) -> bool:
    """Whether the workflow builds the model itself (one entry read: called per job, at survey scale)."""
    return "build" in config.get("models", {}).get(name, {})


def hub_models(config: dict) -> dict[str, dict]:
    """Models the workflow fetches from the Hub (``hf_id``), by name."""
    return {name: entry for name, entry in config.get("models", {}).items() if entry.get("hf_id")}


def hub_store(entry: dict) -> str:
    """The folder under the run's ``results/models/`` a Hub model is fetched into (hard links into the Hub
    cache, the one copy every run shares: a run's folder is its own, so Snakemake's cleanup of a failed
    fetch never removes what another run loads), named by what is fetched (the
    id, the revision, whether pickle weights are accepted) and never by the model's name in a run: two
    runs that give one name to different ids or revisions fetch into different folders, and two names
    for the same id and revision share one."""
    revision = (entry.get("revision") or "default").replace("/", "--")
    return f"{entry['hf_id'].replace('/', '--')}@{revision}" + ("+pickle" if entry.get("allow_pickle") else "")


def hub_stores(config: dict) -> dict[str, dict]:
    """The Hub models of the configuration by :func:`hub_store` folder, found once per configuration: each
    fetch job asks (:func:`hub_fetch`), and finding them per job made planning quadratic in the models."""
    return _of_models(config, "hub_stores", lambda c: {hub_store(e): e for e in hub_models(c).values()})


def hub_store_names(config: dict, store: str) -> str:
    """The config names of the models fetched into one :func:`hub_store` folder, for messages."""
    return "|".join(name for name, entry in hub_models(config).items() if hub_store(entry) == store)


def model_folder(config: dict, name: str) -> str:
    """The folder a model's jobs load it from: a built model's in the run's own results (it is trained
    on the run's data), a Hub model's there too by :func:`hub_store`, else its ``path``."""
    entry = config["models"][name]
    if "build" in entry:
        return f"results/models/{name}"
    if entry.get("hf_id"):
        return f"results/models/{hub_store(entry)}"
    return entry["path"]


def model_manifest(model: str) -> str:
    """A model's manifest (:func:`plmfair.scoring.specs.folder_manifest`), the input of every job that loads it.
    It is the run's own: another run that gives the name to another folder has its own manifest."""
    return MODEL_MANIFEST.format(model=model)


def workflow_managed(config: dict, name: str) -> bool:
    """Whether the workflow builds or fetches the model (its folder is that rule's output) rather than
    reading the folder of its ``path``."""
    entry = config.get("models", {}).get(name, {})
    return "build" in entry or bool(entry.get("hf_id"))


def tiny_model_build(config: dict, name: str) -> dict:
    """How the workflow builds a tiny model (its ``build`` entry: kind, sizes, seed)."""
    return built_models(config)[name]["build"]


def hub_fetch(config: dict, store: str) -> dict:
    """What fetching into a :func:`hub_store` folder reads: the id, revision and whether pickle weights
    are accepted."""
    entry = hub_stores(config)[store]
    return {
        "hf_id": entry["hf_id"],
        "revision": entry.get("revision"),
        "allow_pickle": entry.get("allow_pickle", False),
    }


# What a model's scoring jobs load and how, and nothing else: free text (pretraining_data, licence)
# and placement on the cluster (gpus) do not change a score.
LOADING_KEYS = ("hf_id", "path", "revision", "family", "uncased", "allow_pickle", "device_map", "max_memory")


def model_loading(config: dict, name: str) -> dict:
    """The ``models.<name>`` keys a scoring job of the model reads (its ``model`` parameter); a built
    model's folder as its ``path``."""
    entry = config["models"][name]
    built = {"path": model_folder(config, name)} if is_built(config, name) else {}
    return {"name": name, **built, **{key: entry[key] for key in LOADING_KEYS if entry.get(key) is not None}}


def model_precision(config: dict, model: str, study: str) -> str:
    """The precision a model is scored in on a study: its own ``precision``, else the study's."""
    return config["models"][model].get("precision") or config[study]["precision"]


def model_gpus(config: dict, model: str) -> int:
    """GPUs each scoring job of a model asks for (``models.<name>.gpus``, default 1)."""
    return int(config["models"][model].get("gpus") or 1)


def num_beams(config: dict, model: str, study: str) -> int | None:
    """The study's ``num_beams`` for a model whose predictions are a beam search; None for others
    (so that the setting does not rerun masked-LM jobs)."""
    if FAMILIES[spec_of(config, model).family].beam_search:
        return config[study]["num_beams"]
    return None
