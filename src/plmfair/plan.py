"""The study plan: which jobs a configuration asks for, and the cross-checks of its keys.

Torch-free, so Snakemake builds its DAG (``workflow/rules/common.smk`` wraps these
functions in path functions) without importing a model library. Every function takes
the validated config (defaults filled in by the JSON schema).

Model lists. ``mozart.models``, ``crows_pairs.models`` and ``cloze.models`` default to
every declared model that fits the study: its family can be scored on the study
(:data:`plmfair.scoring.FAMILIES`) and its ``languages`` (empty = all) meet at least one
language of the study's data. An explicit list wins; a model on it still runs only on
the languages it covers.
"""

from __future__ import annotations

from dataclasses import dataclass

from plmfair.errors import ConfigError
from plmfair.models import ModelSpec, specs_from_config
from plmfair.scoring import FAMILIES

STUDIES = ("mozart", "crows_pairs", "cloze")


def model_specs(config: dict) -> dict[str, ModelSpec]:
    return specs_from_config(config)


def enabled(config: dict, study: str) -> bool:
    """A study is on unless ``<study>.enabled: false`` (which, unlike an emptied mapping, survives
    Snakemake's merge of a user's --configfile into the defaults)."""
    return bool(config.get(study, {}).get("enabled", True))


def crows_pairs_sets(config: dict) -> dict[str, dict]:
    """Declared CrowS-Pairs data sets by name."""
    return config.get("datasets", {}).get("crows_pairs", {})


def crows_pairs_ingested(config: dict) -> list[str]:
    """The CrowS-Pairs data sets to download and ingest: those scored, and those they take
    directions from."""
    if not enabled(config, "crows_pairs"):
        return []
    sets = crows_pairs_sets(config)
    out = list(config["crows_pairs"]["datasets"])
    for name in out:  # grows while following direction_from
        source = sets.get(name, {}).get("direction_from")
        if source and source not in out:
            out.append(source)
    return out


def mozart_ingested(config: dict) -> bool:
    return enabled(config, "mozart") and "mozart" in config.get("datasets", {})


def cloze_corpora(config: dict) -> dict[str, dict]:
    """The constructed-set corpora in use (the study and the corpus not switched off)."""
    if not enabled(config, "cloze"):
        return {}
    return {name: entry for name, entry in config.get("cloze", {}).get("corpora", {}).items()
            if entry.get("enabled", True)}


def download_entries(config: dict) -> dict[str, dict]:
    """Every declared download, keyed by its config location (``datasets.crows_pairs.fr``): every
    mapping with a ``file`` key, wherever it is in the config (models have none)."""
    out: dict[str, dict] = {}

    def walk(node, where: str) -> None:
        if isinstance(node, dict):
            if "file" in node:
                out[where] = node
                return
            for key, value in node.items():
                walk(value, f"{where}.{key}" if where else str(key))

    walk({k: v for k, v in config.items() if k != "models"}, "")
    return out


def _download_in_use(config: dict, where: str) -> bool:
    """Whether an enabled study uses the download at config location ``where`` (an unknown location
    is a programming error: a new kind of download needs its rule here)."""
    parts = where.split(".")
    if parts[:2] == ["datasets", "mozart"]:
        return mozart_ingested(config)
    if parts[:2] == ["datasets", "crows_pairs"]:
        return parts[2] in crows_pairs_ingested(config)
    if parts[:2] == ["cloze", "corpora"]:
        return parts[2] in cloze_corpora(config)
    if parts[:2] == ["cloze", "spacy"]:
        return any(parts[2] in cloze_langs(config, name) for name in cloze_corpora(config))
    raise ConfigError(f"config error at {where}: plmfair does not know what uses a download declared here")


def active_downloads(config: dict) -> dict[str, dict]:
    """The declared downloads the enabled studies use, keyed by config location."""
    return {where: entry for where, entry in download_entries(config).items() if _download_in_use(config, where)}


def cloze_langs(config: dict, corpus: str) -> list[str]:
    """The corpus languages, pivot first."""
    return corpus_langs(cloze_corpora(config)[corpus])


def corpus_langs(entry: dict) -> list[str]:
    """A corpus entry's languages, pivot first: of its text files, or its bitexts' and the pivot."""
    langs = entry["bitexts"] if "bitexts" in entry else entry["text"]
    return [entry["pivot"]] + [lang for lang in langs if lang != entry["pivot"]]


def spacy_packages(config: dict) -> dict[str, str]:
    """The spaCy pipelines the enabled cloze corpora need as installed packages, by language
    (a path or a lexicon entry in ``cloze.spacy`` is not a package)."""
    spacy_cfg = config.get("cloze", {}).get("spacy", {})
    langs = {lang for corpus in cloze_corpora(config) for lang in cloze_langs(config, corpus)}
    return {lang: spacy_cfg[lang] for lang in sorted(langs)
            if isinstance(spacy_cfg.get(lang), str) and "/" not in spacy_cfg[lang] and "\\" not in spacy_cfg[lang]}


def study_languages(config: dict, study: str) -> list[str]:
    """The data languages a study covers."""
    if study == "mozart":
        if not mozart_ingested(config):
            return []
        return list(config.get("datasets", {}).get("mozart", {}).get("languages", []))
    if study == "crows_pairs":
        sets = crows_pairs_sets(config)
        return list(dict.fromkeys(sets[ds]["lang"] for ds in config["crows_pairs"]["datasets"] if ds in sets))
    return list(dict.fromkeys(lang for corpus in cloze_corpora(config) for lang in cloze_langs(config, corpus)))


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


def crows_pairs_jobs(config: dict) -> list[tuple[str, str]]:
    """(dataset, model) pairs to score: each model on the data sets whose language it covers."""
    if not enabled(config, "crows_pairs"):
        return []
    specs, sets = model_specs(config), crows_pairs_sets(config)
    return [(ds, m) for ds in config["crows_pairs"]["datasets"] for m in study_models(config, "crows_pairs")
            if specs[m].runs_on(sets[ds]["lang"])]


def crows_pairs_language_jobs(config: dict) -> list[tuple[str, str]]:
    """The CrowS-Pairs jobs of the models run on two or more data sets: those compared across languages."""
    jobs = crows_pairs_jobs(config)
    models = [m for _, m in jobs]
    return [(ds, m) for ds, m in jobs if models.count(m) > 1]


def crows_pairs_protocol(config: dict, model: str) -> str:
    """The protocol a model is scored with: the configured masking rule for masked LMs, the
    whole-sentence log-likelihood for causal LMs."""
    return FAMILIES[model_specs(config)[model].family].protocol or config["crows_pairs"]["protocol"]


def model_precision(config: dict, study: str, model: str) -> str:
    """The precision a model is scored in on a study: its own ``precision``, else the study's."""
    return config["models"][model].get("precision") or config[study]["precision"]


def model_gpus(config: dict, model: str) -> int:
    """GPUs each scoring job of a model asks for (``models.<name>.gpus``, default 1)."""
    return int(config["models"][model].get("gpus") or 1)


def num_beams(config: dict, study: str, model: str) -> int | None:
    """The study's ``num_beams`` for a model whose predictions are a beam search; None for others
    (so that the setting does not rerun masked-LM jobs)."""
    if FAMILIES[model_specs(config)[model].family].beam_search:
        return config[study]["num_beams"]
    return None


@dataclass(frozen=True)
class ClozeSet:
    """A set of cloze sentences the models fill: MozArt's, or one constructed from a corpus. Both go
    through the same chain (scores, metrics, tables, figures, tests); only a set with human
    answers gets the metrics and what follows them.

    ``study`` is the config section with its scoring settings and model list (``mozart`` or
    ``cloze``); ``langs`` its languages (pivot first for a constructed set); ``answered`` the
    languages with human answers."""

    name: str
    study: str
    langs: tuple[str, ...]
    answered: tuple[str, ...]

    @property
    def constructed(self) -> bool:
        return self.study == "cloze"


def cloze_sets(config: dict) -> dict[str, ClozeSet]:
    """The cloze sets in use, by name: ``mozart`` when MozArt is ingested, then every enabled corpus."""
    out = {}
    if mozart_ingested(config):
        langs = tuple(config["datasets"]["mozart"]["languages"])
        out["mozart"] = ClozeSet("mozart", "mozart", langs, langs)
    for name, entry in cloze_corpora(config).items():
        langs = tuple(corpus_langs(entry))
        out[name] = ClozeSet(name, "cloze", langs, tuple(lang for lang in langs if lang in entry["answers"]))
    return out


def cloze_set_models(config: dict, name: str) -> list[str]:
    """The models that fill a cloze set: its own ``models`` list (a corpus's), else its study's
    models, that cover one of its languages."""
    cloze_set = cloze_sets(config)[name]
    specs = model_specs(config)
    own = cloze_corpora(config)[name].get("models") if cloze_set.constructed else None
    candidates = list(own) if own is not None else study_models(config, cloze_set.study)
    return [m for m in candidates if any(specs[m].runs_on(lang) for lang in cloze_set.langs)]


def cloze_set_langs(config: dict, name: str, model: str) -> list[str]:
    """The languages of a cloze set a model is scored on."""
    spec = model_specs(config)[model]
    return [lang for lang in cloze_sets(config)[name].langs if spec.runs_on(lang)]


def cloze_set_scoring(config: dict, name: str, model: str) -> dict:
    """What a cloze set's scoring job of a model reads from the config, and nothing else (so that
    other settings do not rerun it): languages, top_k, num_beams (beam-search families only), precision."""
    cloze_set = cloze_sets(config)[name]
    study = config[cloze_set.study]
    return {"langs": cloze_set_langs(config, name, model), "top_k": study["top_k"],
            "num_beams": num_beams(config, cloze_set.study, model),
            "precision": model_precision(config, cloze_set.study, model)}


def answered_sets(config: dict) -> list[str]:
    """The cloze sets with human answers that at least one model fills (they get metrics and tests)."""
    return [name for name, s in cloze_sets(config).items() if s.answered and cloze_set_models(config, name)]


def models_in_use(config: dict) -> list[str]:
    """The models some job of the configuration scores, in config order."""
    used = {m for _, m in crows_pairs_jobs(config)}
    used |= {m for name in cloze_sets(config) for m in cloze_set_models(config, name)}
    return [name for name in config.get("models", {}) if name in used]


def built_models(config: dict) -> dict[str, dict]:
    """Models the workflow builds itself (``build:``), by name."""
    return {name: entry for name, entry in config.get("models", {}).items() if "build" in entry}


def hub_models(config: dict) -> dict[str, dict]:
    """Models the workflow fetches from the Hub (``hf_id``) into ``resources/models/<name>``, by name."""
    return {name: entry for name, entry in config.get("models", {}).items() if entry.get("hf_id")}


def model_folder(config: dict, name: str) -> str:
    """The folder a model's jobs load it from: ``resources/models/<name>`` for a model the workflow
    builds or fetches, else its ``path``."""
    if name in built_models(config) or name in hub_models(config):
        return f"resources/models/{name}"
    return config["models"][name]["path"]
