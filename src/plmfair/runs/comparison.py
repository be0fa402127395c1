"""Runs side by side, from their records (``results/run.json``): what a reader needs to tell them apart.

- CrowS-Pairs, per run, data set and model: Nangia's score, the decisive-pair share with its
  interval and mark, p, pairs scored and neutral;
- cloze sets, per run, set, model and language: all annotators' P@1 and MRR, and sigma_gd of MRR with
  its chance level, mark and permutation p;
- the settings that differ between the runs' models (uncased, revision, commit, weights, precision,
  protocol, token budget) and between their configurations;
- the paired test of two runs on the same data set where their pairs match: the exact McNemar test
  on the pairs decisive under both (:func:`plmfair.stats.paired_mcnemar`, Bonferroni over the
  comparisons), from the runs' per-pair files.

Only what a run's record holds is shown: results of studies or models a run no longer has are not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from plmfair.crows_pairs.summary import decisive_outcomes, read_pair_scores
from plmfair.errors import DataError
from plmfair.rendering.table_format import to_markdown
from plmfair.runs.record import cloze_headline, crows_pairs_lines, read_run_record
from plmfair.stats import bonferroni, paired_mcnemar

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


def _flat(node, prefix: str = "") -> dict:
    if isinstance(node, Mapping):
        out = {}
        for key, value in node.items():
            out.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: node}


def settings_that_differ(records: Mapping[str, dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per run and model, the model settings that are not the same in every row; the configuration
    keys, other than models and the mirror, whose values differ between the runs)."""
    rows = [
        {"run": run, "model": m["name"], **{k: m.get(k) for k in MODEL_SETTINGS}}
        for run, record in records.items()
        for m in record["models"]
    ]
    models = pd.DataFrame(rows, columns=["run", "model", *MODEL_SETTINGS])
    varying = [c for c in MODEL_SETTINGS if models[c].astype(str).nunique() > 1]
    flat = {
        run: {k: v for k, v in _flat(record["config"]).items() if not k.startswith(("models.", "mirror"))}
        for run, record in records.items()
    }
    keys = sorted(set().union(*flat.values())) if flat else []
    config = [
        {"key": key, **{run: str(values.get(key)) for run, values in flat.items()}}
        for key in keys
        if len({str(values.get(key)) for values in flat.values()}) > 1
    ]
    differing = models[["run", "model", *varying]] if varying else models.iloc[0:0][["run", "model"]]
    return differing, pd.DataFrame(config, columns=["key", *records])


def paired_tests(folders: Mapping[str, Path], records: Mapping[str, dict]) -> pd.DataFrame:
    """The exact McNemar test of every two (run, model) scored on the same data set, on their matching pairs."""
    by_dataset: dict[str, dict[str, pd.Series]] = {}
    for run, record in records.items():
        for row in record["results"]["crows_pairs"]:
            path = folders[run] / "results" / "crows_pairs" / row["dataset"] / f"{row['model']}.parquet"
            if not path.is_file():
                raise DataError(
                    f"{path}: missing, though the record of run {run} lists these scores; rebuild the run "
                    f"before comparing it (plmfair run --run {Path(folders[run]).name})"
                )
            by_dataset.setdefault(row["dataset"], {})[f"{run}/{row['model']}"] = decisive_outcomes(
                read_pair_scores(path)
            )
    frames = []
    for dataset, outcomes in by_dataset.items():
        if len(outcomes) > 1:
            frames.append(paired_mcnemar(outcomes).assign(dataset=dataset))
    if not frames:
        return pd.DataFrame(
            columns=["dataset", "a", "b", "n", "score_a", "score_b", "a_only", "b_only", "p_value", "p_adjusted"]
        )
    out = pd.concat(frames, ignore_index=True)
    out = out[out["n"] > 0]
    out["p_adjusted"] = bonferroni(out["p_value"].to_numpy()) if len(out) else []
    return out[["dataset", "a", "b", "n", "score_a", "score_b", "a_only", "b_only", "p_value", "p_adjusted"]]


def compare_runs(folders: Sequence[str | Path]) -> dict[str, pd.DataFrame]:
    """Every table of the comparison, by name."""
    folders = {Path(f).name: Path(f) for f in folders}
    records = {run: read_run_record(folder / "results" / "run.json") for run, folder in folders.items()}
    crows = [{"run": run, **line} for run, record in records.items() for line in crows_pairs_lines(record)]
    cloze = []
    for run, record in records.items():
        for r, d in cloze_headline(record):
            cloze.append(
                {
                    "run": run,
                    "set": r["set"],
                    "model": r["model"],
                    "lang": r["lang"],
                    "n": r["n"],
                    "P@1": r["p_at_1"],
                    "MRR": r["mrr"],
                    "σ_gd MRR": d.get("sigma_gd"),
                    "chance level": d.get("chance_level"),
                    "groups differ": "*" if d.get("significant") else "",
                    "p (σ_gd)": d.get("p_permutation"),
                }
            )
    models, config = settings_that_differ(records)
    return {
        "crows_pairs": pd.DataFrame(crows),
        "cloze": pd.DataFrame(cloze),
        "model settings": models,
        "configuration": config,
        "paired tests": paired_tests(folders, records),
    }


TITLES = {
    "crows_pairs": "CrowS-Pairs: decisive-pair share with the interval of its exact test (* differs from 50%)",
    "cloze": "Cloze sets: all annotators; σ_gd of MRR across the four groups and its chance level",
    "model settings": "Model settings that differ between the rows",
    "configuration": "Configuration keys that differ between the runs",
    "paired tests": "Runs compared pair by pair on a data set (exact McNemar on the pairs decisive under both, "
    "Bonferroni over the comparisons)",
}


def render(tables: Mapping[str, pd.DataFrame], fmt: str) -> str:
    """The comparison as Markdown (a table per part), CSV (one long table, a column naming the part) or JSON."""
    if fmt == "json":
        return (
            json.dumps(
                {name: json.loads(t.to_json(orient="records")) for name, t in tables.items()},
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    if fmt == "csv":
        long = pd.concat(
            [t.astype(str).assign(table=name) for name, t in tables.items() if not t.empty], ignore_index=True
        )
        return long[["table", *[c for c in long.columns if c != "table"]]].to_csv(index=False)
    parts = []
    for name, table in tables.items():
        if table.empty:
            continue
        parts.append(f"{TITLES[name]}\n\n{to_markdown(table)}")
    return "\n".join(parts) if parts else "Nothing to compare: the runs hold no headline numbers.\n"
