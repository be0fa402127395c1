# Constructed cloze sets (study cloze): the corpora's wildcard and what its rules read (cloze.smk).
from plmfair.cloze import plan as cloze_plan
from plmfair.cloze.construction import plan as construction_plan


wildcard_constraints:
    corpus=_alternatives(cloze_plan.cloze_corpora(config)),


def corpus_token_files(corpus, langs):
    """Each language's tokens file of a corpus, by language: what a script reads by name."""
    return {lang: cloze_plan.set_file(corpus, f"tokens/{lang}") for lang in langs}


def corpus_tokens(corpus, langs):
    return list(corpus_token_files(corpus, langs).values())


def corpus_alignment_files(corpus, langs):
    """Each language's alignments to the pivot, by language."""
    return {lang: cloze_plan.set_file(corpus, f"alignments/{lang}") for lang in langs}


def spacy_load(pipeline):
    """What spacy.load is given: the folder the workflow built the pipeline in, or its name."""
    return f"results/spacy/{pipeline.lang}" if pipeline.built else pipeline.name


def spacy_built(pipelines):
    return [f"results/spacy/{p.lang}" for p in pipelines if p.built]


def get_cloze_bitext_files(w):
    bitexts = construction_plan.corpus(config, w.corpus).bitexts().items()
    return {f"{lang}_{side}": download(e) for lang, pair in bitexts for side, e in zip(("pivot", "text"), pair)}


def get_cloze_tokenize_inputs(w):
    """A language's text file, or the corpus joined from its bitexts; the pipeline the workflow built."""
    entry = construction_plan.corpus(config, w.corpus).text(w.lang)
    return {
        "text": cloze_plan.set_file(w.corpus, "joined") if entry is None else download(entry),
        "pipeline": spacy_built([construction_plan.spacy_pipeline(config, w.lang)]),
    }


def get_spacy_pipeline(w):
    return spacy_load(construction_plan.spacy_pipeline(config, w.lang))


def get_cloze_align_inputs(w):
    """Both languages' tokens, and what the alignment route reads (a Pharaoh file, or extra text with
    the pipelines that tokenize it)."""
    route = construction_plan.alignment_route(config, w.corpus, w.lang)
    pivot_tokens, tokens = corpus_tokens(w.corpus, [route.pivot, route.lang])
    return {
        "pivot_tokens": pivot_tokens,
        "tokens": tokens,
        "pipelines": spacy_built(route.pipelines),
        **{role: download(entry) for role, entry in route.downloads.items()},
    }


def get_cloze_align_settings(w):
    route = construction_plan.alignment_route(config, w.corpus, w.lang)
    return {**route.settings, "pipelines": [spacy_load(p) for p in route.pipelines]}


def get_cloze_select_inputs(w):
    c = construction_plan.corpus(config, w.corpus)
    return {
        "tokens": corpus_tokens(w.corpus, c.langs),
        "alignments": list(corpus_alignment_files(w.corpus, c.langs[1:]).values()),
        "join_counts": cloze_plan.set_file(w.corpus, "join_counts") if c.joined else [],
        "pipelines": spacy_built(construction_plan.spacy_pipeline(config, lang) for lang in c.langs),
    }


def get_cloze_select_settings(w):
    """The corpus's languages (pivot first), whether its lines are tokenized, and each language's pipeline."""
    c = construction_plan.corpus(config, w.corpus)
    return {
        "langs": list(c.langs),
        "tokenized": c.tokenized,
        "token_files": corpus_token_files(w.corpus, c.langs),
        "alignment_files": corpus_alignment_files(w.corpus, c.langs[1:]),
        "pipelines": {lang: spacy_load(construction_plan.spacy_pipeline(config, lang)) for lang in c.langs},
    }


def get_gold_token_files(w):
    """The corpus text of the gold sets' languages, by language."""
    return corpus_token_files(w.corpus, construction_plan.gold_langs(config, w.corpus))


def get_answer_downloads(w):
    """A corpus's human answer files, by language."""
    return {lang: download(entry) for lang, entry in construction_plan.corpus(config, w.corpus).answers().items()}


def get_answer_files(w):
    """The same files, as the rule's input."""
    return list(get_answer_downloads(w).values())


def get_gold_alignment_inputs(w):
    """The gold sets' downloads, and the corpus text of their languages (aligned together with them)."""
    golds = construction_plan.gold_sets(config, w.corpus).values()
    return {
        "downloads": list(dict.fromkeys(download(entry) for gold in golds for entry in gold.files.values())),
        "tokens": corpus_tokens(w.corpus, construction_plan.gold_langs(config, w.corpus)),
    }
