"""Runs side by side, from their records (``results/run.json``) and per-pair files: did anything move?

- first, what differs: the model settings (uncased, revision, commit, weights, precision, protocol,
  token budget) and the configuration keys the compared studies read (every key with ``all_settings``);
- each run's coverage warnings;
- each run's headline numbers (:func:`plmfair.runs.record.crows_pairs_lines`, ``cloze_lines``);
- for every two runs, each CrowS-Pairs data set and each model present in both, the pair-by-pair
  comparison of :mod:`plmfair.crows_pairs.changes` (transitions, changes with paired intervals, the
  exact sign test), Holm over data set x model; a model against another model only with
  ``other_models``, never a scoring against itself;
- for every two runs, each cloze set and model in both, the annotation-by-annotation changes of
  :mod:`plmfair.cloze.changes` (P@1, P@5, MRR per group, sigma_gd, with paired intervals).

Runs are keyed by their full path and labelled by the shortest part of it that tells them apart.
Only what a run's record holds is shown: results of studies or models a run no longer has are not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path

import pandas as pd

from plmfair.cloze.changes import CLOZE_CHANGE_SCHEMA, annotation_changes
from plmfair.cloze.plan import set_file
from plmfair.crows_pairs.changes import change_table, outcomes, paired_change
from plmfair.crows_pairs.schemas import read_pair_scores
from plmfair.crows_pairs.tables import changes_table
from plmfair.errors import DataError
from plmfair.io.parquet import read_parquet
from plmfair.rendering.table_format import to_markdown, with_display
from plmfair.runs.record import cloze_lines, crows_pairs_lines, read_run_record

# a model's settings that change its numbers, as the record names them
MODEL_SETTINGS = (
    "source",
    "uncased",
    "revision_requested",
    "commit",
    "files_sha256",
    "precision",
    "protocol",
    "token_budget",
    "k",
    "num_beams",
)
# configuration sections every study's numbers depend on, besides the studies' own
SHARED_SECTIONS = ("analysis", "datasets", "scoring")


def _flat(node, prefix: str = "") -> dict:
    if isinstance(node, Mapping):
        out = {}
        for key, value in node.items():
            out.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: node}


def run_labels(folders: Sequence[str | Path]) -> dict[str, Path]:
    """Each run folder by the shortest tail of its full path that no other folder shares
    (``runA``, or ``here/runA`` and ``there/runA``); the same folder twice is an error."""
    paths = [Path(f).resolve() for f in folders]
    if len(set(paths)) < len(paths):
        twice = sorted({str(p) for p in paths if paths.count(p) > 1})
        raise DataError(f"the same run is named twice: {twice}; name each run once")
    for depth in range(1, max(len(p.parts) for p in paths) + 1):
        labels = ["/".join(p.parts[-depth:]) for p in paths]
        if len(set(labels)) == len(labels):
            return dict(zip(labels, paths, strict=True))
    return {str(p): p for p in paths}


def _studies(record: Mapping) -> set[str]:
    """The configuration sections of the studies a run has numbers of (a cloze set's is its own name)."""
    results = record["results"]
    cloze = {r["set"] for r in results.get("cloze", [])} | ({"cloze"} if results.get("cloze") else set())
    return ({"crows_pairs"} if results.get("crows_pairs") else set()) | cloze


def settings_that_differ(records: Mapping[str, dict], *, all_settings: bool = False) -> dict[str, pd.DataFrame]:
    """The model settings that are not the same in every (run, model), and the configuration keys whose
    values differ between the runs: only those of the compared studies' sections and the shared ones
    (:data:`SHARED_SECTIONS`), unless ``all_settings``; models and the mirror are never compared."""
    rows = [
        {"run": run, "model": m["name"], **{k: m.get(k) for k in MODEL_SETTINGS}}
        for run, record in records.items()
        for m in record["models"]
    ]
    models = pd.DataFrame(rows, columns=["run", "model", *MODEL_SETTINGS])
    varying = [c for c in MODEL_SETTINGS if models[c].astype(str).nunique() > 1]
    sections = set(SHARED_SECTIONS).union(*(_studies(r) for r in records.values()))
    flat = {
        run: {
            k: v
            for k, v in _flat(record["config"]).items()
            if not k.startswith(("models.", "mirror")) and (all_settings or k.split(".")[0] in sections)
        }
        for run, record in records.items()
    }
    keys = sorted(set().union(*flat.values())) if flat else []
    config = [
        {"key": key, **{run: str(values.get(key)) for run, values in flat.items()}}
        for key in keys
        if len({str(values.get(key)) for values in flat.values()}) > 1
    ]
    differing = models[["run", "model", *varying]] if varying else models.iloc[0:0][["run", "model"]]
    return {"model settings": differing, "configuration": pd.DataFrame(config, columns=["key", *records])}


def _pair_scores(folder: Path, label: str, dataset: str, model: str) -> pd.DataFrame:
    path = folder / "results" / "crows_pairs" / dataset / f"{model}.parquet"
    if not path.is_file():
        raise DataError(
            f"{path}: missing, though the record of run {label} lists these scores; rebuild the run before "
            f"comparing it (plmfair run --run {folder.name} --runs {folder.parent})"
        )
    return outcomes(read_pair_scores(path))


def paired_changes(
    folders: Mapping[str, Path], records: Mapping[str, dict], *, alpha: float, other_models: bool = False
) -> pd.DataFrame:
    """For every two runs, each data set and each model scored in both (with ``other_models``, each
    two models too), the pair-by-pair comparison; Holm over the rows."""
    scored = {
        run: {(r["dataset"], r["model"]) for r in record["results"]["crows_pairs"]} for run, record in records.items()
    }
    cache: dict[tuple[str, str, str], pd.DataFrame] = {}

    def scores(run, dataset, model):
        if (run, dataset, model) not in cache:
            cache[run, dataset, model] = _pair_scores(folders[run], run, dataset, model)
        return cache[run, dataset, model]

    rows = []
    for first, second in combinations(records, 2):
        for dataset, model_a in sorted(scored[first]):
            for ds, model_b in sorted(scored[second]):
                if ds != dataset or (model_a != model_b and not other_models):
                    continue
                a, b = f"{first}/{model_a}", f"{second}/{model_b}"
                change = paired_change(scores(first, dataset, model_a), scores(second, dataset, model_b), where=dataset)
                rows.append({"dataset": dataset, "a": a, "b": b, **change})
    return change_table(rows, alpha=alpha)


def cloze_changes(folders: Mapping[str, Path], records: Mapping[str, dict]) -> pd.DataFrame:
    """For every two runs, each cloze set and model in both, the annotation-by-annotation changes of
    P@1, P@5, MRR per language and group and of sigma_gd (:mod:`plmfair.cloze.changes`)."""
    scored = {run: {(r["set"], r["model"]) for r in record["results"]["cloze"]} for run, record in records.items()}
    frames = []
    for first, second in combinations(records, 2):
        for cloze_set, model in sorted(scored[first] & scored[second]):
            both = []
            for run in (first, second):
                path = folders[run] / set_file(cloze_set, "annotation_scores")
                if not path.is_file():
                    raise DataError(
                        f"{path}: missing, though the record of run {run} lists its numbers; rebuild the run before "
                        f"comparing it (plmfair run --run {folders[run].name} --runs {folders[run].parent})"
                    )
                scores = read_parquet(path)
                both.append(scores[scores["model"] == model])
            change = annotation_changes(*both)
            frames.append(change.assign(set=cloze_set, a=f"{first}/{model}", b=f"{second}/{model}"))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(CLOZE_CHANGE_SCHEMA))
    return with_display(
        out[list(CLOZE_CHANGE_SCHEMA)],
        nulls={"change": 0.0},
        intervals={"interval (95%)": ("low", "high", 0.0)},
    )


def compare_runs(
    folders: Sequence[str | Path], *, all_settings: bool = False, other_models: bool = False
) -> dict[str, pd.DataFrame]:
    """Every table of the comparison, by name, in the order they are shown: numbers (the pair-by-pair
    changes as :data:`plmfair.crows_pairs.changes.CHANGE_SCHEMA`), printed for people by :func:`render`."""
    located = run_labels(folders)
    records = {run: read_run_record(folder / "results" / "run.json") for run, folder in located.items()}
    alpha = float(next(iter(records.values()))["config"].get("crows_pairs", {}).get("alpha", 0.05))
    warnings = [{"run": run, "warning": w} for run, record in records.items() for w in record["results"]["warnings"]]
    crows = [crows_pairs_lines(record).assign(run=run) for run, record in records.items()]
    cloze = [cloze_lines(record).assign(run=run) for run, record in records.items()]
    changes = paired_changes(located, records, alpha=alpha, other_models=other_models)
    changes.attrs["alpha"] = alpha
    return {
        **settings_that_differ(records, all_settings=all_settings),
        "coverage warnings": pd.DataFrame(warnings, columns=["run", "warning"]),
        "crows_pairs": _stacked(crows),
        "cloze": _stacked(cloze),
        "paired changes": changes,
        "cloze changes": cloze_changes(located, records),
    }


def _stacked(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Per-run tables one under the other, the run first, keeping their display rules."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    out = out[["run", *[c for c in out.columns if c != "run"]]]
    out.attrs = dict(frames[0].attrs)
    return out


TITLES = {
    "model settings": "Model settings that differ between the rows",
    "configuration": "Configuration keys that differ between the runs (those the compared studies read; "
    "--all-settings for every key)",
    "coverage warnings": "Coverage warnings: text a model cannot read",
    "crows_pairs": "CrowS-Pairs: decisive-pair share with the interval of its exact sign test (* the interval "
    "excludes 50%), net preference in percentage points",
    "cloze": "Cloze sets: all annotators' P@1, P@5, MRR (percent); σ_gd of MRR across the four groups (percentage "
    "points) against its critical value (* groups differ)",
    "cloze changes": "Cloze sets, did it move? The same model in two runs compared annotation by annotation: P@1, "
    "P@5, MRR (percent) per language and group and σ_gd across the four groups (percentage points) under each, "
    "the change and its 95% interval from a paired bootstrap of annotators (descriptive, no test)",
    "paired changes": "CrowS-Pairs, did it move? The same model in two runs compared pair by pair: pairs that kept "
    "their outcome, moved up or down (less, neutral, more stereotyping preferred); changes with paired bootstrap "
    "95% intervals; exact sign test of the moves, * Holm-adjusted p < alpha over data set x model; identical: no "
    "pair moved",
}


def render(tables: Mapping[str, pd.DataFrame], fmt: str) -> str:
    """The comparison as Markdown (a table per part, printed by the display rule), CSV (one long table of
    the numbers at full precision, a column naming the part) or JSON (the numbers)."""
    if fmt == "json":
        return (
            json.dumps(
                {name: json.loads(t.to_json(orient="records", double_precision=15)) for name, t in tables.items()},
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    if fmt == "csv":
        long = pd.concat([t.assign(table=name) for name, t in tables.items() if not t.empty], ignore_index=True)
        return long[["table", *[c for c in long.columns if c != "table"]]].to_csv(index=False, float_format="%.17g")
    people = {"paired changes": lambda t: changes_table(t, alpha=t.attrs.get("alpha", 0.05))}
    parts = [
        f"{TITLES[name]}\n\n{to_markdown(people.get(name, lambda t: t)(table))}"
        for name, table in tables.items()
        if not table.empty
    ]
    return "\n".join(parts) if parts else "Nothing to compare: the runs hold no headline numbers.\n"
