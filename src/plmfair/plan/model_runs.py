"""The models that run: which jobs score each, and the scoring output whose metadata describes it
(the models table and the run record read it)."""

from __future__ import annotations

from plmfair.cloze.plan import cloze_scores_file, cloze_set_models, cloze_sets
from plmfair.crows_pairs.plan import crows_pairs_jobs, crows_pairs_scores_file
from plmfair.scoring.model_plan import model_specs


def models_in_use(config: dict) -> list[str]:
    """The models some job of the configuration scores, in config order."""
    used = {m for _, m in crows_pairs_jobs(config)}
    used |= {m for name in cloze_sets(config) for m in cloze_set_models(config, name)}
    return [name for name in config.get("models", {}) if name in used]


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
    paths = {
        "crows_pairs": crows_pairs_scores_file,
        "cloze": lambda cloze_set, m: cloze_scores_file(cloze_set, "predictions", m),
    }
    return {m: paths[study](name, m) for m, (study, name) in model_runs(config).items()}
