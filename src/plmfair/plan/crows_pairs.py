"""CrowS-Pairs jobs: which model scores which data set, with which protocol, and the files they
write."""

from __future__ import annotations

from collections import Counter

from plmfair.plan.data import crows_pairs_sets, enabled
from plmfair.plan.models import model_specs, spec_of, study_models
from plmfair.scoring import FAMILIES


def crows_pairs_jobs(config: dict) -> list[tuple[str, str]]:
    """(dataset, model) pairs to score: each model on the data sets whose language it covers."""
    if not enabled(config, "crows_pairs"):
        return []
    specs, sets, models = model_specs(config), crows_pairs_sets(config), study_models(config, "crows_pairs")
    return [(ds, m) for ds in config["crows_pairs"]["datasets"] for m in models if specs[m].runs_on(sets[ds]["lang"])]


def crows_pairs_langs(config: dict) -> dict[str, str]:
    """The language of every scored CrowS-Pairs data set (only those: declaring another reruns nothing)."""
    sets = crows_pairs_sets(config)
    return {ds: sets[ds]["lang"] for ds in dict.fromkeys(ds for ds, _ in crows_pairs_jobs(config))}


def crows_pairs_scores_file(dataset: str, model: str) -> str:
    """The per-pair scores of a model on a CrowS-Pairs data set."""
    return f"results/crows_pairs/{dataset}/{model}.parquet"


def crows_pairs_runs(jobs: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Each job as one record a script reads (``dataset``, ``model``, ``scores``: its per-pair file), so
    that a job and its file travel together rather than as two lists zipped by position."""
    return [{"dataset": ds, "model": m, "scores": crows_pairs_scores_file(ds, m)} for ds, m in jobs]


def crows_pairs_language_jobs(config: dict) -> list[tuple[str, str]]:
    """The CrowS-Pairs jobs of the models run on two or more data sets: those compared across languages."""
    jobs = crows_pairs_jobs(config)
    runs = Counter(m for _, m in jobs)
    return [(ds, m) for ds, m in jobs if runs[m] > 1]


def crows_pairs_outputs(config: dict) -> list[str]:
    """``[""]`` when some CrowS-Pairs data set is scored (the study's tables and figures are made
    once for all of them), else ``[]``."""
    return [""] if crows_pairs_jobs(config) else []


def crows_pairs_language_outputs(config: dict) -> list[str]:
    """``[""]`` when some model is compared across CrowS-Pairs data sets, else ``[]``."""
    return [""] if crows_pairs_language_jobs(config) else []


def crows_pairs_protocol(config: dict, model: str) -> str:
    """The protocol a model is scored with: the configured masking rule for masked LMs, the
    whole-sentence log-likelihood for causal LMs."""
    return FAMILIES[spec_of(config, model).family].protocol or config["crows_pairs"]["protocol"]
