"""CrowS-Pairs jobs: which model scores which data set, with which protocol, and the files they
write."""

from __future__ import annotations

from collections import Counter

from plmfair.io.download import DOWNLOAD_KEYS
from plmfair.scoring import FAMILIES
from plmfair.scoring.model_settings import model_precision, model_specs, spec_of, study_models
from plmfair.scoring.protocols import family_protocols
from plmfair.studies import enabled, robustness_on

STUDY = "crows_pairs"  # the study's name in the configuration (its precision) and the scoring cache

# The study's files, each path written here once (its rules, tables and the run's file list use these).
DATA = "results/data/crows_pairs/{dataset}.parquet"
PAIR_SCORES = "results/crows_pairs/{dataset}/{model}.parquet"
SUMMARY = "results/crows_pairs/summary.parquet"
MCNEMAR = "results/crows_pairs/mcnemar.parquet"
BREAKDOWNS = "results/crows_pairs/breakdowns.parquet"
LANGUAGE_WINLOSS = "results/crows_pairs/language_winloss.parquet"
LANGUAGE_EFFECTS = "results/crows_pairs/language_effects.parquet"
PASS_SCORES = "results/crows_pairs/{dataset}/passes/{model}/{protocol}-{precision}.parquet"
SPECIFICATIONS = "results/crows_pairs/specifications.parquet"
ROBUSTNESS = "results/crows_pairs/robustness.parquet"
RANKING = "results/crows_pairs/ranking_agreement.parquet"


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
    return PAIR_SCORES.format(dataset=dataset, model=model)


def scored(config: dict) -> list[tuple[str, str]]:
    """Each model the study scores with its per-pair scores of each data set
    (:attr:`plmfair.studies.StudyScoring.scored`)."""
    return [(m, crows_pairs_scores_file(ds, m)) for ds, m in crows_pairs_jobs(config)]


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


def recorded_files(config: dict) -> list[str]:
    """The files the study's part of the run record summarises (:mod:`plmfair.crows_pairs.record_part`): the
    summary, when a data set is scored, and the verdicts' robustness, with a robustness analysis."""
    return ([SUMMARY] if crows_pairs_outputs(config) else []) + ([ROBUSTNESS] if robustness_enabled(config) else [])


def crows_pairs_language_outputs(config: dict) -> list[str]:
    """``[""]`` when some model is compared across CrowS-Pairs data sets, else ``[]``."""
    return [""] if crows_pairs_language_jobs(config) else []


def crows_pairs_model_pair_outputs(config: dict) -> list[str]:
    """``[""]`` when two models are scored on some CrowS-Pairs data set (their pair-by-pair comparison
    is made), else ``[]``: a run of one model has no comparison table to show."""
    per_set = Counter(ds for ds, _ in crows_pairs_jobs(config))
    return [""] if any(n > 1 for n in per_set.values()) else []


def crows_pairs_protocol(config: dict, model: str) -> str:
    """The protocol a model is scored with: the configured masking rule for masked LMs, the
    whole-sentence log-likelihood for causal LMs."""
    return FAMILIES[spec_of(config, model).family].protocol or config["crows_pairs"]["protocol"]


def robustness_enabled(config: dict) -> bool:
    """The run computes each verdict again under every choice the study varies (``robustness.enabled``)."""
    return robustness_on(config) and bool(crows_pairs_jobs(config))


def robustness_protocols(config: dict, model: str) -> list[str]:
    """The protocols a model is scored with besides its own in the robustness analysis: those of
    ``crows_pairs.robustness.protocols`` (all when null) that its family allows; none for a family with one
    protocol (causal LMs)."""
    family = spec_of(config, model).family
    if not robustness_enabled(config) or FAMILIES[family].protocol:
        return []
    allowed = family_protocols(family)
    wanted = config["crows_pairs"]["robustness"]["protocols"]
    own = crows_pairs_protocol(config, model)
    return [p for p in (allowed if wanted is None else wanted) if p in allowed and p != own]


def robustness_precisions(config: dict, model: str) -> list[str]:
    """The precisions a model is scored in besides its own in the robustness analysis: fp32 for a model
    scored in reduced precision (``crows_pairs.robustness.full_precision``), else none."""
    own = model_precision(config, model, STUDY)
    wanted = config["crows_pairs"]["robustness"]["full_precision"]
    return ["fp32"] if robustness_enabled(config) and wanted and own != "fp32" else []


def model_passes(config: dict, model: str) -> list[tuple[str, str]]:
    """(protocol, precision) of every scoring pass of a model on each of its data sets: its own first, then
    every other crossing of its protocols and precisions (the robustness analysis's extra passes)."""
    protocols = [crows_pairs_protocol(config, model), *robustness_protocols(config, model)]
    precisions = [model_precision(config, model, STUDY), *robustness_precisions(config, model)]
    return [(protocol, precision) for precision in precisions for protocol in protocols]


def pass_jobs(config: dict) -> list[tuple[str, str, str, str]]:
    """(dataset, model, protocol, precision): every extra scoring pass of the robustness analysis."""
    return [(ds, m, *p) for ds, m in crows_pairs_jobs(config) for p in model_passes(config, m)[1:]]


def pass_groups(config: dict) -> dict[tuple[tuple[str, str], ...], list[str]]:
    """The models that have extra passes, by their passes ((protocol, precision), in order): one job of a
    model on a data set makes all of them (a rule per group of models with the same passes)."""
    groups: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for model in dict.fromkeys(m for _, m in crows_pairs_jobs(config)):
        passes = tuple(model_passes(config, model)[1:])
        if passes:
            groups.setdefault(passes, []).append(model)
    return groups


def robustness_passes(config: dict) -> list[str]:
    """The robustness analysis's extra scoring passes, one line each (:attr:`plmfair.studies.StudyScoring.passes`)."""
    return [f"{m} on {ds} under {p} in {q}" for ds, m, p, q in pass_jobs(config)]


def pass_scores_file(dataset: str, model: str, protocol: str, precision: str) -> str:
    """The per-pair scores of an extra pass: a model on a data set under a protocol and precision other
    than its own pair."""
    return PASS_SCORES.format(dataset=dataset, model=model, protocol=protocol, precision=precision)


def robustness_runs(config: dict) -> list[dict]:
    """Each (dataset, model) as one record the robustness job reads: its own ``protocol`` and ``precision``,
    and its ``passes`` (protocol, precision and per-pair ``scores`` file; its own first)."""
    runs = []
    for ds, m in crows_pairs_jobs(config):
        own, *others = model_passes(config, m)
        passes = [(*own, crows_pairs_scores_file(ds, m)), *[(*p, pass_scores_file(ds, m, *p)) for p in others]]
        runs.append(
            {
                "dataset": ds,
                "model": m,
                "protocol": own[0],
                "precision": own[1],
                "passes": [{"protocol": p, "precision": q, "scores": path} for p, q, path in passes],
            }
        )
    return runs


def data_versions(config: dict) -> dict[str, list[str]]:
    """Each scored data set's other versions in the run (``crows_pairs.robustness.versions``: groups of
    data sets that are versions of one set, such as English original and revised)."""
    scored = list(crows_pairs_langs(config))
    out: dict[str, list[str]] = {}
    for group in config["crows_pairs"]["robustness"]["versions"]:
        present = [ds for ds in group if ds in scored]
        for ds in present if len(present) > 1 else []:
            others = out.setdefault(ds, [])
            others += [v for v in present if v != ds and v not in others]
    return out


def robustness_downloads(config: dict) -> list[str]:
    """The study's robustness settings that are downloads (:attr:`plmfair.studies.StudyData.downloads`): the exclusion
    file."""
    return (
        ["exclusions"] if robustness_enabled(config) and config["crows_pairs"]["robustness"].get("exclusions") else []
    )


def robustness_outputs(config: dict) -> list[str]:
    """``[""]`` when the run has a robustness analysis of CrowS-Pairs, else ``[]``."""
    return [""] if robustness_enabled(config) else []


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


def crows_pairs_reading(config: dict, dataset: str) -> dict:
    """How a CrowS-Pairs file is read: every key of its entry but the download's own."""
    return {key: value for key, value in crows_pairs_sets(config)[dataset].items() if key not in DOWNLOAD_KEYS}


def crows_pairs_data_file(dataset: str) -> str:
    """An ingested CrowS-Pairs data set."""
    return DATA.format(dataset=dataset)


def ingested(config: dict) -> dict[str, str]:
    """The data sets the study ingests, by name."""
    return {dataset: crows_pairs_data_file(dataset) for dataset in crows_pairs_ingested(config)}


def minimal_pair_languages(config: dict, study: str) -> list[str]:
    """The languages of a minimal-pair study's data sets (``<study>.datasets``)."""
    sets = crows_pairs_sets(config)
    return list(dict.fromkeys(sets[ds]["lang"] for ds in config[study]["datasets"] if ds in sets))


def published(config: dict) -> list[str]:
    """The study's files a run publishes (:func:`plmfair.plan.published_files`): each ingested data set,
    each model's per-pair scores, the summary, McNemar tests and breakdowns, the language comparisons, and
    with a robustness analysis each extra pass's scores, the specifications and the models' ranking agreement."""
    jobs = crows_pairs_jobs(config)
    out = [crows_pairs_data_file(ds) for ds in crows_pairs_ingested(config)]
    out += [crows_pairs_scores_file(ds, m) for ds, m in jobs]
    out += [SUMMARY, MCNEMAR, BREAKDOWNS] if jobs else []
    out += [LANGUAGE_WINLOSS, LANGUAGE_EFFECTS] if crows_pairs_language_jobs(config) else []
    out += [pass_scores_file(*job) for job in pass_jobs(config)]
    out += [SPECIFICATIONS, ROBUSTNESS, RANKING] if robustness_enabled(config) else []
    return out


def question_files(config: dict) -> list[str]:
    """The result files whose tests the run's hypotheses adjust (:mod:`plmfair.crows_pairs.questions`)."""
    out = [SUMMARY, MCNEMAR] if crows_pairs_outputs(config) else []
    return out + ([LANGUAGE_WINLOSS] if crows_pairs_language_jobs(config) else [])
