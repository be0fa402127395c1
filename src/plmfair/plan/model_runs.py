"""The models that run: which jobs score each, and the scoring output whose metadata describes it
(the models table and the run record read it). Each study says what it scores
(:attr:`plmfair.studies.StudyScoring.scored`)."""

from __future__ import annotations

from plmfair.scoring.model_settings import model_specs
from plmfair.studies import STUDIES


def model_run_files(config: dict) -> dict[str, str]:
    """The scoring output whose run metadata describes each model that runs (what was loaded and how it
    ran): its first in the studies' order, by model, in that order."""
    runs: dict[str, str] = {}
    for study in STUDIES.values():
        for model, path in study.scoring.scored(config) if study.scoring else []:
            runs.setdefault(model, path)
    return runs


def models_in_use(config: dict) -> list[str]:
    """The models some job of the configuration scores, in config order."""
    used = model_run_files(config)
    return [name for name in config.get("models", {}) if name in used]


def model_languages(config: dict) -> dict[str, list[str]]:
    """The languages the config lets each model that runs be scored on (empty: all), for the models table."""
    specs = model_specs(config)
    return {name: list(specs[name].languages) for name in model_run_files(config)}
