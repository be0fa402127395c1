# Input functions and wildcard constraints shared by the stage files: thin path wrappers
# over plmfair.plan, which decides which jobs exist (torch-free, tested directly).
import re

from plmfair import plan
from plmfair.models import model_files

MODEL_SPECS = plan.model_specs(config)
DOWNLOADS = {entry["file"]: entry for entry in plan.active_downloads(config).values()}
CROWS_SETS = plan.crows_pairs_sets(config)
CLOZE = config["cloze"]
CLOZE_CORPORA = plan.cloze_corpora(config)
CLOZE_SETS = plan.cloze_sets(config)
SPACY = CLOZE["spacy"]
BUILT_MODELS = plan.built_models(config)
HUB_MODELS = plan.hub_models(config)


def _alternatives(names):
    return "|".join(re.escape(n) for n in sorted(names)) or "(?!)"


wildcard_constraints:
    file=_alternatives(DOWNLOADS),
    dataset=_alternatives(CROWS_SETS),
    built_model=_alternatives(BUILT_MODELS),
    hub_model=_alternatives(HUB_MODELS),
    model=_alternatives(MODEL_SPECS),
    corpus=_alternatives(CLOZE_CORPORA),
    lang="[a-z]{2,3}",
    cloze_set=_alternatives(CLOZE_SETS),


def _download(entry):
    return f"resources/downloads/{entry['file']}"


def get_download_url(wildcards):
    return DOWNLOADS[wildcards.file].get("url")


def get_download_sha256(wildcards):
    return DOWNLOADS[wildcards.file].get("sha256")


def get_mozart_archive():
    return _download(config["datasets"]["mozart"]) if "mozart" in config["datasets"] else []


def get_crows_pairs_raw(wildcards):
    return _download(CROWS_SETS[wildcards.dataset])


def get_crows_pairs_reference(wildcards):
    """The ingested data set whose directions a file without its own borrows (direction_from)."""
    source = CROWS_SETS[wildcards.dataset].get("direction_from")
    return [f"results/data/crows_pairs/{source}.parquet"] if source else []


def get_crows_pairs_format(wildcards):
    """How to read the file: every key of its entry but the download fields."""
    entry = CROWS_SETS[wildcards.dataset]
    return {key: value for key, value in entry.items() if key not in ("file", "url", "sha256")}


def get_ingested_crows_pairs():
    return {name: f"results/data/crows_pairs/{name}.parquet" for name in plan.crows_pairs_ingested(config)}


def get_mozart_annotations():
    return ["results/data/mozart/annotations.parquet"] if plan.mozart_ingested(config) else []


def get_tiny_model_corpus():
    """The demo text a tiny model's tokenizer is trained on: every ingested sentence."""
    return get_mozart_annotations() + list(get_ingested_crows_pairs().values())


def get_ingest_outputs():
    return get_tiny_model_corpus() + ["results/tables/data_summary.csv"]


def get_tiny_model_build(wildcards):
    return BUILT_MODELS[wildcards.built_model]["build"]


def get_model_files(wildcards):
    """Every model is an input of its jobs through the manifest of its folder's files, so replacing
    its weights (or fetching another commit) reruns exactly its jobs."""
    return f"resources/manifests/{wildcards.model}.json"


def get_local_model_folder(wildcards):
    return plan.model_folder(config, wildcards.model)


def get_local_model_files(wildcards):
    """A model built or fetched by the workflow: that rule's folder (workflow-managed: other weights
    come from a new revision, new build settings or a path). A model given by path: every file in its
    folder, so that replacing one reruns the model's jobs."""
    folder = plan.model_folder(config, wildcards.model)
    if wildcards.model in BUILT_MODELS or wildcards.model in HUB_MODELS:
        return [folder]
    return [str(p) for p in model_files(folder)]


def get_hub_model(wildcards):
    entry = HUB_MODELS[wildcards.hub_model]
    return {"hf_id": entry["hf_id"], "revision": entry.get("revision"),
            "allow_pickle": entry.get("allow_pickle", False)}


def get_model_entry(wildcards):
    """The model's config entry: a change of id, path, revision or casing reruns its jobs."""
    return {"name": wildcards.model, **config["models"][wildcards.model]}


def get_model_precision(study):
    """The precision of a model's jobs of a study: the model's own, else the study's."""

    def precision(wildcards):
        return plan.model_precision(config, study, wildcards.model)

    return precision


def get_model_gpus(wildcards):
    return plan.model_gpus(config, wildcards.model)


def get_crows_pairs_protocol(wildcards):
    return plan.crows_pairs_protocol(config, wildcards.model)


def get_crows_pairs_scores():
    return [f"results/crows_pairs/{ds}/{m}.parquet" for ds, m in plan.crows_pairs_jobs(config)]


def crows_pairs_scored_datasets():
    return list(dict.fromkeys(ds for ds, _ in plan.crows_pairs_jobs(config)))


def get_crows_pairs_breakdown_pairs():
    """The ingested pairs of every scored data set, in the order of crows_pairs_scored_datasets()."""
    return [f"results/data/crows_pairs/{ds}.parquet" for ds in crows_pairs_scored_datasets()]


def get_crows_pairs_outputs():
    if not plan.crows_pairs_jobs(config):
        return []
    return [
        "results/crows_pairs/summary.parquet",
        "results/tables/crows_pairs.csv",
        "results/figures/crows_pairs.png",
        "results/crows_pairs/breakdowns.parquet",
        "results/figures/crows_pairs_breakdowns.png",
    ]


def get_crows_pairs_language_scores():
    return [f"results/crows_pairs/{ds}/{m}.parquet" for ds, m in plan.crows_pairs_language_jobs(config)]


def get_crows_pairs_language_outputs():
    """Data sets compared on shared pairs, when a model ran on two or more."""
    if not plan.crows_pairs_language_jobs(config):
        return []
    return ["results/tables/crows_pairs_language_winloss.csv", "results/figures/crows_pairs_language_effects.png"]


def get_model_run_files():
    """One scoring output per model that runs (its run metadata holds the model's facts), by model."""
    files = {}
    for ds, m in plan.crows_pairs_jobs(config):
        files.setdefault(m, f"results/crows_pairs/{ds}/{m}.parquet")
    for name in CLOZE_SETS:
        for m in plan.cloze_set_models(config, name):
            files.setdefault(m, f"results/cloze/{name}/predictions/{m}.parquet")
    return files


def get_models_table_outputs():
    return ["results/models.parquet", "results/tables/models.csv"] if get_model_run_files() else []


def get_final_outputs():
    return (get_ingest_outputs() + get_crows_pairs_outputs() + get_crows_pairs_language_outputs()
            + get_cloze_outputs() + get_models_table_outputs())


def get_cloze_pivot(wildcards):
    return {"pivot": CLOZE_CORPORA[wildcards.corpus]["pivot"], "langs": plan.cloze_langs(config, wildcards.corpus)}


def get_cloze_text(wildcards):
    """A language's text file, or the corpus joined from its bitexts."""
    entry = CLOZE_CORPORA[wildcards.corpus]
    if "bitexts" in entry:
        return f"results/cloze/{wildcards.corpus}/joined.parquet"
    return _download(entry["text"][wildcards.lang])


def get_cloze_text_member(wildcards):
    entry = CLOZE_CORPORA[wildcards.corpus]
    return None if "bitexts" in entry else entry["text"][wildcards.lang]["member"]


def get_cloze_bitext_files(wildcards):
    bitexts = CLOZE_CORPORA[wildcards.corpus]["bitexts"]
    return {f"{lang}_{side}": _download(pair[side]) for lang, pair in bitexts.items() for side in ("pivot", "text")}


def get_cloze_bitext_members(wildcards):
    """Per language, the archive members of its bitext's pivot and other side."""
    bitexts = CLOZE_CORPORA[wildcards.corpus]["bitexts"]
    return {lang: [pair["pivot"]["member"], pair["text"]["member"]] for lang, pair in bitexts.items()}


def get_cloze_duplicates(wildcards):
    return CLOZE_CORPORA[wildcards.corpus]["duplicates"]


def get_cloze_join_counts(wildcards):
    if "bitexts" in CLOZE_CORPORA[wildcards.corpus]:
        return f"results/cloze/{wildcards.corpus}/join_counts.parquet"
    return []


def get_cloze_pipelines(wildcards):
    return {lang: _spacy_pipeline(lang) for lang in plan.cloze_langs(config, wildcards.corpus)}


def get_cloze_pipeline_files(wildcards):
    return _spacy_files(plan.cloze_langs(config, wildcards.corpus))


def _gold_files(gold):
    return {key: gold[key] for key in ("sentences", "pivot_sentences", "links") if key in gold}


def get_gold_alignment_inputs(wildcards):
    """Every gold set's files, and the corpus tokens of its languages (the extra text of the eflomal run)."""
    corpus = wildcards.corpus
    golds = CLOZE_CORPORA[corpus]["gold_alignments"]
    pivot = CLOZE_CORPORA[corpus]["pivot"]
    inputs = {f"{name}__{key}": _download(entry) for name, gold in golds.items() for key, entry in _gold_files(gold).items()}
    for lang in dict.fromkeys([pivot] + [gold["lang"] for gold in golds.values()]):
        inputs[f"tokens__{lang}"] = f"results/cloze/{corpus}/tokens/{lang}.parquet"
    return inputs


def get_gold_alignment_params(wildcards):
    """Each gold set's settings and archive members (its files come as inputs named <set>__<file>)."""
    golds = CLOZE_CORPORA[wildcards.corpus]["gold_alignments"]
    return {
        name: {**{k: v for k, v in gold.items() if k not in ("sentences", "pivot_sentences", "links")},
               "members": {key: entry["member"] for key, entry in _gold_files(gold).items()}}
        for name, gold in golds.items()
    }


def get_alignment_quality_files():
    return [f"results/cloze/{corpus}/alignment_quality.parquet" for corpus, entry in CLOZE_CORPORA.items()
            if entry["gold_alignments"]]


def get_cloze_tokenized(wildcards):
    return CLOZE_CORPORA[wildcards.corpus]["tokenized"]


def _spacy_pipeline(lang):
    """A built lookup pipeline lives at resources/spacy/{lang}; otherwise the name or path from config."""
    return f"resources/spacy/{lang}" if isinstance(SPACY[lang], dict) else SPACY[lang]


def _spacy_files(langs):
    return [f"resources/spacy/{lang}" for lang in langs if isinstance(SPACY[lang], dict)]


def get_spacy_pipeline(wildcards):
    return _spacy_pipeline(wildcards.lang)


def get_spacy_pipeline_files(wildcards):
    return _spacy_files([wildcards.lang])


def get_spacy_lexicon(wildcards):
    return _download(SPACY[wildcards.lang]["lexicon"])


def get_cloze_align_inputs(wildcards):
    """Both languages' tokens, and the Pharaoh file or the extra text (with the pipelines that tokenize it)."""
    corpus, lang = wildcards.corpus, wildcards.lang
    entry = CLOZE_CORPORA[corpus]
    pivot = entry["pivot"]
    inputs = {
        "pivot_tokens": f"results/cloze/{corpus}/tokens/{pivot}.parquet",
        "tokens": f"results/cloze/{corpus}/tokens/{lang}.parquet",
    }
    if lang in entry["alignments"]:
        inputs["pharaoh"] = _download(entry["alignments"][lang])
    elif lang in entry["align_extra"]:
        inputs["extra_pivot"] = _download(entry["align_extra"][lang]["pivot"])
        inputs["extra_text"] = _download(entry["align_extra"][lang]["text"])
        inputs["pipelines"] = [] if entry["tokenized"] else _spacy_files([pivot, lang])
    return inputs


def get_cloze_align_params(wildcards):
    """Only what the chosen alignment route uses, so that other settings do not rerun it."""
    corpus, lang = wildcards.corpus, wildcards.lang
    entry = CLOZE_CORPORA[corpus]
    pivot = entry["pivot"]
    settings = {"langs": [pivot, lang]}
    if lang in entry["alignments"]:
        settings["pharaoh_member"] = entry["alignments"][lang]["member"]
        return settings
    settings.update(symmetrisation=CLOZE["symmetrisation"], eflomal_options=dict(CLOZE["eflomal"]))
    if lang in entry["align_extra"]:
        extra = entry["align_extra"][lang]
        settings.update(
            extra_members=[extra["pivot"]["member"], extra["text"]["member"]],
            extra_lines=entry["align_extra_lines"],
            tokenized=entry["tokenized"],
            pipelines=[_spacy_pipeline(pivot), _spacy_pipeline(lang)],
        )
    return settings


def get_cloze_token_files(wildcards):
    return [f"results/cloze/{wildcards.corpus}/tokens/{lang}.parquet" for lang in plan.cloze_langs(config, wildcards.corpus)]


def get_cloze_alignment_files(wildcards):
    return [
        f"results/cloze/{wildcards.corpus}/alignments/{lang}.parquet"
        for lang in plan.cloze_langs(config, wildcards.corpus)[1:]
    ]


def get_cloze_count_files():
    return [f"results/cloze/{corpus}/construction.parquet" for corpus in CLOZE_CORPORA]


def get_cloze_answer_files(wildcards):
    return [_download(entry) for entry in CLOZE_CORPORA[wildcards.corpus]["answers"].values()]


def get_cloze_answer_params(wildcards):
    return {lang: _download(entry) for lang, entry in CLOZE_CORPORA[wildcards.corpus]["answers"].items()}


# ---- cloze sets (MozArt's and the constructed ones): one chain


def get_cloze_set_sentences(wildcards):
    """A set's sentences: MozArt's annotations, or the sentences constructed from a corpus."""
    if CLOZE_SETS[wildcards.cloze_set].constructed:
        return f"results/cloze/{wildcards.cloze_set}/sentences.parquet"
    return "results/data/mozart/annotations.parquet"


def get_cloze_set_annotations(wildcards):
    """The human answers to a set with answers."""
    if CLOZE_SETS[wildcards.cloze_set].constructed:
        return f"results/data/cloze/{wildcards.cloze_set}/annotations.parquet"
    return "results/data/mozart/annotations.parquet"


def get_cloze_set_answers(wildcards):
    """The human answers to a set, as a list: empty for a constructed set without answers yet."""
    return [get_cloze_set_annotations(wildcards)] if CLOZE_SETS[wildcards.cloze_set].answered else []


def get_cloze_set_scoring(wildcards):
    return plan.cloze_set_scoring(config, wildcards.cloze_set, wildcards.model)


def get_cloze_set_models(wildcards):
    return plan.cloze_set_models(config, wildcards.cloze_set)


def get_cloze_set_scores(kind):
    """Every model's ``predictions`` or ``answer_scores`` file of a set, in the order of its models."""

    def files(wildcards):
        return [f"results/cloze/{wildcards.cloze_set}/{kind}/{m}.parquet"
                for m in plan.cloze_set_models(config, wildcards.cloze_set)]

    return files


def get_tsne_num_beams(wildcards):
    return plan.num_beams(config, "mozart", wildcards.model)


def get_mozart_tsne_vectors():
    """One t-SNE vector file per MozArt model, when quadruples are configured for the maps."""
    if "mozart" not in CLOZE_SETS or not config["mozart"]["tsne"]["sentences"]:
        return []
    return [f"results/cloze/mozart/tsne/{m}.parquet" for m in plan.cloze_set_models(config, "mozart")]


def _answered_set_outputs(name):
    """Metrics, MozArt's tables and Figure 1, the group tests and the breakdowns of a set with answers."""
    return [
        f"results/cloze/{name}/metrics.parquet",
        f"results/tables/{name}_table1.csv",
        f"results/tables/{name}_disparity.csv",
        f"results/figures/{name}_mrr.png",
        f"results/tables/{name}_group_winloss.csv",
        f"results/figures/{name}_group_effects.png",
        f"results/cloze/{name}/breakdowns.parquet",
        f"results/figures/{name}_breakdowns.png",
    ]


def get_cloze_outputs():
    """Per corpus its construction (sentences, sheets, answers); per cloze set every model's scores,
    and with answers what follows them; the t-SNE maps of MozArt."""
    out = []
    if CLOZE_CORPORA:
        out.append("results/tables/cloze_construction.csv")
    if get_alignment_quality_files():
        out.append("results/tables/alignment_quality.csv")
    for corpus, entry in CLOZE_CORPORA.items():
        out.append(f"results/cloze/{corpus}/sentences.parquet")
        out.append(f"results/cloze/{corpus}/sheets")
        if entry["answers"]:
            out.append(f"results/data/cloze/{corpus}/annotations.parquet")
    for name in CLOZE_SETS:
        out += [f"results/cloze/{name}/predictions/{m}.parquet" for m in plan.cloze_set_models(config, name)]
    for name in plan.answered_sets(config):
        out += _answered_set_outputs(name)
    if get_mozart_tsne_vectors():
        out += ["results/cloze/mozart/tsne.parquet", "results/figures/mozart_tsne.png"]
    return out
