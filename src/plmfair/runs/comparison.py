"""Runs side by side, from their records (``results/run.json``) and per-pair files: did anything move?

- first, what differs: the model settings (uncased, revision, commit, weights, precision, protocol,
  token budget) and the configuration keys the compared studies read (every key with ``all_settings``);
- each run's coverage warnings;
- each run's headline numbers (each study's, :func:`plmfair.runs.record.headline_tables`);
- for every two runs, each CrowS-Pairs data set and each model present in both, the pair-by-pair
  comparison of :mod:`plmfair.crows_pairs.changes` (the 3 x 3 transitions, and the changes of the
  decisive share and of Nangia's score, each with Tango's interval and its test); a model against
  another model only with ``other_models``, never a scoring against itself;
- for every two runs, each cloze set and model in both, the annotation-by-annotation changes of
  :mod:`plmfair.cloze.changes` (P@1, P@5, MRR per group, sigma_gd, each with its flip test).

Every test of the comparison is one family, Holm over it at the comparison's own ``alpha`` (Tarone's
rule leaves out the tests that cannot reach it: :func:`plmfair.multiplicity.build_plan`).

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
from plmfair.crows_pairs.schemas import CHANGES, OUTCOMES, read_pair_scores
from plmfair.crows_pairs.tables import changes_table
from plmfair.errors import DataError
from plmfair.io.parquet import read_parquet
from plmfair.multiplicity import ANALYSIS_PLAN_SCHEMA, build_plan
from plmfair.rendering.marks import add_decisions
from plmfair.rendering.table_format import to_markdown, with_display
from plmfair.runs.record import headline_tables, headlines, read_run_record

# the analysis plan's name for the tests of a comparison
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
    two models too), the pair-by-pair comparison (:data:`plmfair.crows_pairs.changes.CHANGE_SCHEMA`)."""
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
                change = paired_change(
                    scores(first, dataset, model_a), scores(second, dataset, model_b), where=dataset, alpha=alpha
                )
                rows.append({"dataset": dataset, "a": a, "b": b, **change})
    return change_table(rows, source=SOURCE)


def cloze_changes(
    folders: Mapping[str, Path], records: Mapping[str, dict], *, alpha: float, seed: int = 0
) -> pd.DataFrame:
    """For every two runs, each cloze set and model in both, the annotation-by-annotation changes of
    P@1, P@5, MRR per language and group and of sigma_gd, each with its flip test (:mod:`plmfair.cloze.changes`)."""
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
            change = annotation_changes(*both, alpha=alpha, seed=seed)
            a, b = f"{first}/{model}", f"{second}/{model}"
            change["hypothesis"] = [
                f"{SOURCE}/cloze/{cloze_set}/{a}/{b}/{lang}/{group}/{metric}"
                for lang, group, metric in zip(change["lang"], change["group"], change["metric"], strict=True)
            ]
            frames.append(change.assign(set=cloze_set, a=a, b=b))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(CLOZE_CHANGE_SCHEMA))
    return out[list(CLOZE_CHANGE_SCHEMA)]


def comparison_plan(crows: pd.DataFrame, cloze: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """Every test of a comparison in one family, Holm at ``alpha`` (:func:`plmfair.multiplicity.build_plan`)."""
    frames = [
        pd.DataFrame(
            {
                "hypothesis": crows[f"{name}_hypothesis"],
                "p_value": crows[f"{name}_p"].astype(float),
                "p_min": crows[f"{name}_p_min"].astype(float),
                "size": float("nan"),
                "informative": ~crows["identical"].astype(bool),
                "limit": "",
            }
        )
        for name in CHANGES
    ]
    frames.append(
        pd.DataFrame(
            {
                "hypothesis": cloze["hypothesis"],
                "p_value": cloze["p_value"].astype(float),
                "p_min": cloze["p_min"].astype(float),
                "size": cloze["size"].astype(float),
                "informative": True,
                "limit": "",
            }
        )
    )
    hypotheses = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else None
    if hypotheses is None:
        return pd.DataFrame(columns=list(ANALYSIS_PLAN_SCHEMA))
    hypotheses = hypotheses.assign(study="compare", source=SOURCE, question=hypotheses["hypothesis"], primary=True)
    return build_plan(hypotheses, alpha=alpha)


def compare_runs(
    folders: Sequence[str | Path], *, alpha: float = 0.05, all_settings: bool = False, other_models: bool = False
) -> dict[str, pd.DataFrame]:
    """Every table of the comparison, by name, in the order they are shown: numbers (the pair-by-pair
    changes as :data:`plmfair.crows_pairs.changes.CHANGE_SCHEMA`, the cloze changes as
    :data:`plmfair.cloze.changes.CLOZE_CHANGE_SCHEMA`, each test's decision beside it: Holm over the
    comparison at ``alpha``), printed for people by :func:`render`."""
    located = run_labels(folders)
    records = {run: read_run_record(folder / "results" / "run.json") for run, folder in located.items()}
    warnings = [{"run": run, "warning": w} for run, record in records.items() for w in record["results"]["warnings"]]
    headlines: dict[str, list[pd.DataFrame]] = {}
    for run, record in records.items():
        for table, lines in headline_tables(record):
            headlines.setdefault(table.key, []).append(lines.assign(run=run))
    changes = paired_changes(located, records, alpha=alpha, other_models=other_models)
    moved = cloze_changes(located, records, alpha=alpha)
    plan = comparison_plan(changes, moved, alpha=alpha)
    plan.attrs["alpha"] = alpha
    return {
        **settings_that_differ(records, all_settings=all_settings),
        "coverage warnings": pd.DataFrame(warnings, columns=["run", "warning"]),
        **{key: _stacked(frames) for key, frames in headlines.items()},
        "paired changes": _decided_changes(changes, plan),
        "cloze changes": _decided_cloze(moved, plan),
        "plan": plan,
    }


def _decided_changes(changes: pd.DataFrame, plan: pd.DataFrame) -> pd.DataFrame:
    """The pair-by-pair changes with each test's adjusted p and mark (``{change}_p_adjusted``,
    ``{change}_significant``) from the comparison's plan."""
    out = changes.copy()
    for name in CHANGES:
        if len(out):
            decided = plan.set_index("hypothesis").loc[out[f"{name}_hypothesis"]]
            out[f"{name}_p_adjusted"] = decided["p_adjusted"].to_numpy()
            out[f"{name}_significant"] = decided["significant"].to_numpy(dtype=bool)
        else:
            out[f"{name}_p_adjusted"], out[f"{name}_significant"] = [], []
    return out


def _decided_cloze(moved: pd.DataFrame, plan: pd.DataFrame) -> pd.DataFrame:
    """The cloze changes with each flip test's adjusted p and mark, printed by the display rule."""
    out = moved.copy()
    marks: dict = {}
    if len(out):
        marks = add_decisions(out, moved, plan)
    return with_display(out, nulls={"change": 0.0}, marks=marks)


def _stacked(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Per-run tables one under the other, the run first, keeping their display rules."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    out = out[["run", *[c for c in out.columns if c != "run"]]]
    out.attrs = dict(frames[0].attrs)
    return out


# each part's title (the studies' headline tables bring their own: plmfair.rendering.record_rows.Headline)
TITLES = {
    "model settings": "Model settings that differ between the rows",
    "configuration": "Configuration keys that differ between the runs (those the compared studies read; "
    "--all-settings for every key)",
    "coverage warnings": "Coverage warnings: text a model cannot read",
    "paired changes": "CrowS-Pairs, did it move? The same model in two runs compared pair by pair: the 3 x 3 "
    "transitions (m, n, l: the more stereotyping sentence preferred, neutral, the less; m→l: more in the first "
    "run, less in the second), and the changes of the decisive share (on the pairs both runs decide) and of "
    "Nangia et al.'s score, each with Tango's score interval and p, the larger of the mid-p McNemar test's and "
    "Tango's score test's; * : Holm-adjusted p < {alpha} over every test of this comparison; identical: no pair "
    "moved",
    "cloze changes": "Cloze sets, did it move? The same model in two runs compared annotation by annotation: P@1, "
    "P@5, MRR (percent) per language and group and σ_gd across the four groups (percentage points) under each, "
    "the change, and the p of its flip test (the two runs' scores exchanged sentence by sentence; no interval); * "
    ": Holm-adjusted p < {alpha} over every test of this comparison",
}


def _transitions(changes: pd.DataFrame) -> str:
    """Each comparison's 3 x 3 transition table as text: rows the outcome in the first run, columns in the
    second."""
    blocks = []
    for _, r in changes.iterrows():
        width = max(len(str(r[f"{x}_to_{y}"])) for x in OUTCOMES for y in OUTCOMES) + 2
        lines = [f"{r['dataset']}: {r['a']} (rows) -> {r['b']} (columns), {r['n']} pairs"]
        lines.append(" " * 9 + "".join(f"{y:>{max(width, 9)}}" for y in OUTCOMES))
        for x in OUTCOMES:
            lines.append(f"{x:<9}" + "".join(f"{r[f'{x}_to_{y}']:>{max(width, 9)}}" for y in OUTCOMES))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _json_value(value):
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
    alpha = float(tables["plan"].attrs.get("alpha", 0.05)) if "plan" in tables else 0.05
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
    people = {
        "paired changes": lambda t: changes_table(t, tables["plan"], alpha=alpha),
    }
    titles = {**TITLES, **{table.key: table.title for table in headlines()}}
    parts = []
    for name, table in tables.items():
        if table.empty or name == "plan":
            continue
        parts.append(f"{titles[name].format(alpha=alpha)}\n\n{to_markdown(people.get(name, lambda t: t)(table))}")
        if name == "paired changes":
            parts.append(f"Transitions (pairs, by outcome in each run)\n\n```\n{_transitions(table)}\n```\n")
    return "\n".join(parts) if parts else "Nothing to compare: the runs hold no headline numbers.\n"
