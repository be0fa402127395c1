"""The study plan: every decision about which jobs a configuration asks for and what each job
reads, as functions of the validated config (defaults filled in by the JSON schema) that return
names or small typed records (:class:`ClozeSet`, :class:`Corpus`, :class:`AlignmentRoute`,
:class:`GoldSet`, :class:`SpacyPipeline`, :class:`Table`). ``workflow/rules/common.smk`` only
turns these into paths; a job's ``params`` are what a plan function returns for it and nothing
more, so that a change reruns exactly the jobs it changes. Validation is :mod:`plmfair.config`
(which reads the plan; the plan never imports it). Torch-free, so Snakemake builds its DAG
without importing a model library.

Model lists. ``mozart.models``, ``crows_pairs.models`` and ``cloze.models`` default to
every declared model that fits the study: its family can be scored on the study
(:data:`plmfair.scoring.FAMILIES`) and its ``languages`` (empty = all) meet at least one
language of the study's data. An explicit list wins; a model on it still runs only on
the languages it covers.
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass

from plmfair.core import is_folder_name
from plmfair.errors import ConfigError
from plmfair.models import ModelSpec, model_spec, specs_from_config
from plmfair.outputs import FIGURES, TABLES
from plmfair.scoring import FAMILIES
from plmfair.studies import PAIRS_TASK, STUDIES, owners

# ---- Studies and their data ----------------------------------------------------------------------


# the studies, by name (plmfair.studies): what each reads and does


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


def cloze_tests(config: dict) -> dict[str, dict]:
    """The ready-made cloze tests in MozArt's format (``datasets.cloze_tests``, MozArt's own among
    them), by name, while the study that scores them (``mozart``) is enabled."""
    if not enabled(config, "mozart"):
        return {}
    return {name: entry for name, entry in config.get("datasets", {}).get("cloze_tests", {}).items()
            if entry.get("enabled", True)}


def cloze_corpora(config: dict) -> dict[str, dict]:
    """The constructed-set corpora in use (the study and the corpus not switched off)."""
    if not enabled(config, "cloze"):
        return {}
    return {name: entry for name, entry in config.get("cloze", {}).get("corpora", {}).items()
            if entry.get("enabled", True)}


def corpus_langs(entry: dict) -> list[str]:
    """A corpus entry's languages, pivot first: of its text files, or its bitexts' and the pivot."""
    langs = entry["bitexts"] if "bitexts" in entry else entry["text"]
    return [entry["pivot"]] + [lang for lang in langs if lang != entry["pivot"]]


def cloze_langs(config: dict, corpus: str) -> list[str]:
    """The corpus languages, pivot first."""
    return corpus_langs(cloze_corpora(config)[corpus])


def study_languages(config: dict, study: str) -> list[str]:
    """The data languages a study covers: its minimal-pair data sets', or its cloze sets'."""
    if STUDIES[study].task == PAIRS_TASK:
        sets = crows_pairs_sets(config)
        return list(dict.fromkeys(sets[ds]["lang"] for ds in config[study]["datasets"] if ds in sets))
    return list(dict.fromkeys(lang for cloze_set in cloze_sets(config).values() if cloze_set.study == study
                              for lang in cloze_set.langs))


def crows_pairs_langs(config: dict) -> dict[str, str]:
    """The language of every scored CrowS-Pairs data set (only those: declaring another reruns nothing)."""
    sets = crows_pairs_sets(config)
    return {ds: sets[ds]["lang"] for ds in dict.fromkeys(ds for ds, _ in crows_pairs_jobs(config))}


DOWNLOAD_KEYS = ("file", "url", "sha256")


def crows_pairs_reading(config: dict, dataset: str) -> dict:
    """How a CrowS-Pairs file is read: every key of its entry but the download's own."""
    return {key: value for key, value in crows_pairs_sets(config)[dataset].items() if key not in DOWNLOAD_KEYS}


# ---- Downloads -----------------------------------------------------------------------------------


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


def cloze_test_languages(config: dict, name: str) -> list[str]:
    """The languages read from a ready-made cloze test's archive."""
    return list(cloze_tests(config)[name]["languages"])


def _download_in_use(config: dict, where: str) -> bool:
    """Whether an enabled study uses the download at config location ``where`` (an unknown location
    is a programming error: a new kind of download needs its rule here)."""
    parts = where.split(".")
    if parts[:2] == ["datasets", "crows_pairs"]:
        return parts[2] in crows_pairs_ingested(config)
    if parts[:2] == ["datasets", "cloze_tests"]:
        return parts[2] in cloze_tests(config)
    if parts[:2] == ["cloze", "corpora"]:
        return parts[2] in cloze_corpora(config)
    if parts[:2] == ["cloze", "spacy"]:
        return any(parts[2] in cloze_langs(config, name) for name in cloze_corpora(config))
    raise ConfigError(f"config error at {where}: plmfair does not know what uses a download declared here")


def active_downloads(config: dict) -> dict[str, dict]:
    """The declared downloads the enabled studies use, keyed by config location."""
    return {where: entry for where, entry in download_entries(config).items() if _download_in_use(config, where)}


def download_source(config: dict, file: str) -> dict:
    """Where a download comes from and what it is: its ``url`` and ``sha256`` (the mirror is only where
    to look first, and stays out, so that moving it reruns nothing)."""
    entry = next(e for e in active_downloads(config).values() if e["file"] == file)
    return {"url": entry.get("url"), "sha256": entry.get("sha256")}


# ---- Models --------------------------------------------------------------------------------------


# the specs of the last models mapping seen, by its identity, kept while it is unchanged: Snakemake
# plans with one config, and the rules' functions ask for the specs hundreds of times
_SPECS: dict[int, tuple[dict, dict[str, ModelSpec]]] = {}


def model_specs(config: dict) -> dict[str, ModelSpec]:
    """Every model's spec, built once per configuration (rebuilt when its models change)."""
    models = config.get("models", {})
    cached = _SPECS.get(id(models))
    if cached is not None and cached[0] == models:
        return cached[1]
    specs = specs_from_config(config)
    _SPECS.clear()
    _SPECS[id(models)] = (copy.deepcopy(models), specs)
    return specs


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


def workflow_managed(config: dict, name: str) -> bool:
    """Whether the workflow builds or fetches the model (its folder is that rule's output) rather than
    reading the folder of its ``path``."""
    return name in built_models(config) or name in hub_models(config)


def tiny_model_build(config: dict, name: str) -> dict:
    """How the workflow builds a tiny model (its ``build`` entry: kind, sizes, seed)."""
    return built_models(config)[name]["build"]


def hub_fetch(config: dict, name: str) -> dict:
    """What fetching a Hub model reads: its id, revision and whether pickle weights are accepted."""
    entry = hub_models(config)[name]
    return {"hf_id": entry["hf_id"], "revision": entry.get("revision"), "allow_pickle": entry.get("allow_pickle", False)}


# What a model's scoring jobs load and how, and nothing else: free text (pretraining_data, licence)
# and placement on the cluster (gpus) do not change a score.
LOADING_KEYS = ("hf_id", "path", "revision", "family", "uncased", "allow_pickle", "device_map", "max_memory")


def model_loading(config: dict, name: str) -> dict:
    """The ``models.<name>`` keys a scoring job of the model reads (its ``model`` parameter)."""
    entry = config["models"][name]
    return {"name": name, **{key: entry[key] for key in LOADING_KEYS if entry.get(key) is not None}}


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


def model_runs(config: dict) -> dict[str, tuple[str, str]]:
    """The scoring output whose run metadata describes each model that runs, as (study, data set or
    cloze set): its first CrowS-Pairs job, else its first cloze set."""
    runs: dict[str, tuple[str, str]] = {}
    for ds, m in crows_pairs_jobs(config):
        runs.setdefault(m, ("crows_pairs", ds))
    for name in cloze_sets(config):
        for m in cloze_set_models(config, name):
            runs.setdefault(m, ("cloze", name))
    return runs


def model_languages(config: dict) -> dict[str, list[str]]:
    """The languages the config lets each model that runs be scored on (empty: all), for the models table."""
    specs = model_specs(config)
    return {name: list(specs[name].languages) for name in model_runs(config)}


def model_run_files(config: dict) -> dict[str, str]:
    """The path of the scoring output :func:`model_runs` names for each model (its run metadata holds
    what was loaded and how it ran), by model."""
    paths = {"crows_pairs": crows_pairs_scores_file, "cloze": lambda cloze_set, m: cloze_scores_file(cloze_set, "predictions", m)}
    return {m: paths[study](name, m) for m, (study, name) in model_runs(config).items()}


# ---- CrowS-Pairs ---------------------------------------------------------------------------------


def crows_pairs_jobs(config: dict) -> list[tuple[str, str]]:
    """(dataset, model) pairs to score: each model on the data sets whose language it covers."""
    if not enabled(config, "crows_pairs"):
        return []
    specs, sets, models = model_specs(config), crows_pairs_sets(config), study_models(config, "crows_pairs")
    return [(ds, m) for ds in config["crows_pairs"]["datasets"] for m in models if specs[m].runs_on(sets[ds]["lang"])]


def crows_pairs_scores_file(dataset: str, model: str) -> str:
    """The per-pair scores of a model on a CrowS-Pairs data set."""
    return f"results/crows_pairs/{dataset}/{model}.parquet"


def crows_pairs_data_file(dataset: str) -> str:
    """An ingested CrowS-Pairs data set."""
    return f"results/data/crows_pairs/{dataset}.parquet"


def crows_pairs_runs(jobs: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Each job as one record a script reads (``dataset``, ``model``, ``scores``: its per-pair file), so
    that a job and its file travel together rather than as two lists zipped by position."""
    return [{"dataset": ds, "model": m, "scores": crows_pairs_scores_file(ds, m)} for ds, m in jobs]


def crows_pairs_language_jobs(config: dict) -> list[tuple[str, str]]:
    """The CrowS-Pairs jobs of the models run on two or more data sets: those compared across languages."""
    jobs = crows_pairs_jobs(config)
    runs = Counter(m for _, m in jobs)
    return [(ds, m) for ds, m in jobs if runs[m] > 1]


def crows_pairs_protocol(config: dict, model: str) -> str:
    """The protocol a model is scored with: the configured masking rule for masked LMs, the
    whole-sentence log-likelihood for causal LMs."""
    return FAMILIES[spec_of(config, model).family].protocol or config["crows_pairs"]["protocol"]


# ---- Cloze sets (MozArt's and the constructed ones) ----------------------------------------------


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
        return STUDIES[self.study].constructs


def cloze_sets(config: dict) -> dict[str, ClozeSet]:
    """The cloze sets in use, by name: the ready-made cloze tests (MozArt's is ``mozart``), then every
    enabled corpus."""
    out = {}
    for name, entry in cloze_tests(config).items():  # ready-made, scored under the mozart study
        langs = tuple(entry["languages"])
        out[name] = ClozeSet(name, "mozart", langs, langs)
    for name, entry in cloze_corpora(config).items():
        langs = tuple(corpus_langs(entry))
        out[name] = ClozeSet(name, "cloze", langs, tuple(lang for lang in langs if lang in entry["answers"]))
    return out


def cloze_scores_file(cloze_set: str, kind: str, model: str) -> str:
    """A model's ``predictions`` or ``answer_scores`` file of a cloze set."""
    return f"results/cloze/{cloze_set}/{kind}/{model}.parquet"


def cloze_set_runs(config: dict, name: str) -> list[dict[str, str]]:
    """Each model that fills a cloze set as one record (``model``, ``predictions``, ``answer_scores``)."""
    return [{"model": m, **{kind: cloze_scores_file(name, kind, m) for kind in ("predictions", "answer_scores")}}
            for m in cloze_set_models(config, name)]


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
    spec = spec_of(config, model)
    return [lang for lang in cloze_sets(config)[name].langs if spec.runs_on(lang)]


def cloze_set_scoring(config: dict, name: str, model: str) -> dict:
    """What a cloze set's scoring job of a model reads from the config, and nothing else (so that
    other settings do not rerun it): languages, top_k, num_beams (beam-search families only), precision."""
    cloze_set = cloze_sets(config)[name]
    study = config[cloze_set.study]
    return {"langs": cloze_set_langs(config, name, model), "top_k": study["top_k"],
            "num_beams": num_beams(config, model, cloze_set.study),
            "precision": model_precision(config, model, cloze_set.study)}


def answered_sets(config: dict) -> list[str]:
    """The cloze sets with human answers that at least one model fills (they get metrics and tests)."""
    return [name for name, s in cloze_sets(config).items() if s.answered and cloze_set_models(config, name)]


def tsne_sets(config: dict) -> list[str]:
    """The ready-made cloze tests whose predictions are mapped by t-SNE (MozArt's appendix B): those
    ``mozart.tsne.sets`` names, in use and filled by some model, when quadruples are configured
    (``mozart.tsne.sentences``)."""
    tsne = config["mozart"]["tsne"]
    if not tsne["sentences"]:
        return []
    tests = cloze_tests(config)
    return [name for name in tsne["sets"] if name in tests and cloze_set_models(config, name)]


def tsne_models(config: dict, name: str) -> list[str]:
    """The models whose predictions for a ready-made cloze test are mapped by t-SNE."""
    return cloze_set_models(config, name) if name in tsne_sets(config) else []


# ---- Cloze construction --------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    """A parallel corpus the cloze sentences are constructed from. ``joined``: made of bitexts
    (:mod:`plmfair.construction.bitext`) rather than one text file per language."""

    name: str
    pivot: str
    langs: tuple[str, ...]
    joined: bool
    tokenized: bool
    entry: dict

    def text(self, lang: str) -> dict | None:
        """The download of a language's text; None for a joined corpus (its text is the join's)."""
        return None if self.joined else self.entry["text"][lang]

    def bitexts(self) -> dict[str, tuple[dict, dict]]:
        """Per other language, the downloads of its bitext's pivot side and other side."""
        return {lang: (pair["pivot"], pair["text"]) for lang, pair in self.entry.get("bitexts", {}).items()}

    def answers(self) -> dict[str, dict]:
        """The downloads of the human answers to the constructed sentences, by language."""
        return dict(self.entry["answers"])


def corpus(config: dict, name: str) -> Corpus:
    entry = cloze_corpora(config)[name]
    return Corpus(name, entry["pivot"], tuple(corpus_langs(entry)), "bitexts" in entry, entry["tokenized"], entry)


def bitext_join(config: dict, corpus_name: str) -> dict:
    """What joining a corpus's bitexts reads: the pivot, each bitext's archive members (pivot side,
    other side) by language, and what to do with a repeated pivot sentence."""
    c = corpus(config, corpus_name)
    return {"pivot": c.pivot, "members": {lang: [pivot["member"], text["member"]] for lang, (pivot, text)
                                          in c.bitexts().items()}, "duplicates": c.entry["duplicates"]}


def text_reading(config: dict, corpus_name: str, lang: str) -> dict:
    """How a language's text is read: its archive member (none for a joined corpus) and whether its
    lines are tokenized already."""
    c = corpus(config, corpus_name)
    return {"member": (c.text(lang) or {}).get("member"), "tokenized": c.tokenized}


@dataclass(frozen=True)
class SpacyPipeline:
    """The spaCy pipeline of a language: ``built`` by the workflow from a lexicon entry (the demo's
    lookup pipelines, ``resources/spacy/<lang>``), else ``name``, a package or a folder."""

    lang: str
    built: bool
    name: str | None = None
    lexicon: dict | None = None

    @property
    def package(self) -> str | None:
        """The package to install, when the pipeline is one."""
        return None if self.built or is_folder_name(self.name) else self.name


def spacy_pipeline(config: dict, lang: str) -> SpacyPipeline:
    entry = config["cloze"]["spacy"][lang]
    if isinstance(entry, dict):
        return SpacyPipeline(lang, built=True, lexicon=entry["lexicon"])
    return SpacyPipeline(lang, built=False, name=entry)


def spacy_packages(config: dict) -> dict[str, str]:
    """The spaCy pipelines the enabled cloze corpora need as installed packages, by language."""
    langs = sorted({lang for corpus in cloze_corpora(config) for lang in cloze_langs(config, corpus)})
    pipelines = [spacy_pipeline(config, lang) for lang in langs]
    return {p.lang: p.package for p in pipelines if p.package}


def spacy_lexicon(config: dict, lang: str) -> dict:
    """The download of the word list a built spaCy pipeline is made from."""
    return spacy_pipeline(config, lang).lexicon


@dataclass(frozen=True)
class AlignmentRoute:
    """How one language of a corpus is aligned to the pivot: a Pharaoh file of the config
    (``pharaoh``), eflomal on the corpus lines alone (``eflomal``), or eflomal with extra parallel
    text in the same run (``eflomal_extra``). ``downloads``: what the route reads, by role;
    ``pipelines``: the spaCy pipelines that tokenize the extra text; ``settings``: every setting
    the route uses and no other (so that the others do not rerun it)."""

    kind: str
    pivot: str
    lang: str
    downloads: dict[str, dict]
    pipelines: tuple[SpacyPipeline, ...]
    settings: dict


def alignment_route(config: dict, corpus_name: str, lang: str) -> AlignmentRoute:
    c = corpus(config, corpus_name)
    entry, cloze = c.entry, config["cloze"]
    settings: dict = {"langs": [c.pivot, lang]}
    if lang in entry["alignments"]:
        pharaoh = entry["alignments"][lang]
        return AlignmentRoute("pharaoh", c.pivot, lang, {"pharaoh": pharaoh}, (),
                              {**settings, "pharaoh_member": pharaoh["member"]})
    settings.update(symmetrisation=cloze["symmetrisation"], eflomal_options=dict(cloze["eflomal"]))
    if lang not in entry["align_extra"]:
        return AlignmentRoute("eflomal", c.pivot, lang, {}, (), settings)
    extra = entry["align_extra"][lang]
    pipelines = () if c.tokenized else (spacy_pipeline(config, c.pivot), spacy_pipeline(config, lang))
    settings.update(extra_members=[extra["pivot"]["member"], extra["text"]["member"]],
                    extra_lines=entry["align_extra_lines"], tokenized=c.tokenized)
    return AlignmentRoute("eflomal_extra", c.pivot, lang, {"extra_pivot": extra["pivot"], "extra_text": extra["text"]},
                          pipelines, settings)


GOLD_FILES = ("sentences", "pivot_sentences", "links")


@dataclass(frozen=True)
class GoldSet:
    """Hand-made word alignments of a corpus's pivot and one other language. ``files``: its
    downloads by role (sentences, links, optionally pivot_sentences); ``settings``: how to read
    them (format, links_first, lowercase)."""

    name: str
    lang: str
    files: dict[str, dict]
    settings: dict

    def reading(self) -> dict:
        """The job's parameter for this set: its language, settings, and each file's download file
        name and archive member (the job finds the download among its inputs by that file name)."""
        return {"lang": self.lang, **self.settings,
                "files": {role: {"file": entry["file"], "member": entry["member"]} for role, entry in self.files.items()}}


def gold_sets(config: dict, corpus_name: str) -> dict[str, GoldSet]:
    """A corpus's gold alignment sets, by name."""
    return {name: GoldSet(name, gold["lang"], {key: gold[key] for key in GOLD_FILES if key in gold},
                          {key: value for key, value in gold.items() if key not in (*GOLD_FILES, "lang")})
            for name, gold in cloze_corpora(config)[corpus_name]["gold_alignments"].items()}


def gold_readings(config: dict, corpus_name: str) -> dict[str, dict]:
    """The alignment-quality job's parameter: how each gold set of the corpus is read, by name."""
    return {name: gold.reading() for name, gold in gold_sets(config, corpus_name).items()}


def gold_corpora(config: dict) -> list[str]:
    """The corpora with gold alignments (their alignment quality is measured)."""
    return [name for name, entry in cloze_corpora(config).items() if entry["gold_alignments"]]


def gold_langs(config: dict, corpus_name: str) -> list[str]:
    """The languages whose corpus text goes into the gold sets' eflomal runs: the pivot, then each
    gold set's other language."""
    c = corpus(config, corpus_name)
    return list(dict.fromkeys([c.pivot, *(g.lang for g in gold_sets(config, corpus_name).values())]))


# ---- Tables, figures and the report --------------------------------------------------------------


def output_subjects(config: dict, subjects: str) -> list[str]:
    """The subjects of a kind (:data:`plmfair.outputs.SUBJECTS`) the configuration has: the names
    of the data sets, or ``[""]`` for a study-wide output that is made, ``[]`` when it is not."""
    one = {
        "data": bool(cloze_tests(config)) or bool(crows_pairs_ingested(config)),
        "models": bool(model_runs(config)),
        "crows_pairs": bool(crows_pairs_jobs(config)),
        "crows_pairs_languages": bool(crows_pairs_language_jobs(config)),
    }
    if subjects in one:
        return [""] if one[subjects] else []
    return {"answered_sets": answered_sets, "corpora": lambda c: list(cloze_corpora(c)),
            "gold_corpora": gold_corpora, "tsne": tsne_sets}[subjects](config)


def report_category(subjects: str, subject: str = "") -> str:
    """The report category (the study) of a table or figure: MozArt, a constructed cloze set,
    CrowS-Pairs, or the data and models."""
    studies = owners(subjects)
    if not studies:
        return "Data and models"
    if studies[0].task == PAIRS_TASK:  # the minimal-pair study's outputs cover all its data sets
        return studies[0].title
    # a cloze set's outputs go under the set: MozArt's own test is named after its study
    ready_made = subject in STUDIES and not STUDIES[subject].constructs
    return STUDIES[subject].title if ready_made else f"Cloze set {subject}"


def figure_category(figure: str) -> str:
    """The report category of a figure made once per run (:data:`plmfair.outputs.FIGURES`)."""
    return report_category(FIGURES[figure])


def constructed_answered_sets(config: dict) -> list[str]:
    """The cloze sets with human answers that were constructed from a corpus (their answers are
    ingested from the corpus's answer files)."""
    sets = cloze_sets(config)
    return [name for name in answered_sets(config) if sets[name].constructed]


def cloze_set_category(config: dict, cloze_set: str) -> str:
    """The report category of a cloze set's figures."""
    return report_category("answered_sets", cloze_set)


@dataclass(frozen=True)
class Table:
    """One table to render: its registry entry made for one subject, with the paths of its inputs,
    the builder's keyword arguments (options and settings) and the caption filled in."""

    name: str
    subject: str
    builder: str
    inputs: dict[str, str]
    options: dict
    caption: str
    digits: int
    category: str

    def rendering(self) -> dict:
        """The table job's parameter: everything the rendering reads but its inputs."""
        return {"builder": self.builder, "options": self.options, "caption": self.caption, "digits": self.digits,
                "label": f"tab:{self.name}"}


def _config_value(config: dict, dotted: str):
    node = config
    for key in dotted.split("."):
        node = node[key]
    return node


def tables(config: dict) -> dict[str, Table]:
    """Every table of the configuration, by name (:data:`plmfair.outputs.TABLES` made for each of
    its subjects)."""
    out: dict[str, Table] = {}
    for spec in TABLES:
        settings = {key: _config_value(config, dotted) for key, dotted in spec.settings.items()}
        for subject in output_subjects(config, spec.subjects):
            name = spec.name.format(subject=subject)
            if name in out:
                subjects = sorted({s for s in (subject, out[name].subject) if s})
                raise ConfigError(f"config error: two tables would be written to results/tables/{name}; rename the "
                                  f"data set or corpus {' or '.join(map(repr, subjects))}")
            out[name] = Table(name, subject, spec.builder, {role: path.format(subject=subject) for role, path in spec.inputs.items()},
                              {**spec.options, **{key: settings[key] for key in spec.builder_settings}},
                              spec.caption.format(subject=subject, **settings),
                              spec.digits, report_category(spec.subjects, subject))
    return out


def figures(config: dict) -> list[str]:
    """The names of every figure of the configuration (:data:`plmfair.outputs.FIGURES`)."""
    return [name.format(subject=subject) for name, subjects in FIGURES.items()
            for subject in output_subjects(config, subjects)]


def caption_models(config: dict, table: str) -> list[str]:
    """The models whose config free text the report's caption of ``table`` tells: those that ran,
    for the models table; none for the others."""
    return list(model_runs(config)) if table == "models" else []


# ---- The run record ------------------------------------------------------------------------------


def run_record_inputs(config: dict) -> dict[str, list[str]]:
    """What ``results/run.json`` summarises, by role: the models table and one scoring output per model
    (how each ran), the CrowS-Pairs summary, each cloze set's metrics, disparity and group tests, and
    the data files read. Every path names its model or set (the file's stem or folder)."""
    sets = output_subjects(config, "answered_sets")
    return {
        "models": ["results/models.parquet"] if output_subjects(config, "models") else [],
        "model_runs": list(model_run_files(config).values()),
        "crows_pairs": ["results/crows_pairs/summary.parquet"] if output_subjects(config, "crows_pairs") else [],
        "cloze_metrics": [f"results/cloze/{s}/metrics.parquet" for s in sets],
        "cloze_disparity": [f"results/cloze/{s}/group_disparity.parquet" for s in sets],
        "cloze_tests": [f"results/cloze/{s}/group_tests.parquet" for s in sets],
        "data": [f"resources/downloads/{entry['file']}" for entry in active_downloads(config).values()],
    }


def recorded_config(config: dict) -> dict:
    """The configuration the run record echoes: all of it but the mirror, which says where files were
    looked up, not what they are (moving it reruns nothing, the record included)."""
    return {key: value for key, value in config.items() if key != "mirror"}


def pinned_checksums(config: dict) -> dict[str, str | None]:
    """The SHA-256 the configuration pins for each data file the run reads, by file name (None: unverified)."""
    return {entry["file"]: entry.get("sha256") for entry in active_downloads(config).values()}
