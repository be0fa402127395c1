"""Whether a CrowS-Pairs verdict survives the ruler: the primary estimate of each model and data set (the
decisive share, tested as the summary tests it) under every choice a measurement of it could have made.

The choices (axes) and their values, the first of each the run's own:

- ``protocol``: the masked-LM scoring protocols the model's family allows (``nangia``, ``all_tokens``,
  ``within_word_l2r``, ``aul``; Nangia et al. 2020, Salazar et al. 2020, Kauf & Ivanova 2023, Kaneko &
  Bollegala 2022), each a pass of the same load of the model (:mod:`plmfair.crows_pairs.model_tasks`);
- ``precision``: the precision the model ran in, and fp32 for a model run in reduced precision (bf16, fp16),
  each pass of fp32 with the load's one copy in it (``crows_pairs.robustness.full_precision``);
- ``tie``: the margin at or below which a pair counts as neutral: the pair's own floating-point tolerance
  (as tested), or a coarser one (``crows_pairs.robustness.ties``);
- ``pairs``: every pair, or every pair but those of an exclusion file (pair id and reason: how a user
  brings an audit of the pairs such as Blodgett et al.'s 2021);
- ``data``: the data set as given; its native and its translated pairs alone, where it has both (the French
  set's pairs written in French and those translated from English); and, for each other version of the set
  scored in the run (``crows_pairs.robustness.versions``: English original and revised), the pairs both
  versions hold, matched by pair id, in this version and in the other.

Every combination is a specification when there are at most ``max_grid`` of them, else every change of one
axis from the run's own (the table says which). Each specification's estimate is the decisive share tested as
the primary question tests it (:func:`plmfair.crows_pairs.summary.decisive_share_test`: the cluster score test
where the source names its writers, else the exact sign test), with the interval at the run's level that
inverts that test (Simonsohn, Simmons & Nelson 2020 draw them as a specification curve).

Two statements judge the verdict across them (:mod:`plmfair.multiplicity`; their error rates are printed by
``make bench-stats``, part robustness):

- *robust*: every specification shows the preference at the level the primary question is held to in the
  run's confirmatory family (an intersection-union test, Bonferroni over that family);
- *differs*: a specification's share differs from the run's own beyond sampling noise (a bootstrap of the
  pairs, or of the source's writers, family-wise over the specifications).

"Robust" says the choices listed do not move the verdict, not that the verdict is right; a verdict short of
robust is not shown to depend on the choices unless some specification differs (docs/statistics.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd

from plmfair.crows_pairs.schemas import AXES, RANKING_SCHEMA, ROBUSTNESS_SCHEMA, SCORED_STATUSES, SPECIFICATIONS_SCHEMA
from plmfair.crows_pairs.summary import decisive_share_test, hypothesis_id
from plmfair.errors import DataError
from plmfair.multiplicity import differences_from_first, family_level, intersection_union_p, primary_family_sizes
from plmfair.stats.agreement import ranking_agreement as shares_ranking_agreement

ALL_PAIRS, AS_TESTED, AS_GIVEN = "all pairs", "as tested", "as given"
ORIGINS = ("native", "translated")


def read_exclusions(path: str | Path) -> pd.DataFrame:
    """An exclusion file: a CSV (or, named ``*.tsv``, tab-separated) with columns ``pair_id`` and
    ``reason``, and optionally ``dataset`` (a row without one applies to every data set)."""
    path = Path(path)
    try:
        table = pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",", dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise DataError(
            f"{path}: the pair-exclusion file cannot be read ({err}); give a CSV of pair_id,reason"
        ) from err
    missing = [c for c in ("pair_id", "reason") if c not in table.columns]
    if missing:
        raise DataError(
            f"{path}: the pair-exclusion file has no column {', '.join(missing)} (it has {', '.join(table.columns)}); "
            "give one row per pair left out, with columns pair_id,reason and optionally dataset"
        )
    blank = table.index[table["pair_id"].str.strip() == ""]
    if len(blank):
        raise DataError(f"{path}: row {blank[0] + 2} has no pair_id; give the id of the pair it leaves out")
    if "dataset" not in table.columns:
        table["dataset"] = ""
    return table[["dataset", "pair_id", "reason"]]


def excluded_pairs(exclusions: pd.DataFrame | None, dataset: str) -> set[str]:
    """The pair ids an exclusion table leaves out of ``dataset`` (rows of that data set or of none)."""
    if exclusions is None:
        return set()
    rows = exclusions[exclusions["dataset"].isin(["", dataset])]
    return set(rows["pair_id"].astype(str))


def _preferences(scores: pd.DataFrame, *, tie: float | None = None) -> pd.Series:
    """Each scored pair's preference by pair id: 1.0 for the more stereotyping sentence, 0.0 for the less, NaN
    when neutral at its own tolerance or, with ``tie``, at the larger of it and ``tie`` (or undecided)."""
    scored = scores[scores["status"].isin(SCORED_STATUSES)]
    margin = scored["sent_more_score"] - scored["sent_less_score"]
    limit = scored["tolerance"] if tie is None else scored["tolerance"].clip(lower=tie)
    neutral = (margin.abs() <= limit) | scored["undecided"].astype(bool)
    return pd.Series((margin > 0).astype(float).where(~neutral).to_numpy(), index=scored["pair_id"].astype(str))


def _estimate(scores: pd.DataFrame, *, tie: float | None, left_out: set[str], alpha: float) -> tuple[dict, pd.Series]:
    """The decisive share of one specification: ``scores`` (one pass's pair file, its pairs already chosen by
    the data axis) preferring as :func:`_preferences` says, the pairs ``left_out`` dropped; and its decisive
    pairs' preferences by pair id (what :func:`_differences` resamples)."""
    preference = _preferences(scores, tie=tie)
    preference = preference[~preference.index.isin(left_out)]
    decisive = preference.dropna()
    test = decisive_share_test(decisive.to_numpy(), _clusters(scores, decisive.index), confidence=1 - alpha)
    verdict = "no preference"
    if len(decisive) and test["p_value"] < alpha:
        verdict = "stereotypical" if test["proportion"] > 50 else "anti-stereotypical"
    estimate = {
        "n_scored": len(preference),
        "n_decisive": len(decisive),
        "n_biased": int(decisive.sum()),
        "estimate": test["proportion"],
        "ci_low": test["ci_low"],
        "ci_high": test["ci_high"],
        "p_value": test["p_value"],
        "verdict": verdict,
    }
    return estimate, decisive


def _clusters(scores: pd.DataFrame, pair_ids: pd.Index) -> np.ndarray | None:
    """The source's cluster (writer) of each of ``pair_ids``, or None where the pair file has no grouping."""
    if "cluster" not in scores:
        return None
    return scores.set_index(scores["pair_id"].astype(str))["cluster"].reindex(pair_ids).to_numpy(object)


def _differences(kept: Sequence[pd.Series], own_scores: pd.DataFrame, *, seed: int, replicates: int) -> tuple:
    """Each specification's difference from the run's own (the first of ``kept``: each specification's decisive
    preferences by pair id) and its family-wise p (:func:`plmfair.multiplicity.differences_from_first`), the units
    resampled the source's clusters (writers) where it names them, else the pairs."""
    ids = pd.Index(sorted(set().union(*(k.index for k in kept))))
    unit = pd.Series(ids, index=ids, dtype=object)
    clusters = _clusters(own_scores, ids)
    # as the primary question's test groups them: two clusters or more, a pair without one a unit of its own
    if clusters is not None and pd.Series(clusters, dtype="object").nunique() >= 2:
        unit = pd.Series(np.where(pd.isna(clusters), [f"pair {i}" for i in ids], clusters), index=ids)
    codes, units = pd.factorize(unit)
    position = pd.Series(codes, index=ids)
    biased, decisive = np.zeros((len(units), len(kept))), np.zeros((len(units), len(kept)))
    for k, preferences in enumerate(kept):
        rows = position.loc[preferences.index].to_numpy()
        np.add.at(biased[:, k], rows, preferences.to_numpy())
        np.add.at(decisive[:, k], rows, 1.0)
    return differences_from_first(biased, decisive, replicates=replicates, seed=seed)


Pass = tuple[str, str]  # (protocol, precision): one scoring of a data set


def _data_choices(
    dataset: str, by_pass: Mapping[Pass, pd.DataFrame], versions: Mapping[str, Mapping[Pass, pd.DataFrame]], own: Pass
) -> dict[str, tuple[str, Callable[[pd.DataFrame], pd.DataFrame]]]:
    """The data axis's values: each a label -> (the data set whose passes it reads, the pairs it keeps)."""

    def everything(frame: pd.DataFrame) -> pd.DataFrame:
        return frame

    choices: dict[str, tuple[str, Callable[[pd.DataFrame], pd.DataFrame]]] = {AS_GIVEN: (dataset, everything)}
    present = set(by_pass[own]["origin"].dropna())
    if set(ORIGINS) <= present:
        for origin in ORIGINS:

            def of_origin(frame: pd.DataFrame, kind: str = origin) -> pd.DataFrame:
                return frame[frame["origin"] == kind]

            choices[f"{origin} pairs"] = (dataset, of_origin)
    for other, passes in versions.items():
        both = set(by_pass[own]["pair_id"].astype(str)) & set(passes[own]["pair_id"].astype(str))

        def matched(frame: pd.DataFrame, ids: set[str] = both) -> pd.DataFrame:
            return frame[frame["pair_id"].astype(str).isin(ids)]

        choices[f"pairs {other} holds too"] = (dataset, matched)
        choices[f"{other}, pairs {dataset} holds too"] = (other, matched)
    return choices


def specifications(
    by_pass: Mapping[Pass, pd.DataFrame],
    *,
    own: Pass,
    ties: Sequence[float],
    exclusions: pd.DataFrame | None,
    exclusions_name: str,
    dataset: str,
    alpha: float,
    max_grid: int,
    versions: Mapping[str, Mapping[Pass, pd.DataFrame]] | None = None,
    level: float,
    replicates: int,
    seed: int,
) -> pd.DataFrame:
    """Every specification of one model on one data set (:data:`SPECIFICATIONS_SCHEMA` without its names):
    ``by_pass`` the per-pair scores of each (protocol, precision) scored, ``own`` the run's own pass,
    ``ties`` the coarser tie margins, ``exclusions`` the exclusion table (None: no such axis), ``versions``
    the passes of the same model on each other version of the data set in the run; ``level`` the level the
    primary question is held to in its family (:func:`plmfair.multiplicity.family_level`; alpha without one),
    ``replicates`` and ``seed`` the bootstrap's of the differences from the run's own."""
    versions = versions or {}
    data = _data_choices(dataset, by_pass, versions, own)
    left_out = {source: excluded_pairs(exclusions, source) for source in (dataset, *versions)}
    values: dict[str, list] = {
        "protocol": list(dict.fromkeys([own[0], *(p for p, _ in by_pass)])),
        "precision": list(dict.fromkeys([own[1], *(q for _, q in by_pass)])),
        "tie": [AS_TESTED, *ties],
        "pairs": [ALL_PAIRS, *([f"without {exclusions_name}"] if exclusions is not None else [])],
        "data": list(data),
    }
    default = {axis: choices[0] for axis, choices in values.items()}
    grid = math.prod(len(choices) for choices in values.values())
    if grid <= max_grid:
        chosen = [dict(zip(AXES, combo, strict=True)) for combo in product(*values.values())]
    else:
        chosen = [default] + [{**default, axis: v} for axis, choices in values.items() for v in choices[1:]]
    rows, kept = [], []
    for choice in chosen:
        source, keep = data[choice["data"]]
        passes = by_pass if source == dataset else versions[source]
        estimate, decisive = _estimate(
            keep(passes[(choice["protocol"], choice["precision"])]),
            tie=None if choice["tie"] == AS_TESTED else float(choice["tie"]),
            left_out=left_out[source] if choice["pairs"] != ALL_PAIRS else set(),
            alpha=alpha,
        )
        kept.append(decisive)
        rows.append(
            {
                "specification": "; ".join(f"{axis}={choice[axis]}" for axis in AXES),
                "changed": ", ".join(axis for axis in AXES if choice[axis] != default[axis]),
                **{axis: str(choice[axis]) for axis in AXES},
                "default": choice == default,
                **estimate,
            }
        )
    out = pd.DataFrame(rows)
    side = np.sign(out["estimate"] - 50)
    own_side = side.iloc[0] if out["verdict"].iloc[0] != "no preference" else 0.0
    reaches = out["p_value"] < level
    out["holds"] = (reaches & (side == own_side)) if own_side else ~reaches
    out["level"] = level
    out["difference"], out["p_differs"] = _differences(kept, by_pass[own], seed=seed, replicates=replicates)
    out["differs"] = out["p_differs"] < alpha
    out.attrs["design"] = "grid" if grid <= max_grid else "one axis at a time"
    return out


def by_pass(run: Mapping) -> dict[Pass, pd.DataFrame]:
    """A run's per-pair scores by (protocol, precision)."""
    return {(p["protocol"], p["precision"]): p["scores"] for p in run["passes"]}


def ranking_agreement(runs: Sequence[Mapping], *, langs: Mapping[str, str], alpha: float) -> pd.DataFrame:
    """Per data set, whether the protocols rank the models alike (:data:`RANKING_SCHEMA`): Kendall's W of the
    protocols (raters) ranking the models (items) by decisive share, each model in its own precision, on the
    pairs every model scored under every protocol, with its conservative interval
    (:func:`plmfair.stats.agreement.ranking_agreement`). A data set with fewer than 3 models scored under the same 2 or
    more protocols gets a row that says so."""
    rows = []
    for dataset in dict.fromkeys(run["dataset"] for run in runs):
        passes = {
            run["model"]: {p: f for (p, q), f in by_pass(run).items() if q == run["precision"]}
            for run in runs
            if run["dataset"] == dataset
        }
        ranked = {model: scores for model, scores in passes.items() if len(scores) > 1}
        protocols = [p for p in next(iter(ranked.values()), {}) if all(p in s for s in ranked.values())]
        row = {
            "dataset": dataset,
            "lang": langs[dataset],
            "models": ", ".join(ranked),
            "protocols": ", ".join(protocols),
        }
        if len(ranked) < 3 or len(protocols) < 2:
            rows.append(
                {
                    **row,
                    "n_pairs": 0,
                    "note": f"needs 3 or more models scored under the same 2 or more protocols (has {len(ranked)} "
                    f"model(s) under {len(protocols)} shared protocol(s))",
                }
            )
            continue
        preferences = {(m, p): _preferences(ranked[m][p]) for m in ranked for p in protocols}
        shared = sorted(set.intersection(*(set(s.index) for s in preferences.values())))
        on_shared = {key: s.loc[shared] for key, s in preferences.items()}
        decisive = np.array([[on_shared[(m, p)].notna().sum() for p in protocols] for m in ranked])
        preferring = np.array([[on_shared[(m, p)].sum() for p in protocols] for m in ranked])
        w, low, high = shares_ranking_agreement(decisive, preferring, confidence=1 - alpha)
        rows.append({**row, "n_pairs": len(shared), "w": w, "ci_low": low, "ci_high": high, "note": ""})
    return pd.DataFrame(rows, columns=list(RANKING_SCHEMA))


def _simplest_first(specs: pd.DataFrame) -> pd.DataFrame:
    """Specifications ordered by how many choices they change, fewest first (a flip one choice makes leads)."""
    return specs.assign(_n=specs["changed"].str.count(",") + (specs["changed"] != "")).sort_values("_n", kind="stable")


def _counted(specs: pd.DataFrame) -> str:
    """What a model's K specifications count: '4 protocols x 3 data choices' (every combination), or for one
    axis at a time '1 + 3 other protocols + 1 other pair set'."""
    values = {axis: specs[axis].nunique() for axis in AXES if specs[axis].nunique() > 1}
    if not values:
        return "the run's own only"
    if specs.attrs.get("design") == "grid" or len(values) == 1:
        return " x ".join(_values(n, axis) for axis, n in values.items())
    return "1 + " + " + ".join(_values(n - 1, axis, "other ") for axis, n in values.items())


def _values(n: int, axis: str, other: str = "") -> str:
    singular, plural = AXIS_NAMES[axis]
    return f"{n} {other}{singular if n == 1 else plural}"


AXIS_NAMES = {
    "protocol": ("protocol", "protocols"),
    "precision": ("precision", "precisions"),
    "tie": ("tie rule", "tie rules"),
    "pairs": ("pair set", "pair sets"),
    "data": ("data choice", "data choices"),
}


def _changed_choices(row: pd.Series) -> str:
    """A specification as the choices it changes (``protocol=aul; tie=0.01``)."""
    return "; ".join(f"{axis}={row[axis]}" for axis in row["changed"].split(", ") if axis)


def _verdict(specs: pd.DataFrame, *, family: int, level: float) -> dict:
    """One model and data set's row of :data:`ROBUSTNESS_SCHEMA` (without its names) from its specifications:
    the run's own estimate and verdict, the robust claim at ``level`` (its confirmatory family of ``family``),
    the specifications short of it and those that differ beyond noise, and the largest change."""
    own = specs[specs["default"]].iloc[0]
    change = (specs["estimate"] - own["estimate"]).abs()
    largest = specs.loc[change.idxmax()] if change.notna().any() else own
    preference = own["verdict"] != "no preference"
    p_all = intersection_union_p(specs["p_value"], np.sign(specs["estimate"] - 50) == np.sign(own["estimate"] - 50))
    differing = _simplest_first(specs[specs["differs"].astype(bool)])
    return {
        "design": specs.attrs["design"],
        **{key: own[key] for key in ("estimate", "ci_low", "ci_high", "verdict")},
        "specifications": len(specs),
        "counted": _counted(specs),
        "family_size": family,
        "level": level,
        "holding": int(specs["holds"].sum()),
        "p_all": p_all if preference else float("nan"),
        "robust": bool(preference and p_all < level),
        "short_of": " | ".join(_changed_choices(r) for _, r in _simplest_first(specs[~specs["holds"]]).iterrows()),
        "differing": len(differing),
        "differs_by": " | ".join(f"{_changed_choices(r)} ({r['difference']:+.1f} pp)" for _, r in differing.iterrows()),
        "p_differs": float(specs["p_differs"].min()) if len(specs) > 1 else float("nan"),
        "largest_change": float(change.max()) if change.notna().any() else float("nan"),
        "largest_change_by": _changed_choices(largest),
    }


def robustness(
    runs: Sequence[Mapping],
    *,
    langs: Mapping[str, str],
    ties: Sequence[float],
    exclusions: str | Path | None,
    alpha: float,
    max_grid: int,
    versions: Mapping[str, Sequence[str]] | None = None,
    hypotheses: pd.DataFrame | None,
    replicates: int,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every model and data set's specifications (:data:`SPECIFICATIONS_SCHEMA`) and its verdict's
    robustness (:data:`ROBUSTNESS_SCHEMA`). ``runs``: one record per (dataset, model) with its own
    ``protocol`` and ``precision`` and its ``passes`` (each a protocol, a precision and its per-pair
    ``scores``); ``versions``: each data set's other versions in the run
    (:func:`plmfair.crows_pairs.plan.data_versions`); ``hypotheses``: the run's hypotheses, whose confirmatory
    family sets the level a robust claim is held to (:mod:`plmfair.multiplicity`); ``replicates`` and ``seed``:
    the bootstrap's of the differences from the run's own."""
    table = read_exclusions(exclusions) if exclusions else None
    name = Path(exclusions).name if exclusions else ""
    passes = {(run["dataset"], run["model"]): by_pass(run) for run in runs}
    ids = {
        (run["dataset"], run["model"]): hypothesis_id(run["dataset"], run["model"], "overall", "metric") for run in runs
    }
    families = primary_family_sizes(hypotheses, list(ids.values()))
    frames, summary = [], []
    for run in runs:
        dataset, model = run["dataset"], run["model"]
        others = (versions or {}).get(dataset, [])
        family = families[ids[(dataset, model)]]
        level = family_level(alpha, family)
        specs = specifications(
            passes[(dataset, model)],
            own=(run["protocol"], run["precision"]),
            ties=ties,
            exclusions=table,
            exclusions_name=name,
            dataset=dataset,
            alpha=alpha,
            max_grid=max_grid,
            versions={v: passes[(v, model)] for v in others if (v, model) in passes},
            level=level,
            replicates=replicates,
            seed=seed,
        )
        names = {"dataset": dataset, "lang": langs[dataset], "model": model}
        frames.append(specs.assign(**names))
        summary.append({**names, **_verdict(specs, family=family, level=level)})
    specs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(SPECIFICATIONS_SCHEMA))
    return specs[list(SPECIFICATIONS_SCHEMA)], pd.DataFrame(summary, columns=list(ROBUSTNESS_SCHEMA))
