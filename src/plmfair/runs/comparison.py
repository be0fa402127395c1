"""Runs side by side, from their records (``results/run.json``) and per-pair files: did anything move?

- first, what differs: the model settings (uncased, revision, commit, weights, precision, protocol,
  token budget) and the configuration keys the compared studies read (every key with ``all_settings``);
- each run's coverage warnings;
- each run's headline numbers (each study's, :func:`plmfair.runs.record.headline_tables`);
- each study's changes between every two runs (its ``compare`` module, :class:`plmfair.studies.Study`):
  CrowS-Pairs pair by pair (:mod:`plmfair.crows_pairs.run_changes`), cloze sets annotation by annotation
  (:mod:`plmfair.cloze.run_changes`).

Every test of the comparison is one family, Holm over it at the comparison's own ``alpha`` (Tarone's
rule leaves out the tests that cannot reach it: :func:`plmfair.multiplicity.decide_hypotheses`).

Runs are keyed by their full path and labelled by the shortest part of it that tells them apart.
Only what a run's record holds is shown: results of studies or models a run no longer has are not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from plmfair.errors import DataError
from plmfair.multiplicity import DECIDED_SCHEMA, decide_hypotheses
from plmfair.rendering.table_format import to_markdown
from plmfair.runs.record import headline_tables, headlines, read_run_record
from plmfair.studies import ForPeople, compare_parts

# the hypotheses' name for the tests of a comparison
SOURCE = "compare"

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


def _flat(node: object, prefix: str = "") -> dict:
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
    """The configuration sections of the studies a run has numbers of."""
    return set().union(*(part.sections(record) for part in compare_parts()))


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


def comparison_hypotheses(tests: Sequence[pd.DataFrame], *, alpha: float) -> pd.DataFrame:
    """Every test of a comparison (the studies' ``tests``) in one family, Holm at ``alpha``
    (:func:`plmfair.multiplicity.decide_hypotheses`)."""
    frames = [f for f in tests if len(f)]
    if not frames:
        return pd.DataFrame(columns=list(DECIDED_SCHEMA))
    hypotheses = pd.concat(frames, ignore_index=True)
    hypotheses = hypotheses.assign(study="compare", source=SOURCE, question=hypotheses["hypothesis"], primary=True)
    return decide_hypotheses(hypotheses, alpha=alpha)


def compare_runs(
    folders: Sequence[str | Path],
    *,
    alpha: float,
    all_settings: bool = False,
    other_models: bool = False,
    statuses: Mapping[Path, str] | None = None,
) -> dict[str, pd.DataFrame]:
    """Every table of the comparison, by name, in the order they are shown: the runs with their ``statuses``
    (by folder; :func:`plmfair.runs.status.run_status`, where the caller checked them), then numbers (each
    study's changes, each test's decision beside it: Holm over the comparison at ``alpha``), printed for people
    by :func:`render`."""
    located = run_labels(folders)
    status = {Path(folder).resolve(): text for folder, text in (statuses or {}).items()}
    runs = pd.DataFrame(
        [
            {"run": run, "folder": str(folder), "status": status.get(folder, "not checked")}
            for run, folder in located.items()
        ],
        columns=["run", "folder", "status"],
    )
    records = {run: read_run_record(folder / "results" / "run.json") for run, folder in located.items()}
    warnings = [{"run": run, "warning": w} for run, record in records.items() for w in record["results"]["warnings"]]
    stacked: dict[str, list[pd.DataFrame]] = {}
    for run, record in records.items():
        for table, lines in headline_tables(record):
            stacked.setdefault(table.key, []).append(lines.assign(run=run))
    parts = compare_parts()
    changes = {
        part.KEY: part.changes(located, records, alpha=alpha, source=SOURCE, other_models=other_models)
        for part in parts
    }
    hypotheses = comparison_hypotheses([t for part in parts for t in part.tests(changes[part.KEY])], alpha=alpha)
    hypotheses.attrs["alpha"] = alpha
    return {
        "runs": runs,
        **settings_that_differ(records, all_settings=all_settings),
        "coverage warnings": pd.DataFrame(warnings, columns=["run", "warning"]),
        **{key: _stacked(frames) for key, frames in stacked.items()},
        **{part.KEY: part.decided(changes[part.KEY], hypotheses) for part in parts},
        "hypotheses": hypotheses,
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


# each part's title (the studies bring their own: their headline tables and their changes)
TITLES = {
    "runs": "Runs compared, each as plmfair show and plmfair verify find it",
    "model settings": "Model settings that differ between the rows",
    "configuration": "Configuration keys that differ between the runs (those the compared studies read; "
    "--all-settings for every key)",
    "coverage warnings": "Coverage warnings: text a model cannot read",
}


def _json_value(value: object) -> object:
    """A number as JSON holds it exactly (the shortest text that reads back as the same float), NaN as null."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


def render(tables: Mapping[str, pd.DataFrame], fmt: str) -> str:
    """The comparison as Markdown (a table per part, printed by the display rule, and each comparison's 3 x 3
    transitions), CSV (one long table of the numbers at full precision, a column naming the part) or JSON
    (the numbers, each the shortest text that reads back as the same float)."""
    # the level the comparison decided at (a comparison of settings alone has no hypotheses: no test, no level)
    alpha = float(tables["hypotheses"].attrs["alpha"]) if "hypotheses" in tables else None
    if fmt == "json":
        return (
            json.dumps(
                {
                    name: [{k: _json_value(v) for k, v in row.items()} for row in t.to_dict(orient="records")]
                    for name, t in tables.items()
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    if fmt == "csv":
        long = pd.concat([t.assign(table=name) for name, t in tables.items() if not t.empty], ignore_index=True)
        return long[["table", *[c for c in long.columns if c != "table"]]].to_csv(index=False, float_format="%.17g")
    studies = {part.KEY: part for part in compare_parts()}
    titles = {**TITLES, **{table.key: table.title for table in headlines()}, **{k: p.TITLE for k, p in studies.items()}}
    parts = []
    for name, table in tables.items():
        if table.empty or name == "hypotheses":
            continue
        study = studies.get(name)
        shown = study.for_people(table, tables["hypotheses"], alpha=alpha) if isinstance(study, ForPeople) else table
        parts.append(f"{titles[name].format(alpha=alpha)}\n\n{to_markdown(shown)}")
        if isinstance(study, ForPeople):
            title, text = study.text(table)
            parts.append(f"{title}\n\n```\n{text}\n```\n")
    return "\n".join(parts) if parts else "Nothing to compare: the runs hold no headline numbers.\n"
