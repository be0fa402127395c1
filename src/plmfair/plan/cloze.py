"""Cloze-set jobs: which models fill each cloze set, on which languages and how, the sets with
answers, and the t-SNE maps."""

from __future__ import annotations

from plmfair.plan.data import cloze_corpora, cloze_sets, cloze_tests
from plmfair.plan.models import model_precision, model_specs, num_beams, spec_of, study_models


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


def constructed_answered_sets(config: dict) -> list[str]:
    """The cloze sets with human answers that were constructed from a corpus (their answers are
    ingested from the corpus's answer files)."""
    sets = cloze_sets(config)
    return [name for name in answered_sets(config) if sets[name].constructed]


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
