"""Whether a CrowS-Pairs verdict survives the ruler: the primary estimate of each model and data set (the
decisive share, tested as the summary tests it) under every choice a measurement of it could have made.

The choices (axes) and their values, the first of each the run's own:

- ``protocol``: the masked-LM scoring protocols the model's family allows (``nangia``, ``all_tokens``,
  ``within_word_l2r``, ``aul``; Nangia et al. 2020, Salazar et al. 2020, Kauf & Ivanova 2023, Kaneko &
  Bollegala 2022), each a pass of the same load of the model (:mod:`plmfair.crows_pairs.model_tasks`);
- ``tie``: the margin at or below which a pair counts as neutral: the pair's own floating-point tolerance
  (as tested), or a coarser one (``crows_pairs.robustness.ties``);
- ``pairs``: every pair, or every pair but those of an exclusion file (pair id and reason: how a user
  brings an audit of the pairs such as Blodgett et al.'s 2021).

Every combination is a specification when there are at most ``max_grid`` of them, else every change of one
axis from the run's own (the table says which). Each specification's estimate is the decisive share with its
Clopper-Pearson interval at the run's level and the exact sign test it inverts; its verdict is which side of
50% the interval lies on, or none. A verdict *holds* under a specification that gives the same verdict;
it is *robust* when it holds under all of them (Simonsohn, Simmons & Nelson 2020 draw them as a
specification curve). The specifications are a sensitivity analysis of the primary question, not more
questions: no verdict here is adjusted or marked, and "robust" says the choices listed do not move the
verdict, not that the verdict is right (docs/statistics.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import product
from pathlib import Path

import pandas as pd

from plmfair.crows_pairs.schemas import ROBUSTNESS_SCHEMA, SCORED_STATUSES, SPECIFICATIONS_SCHEMA
from plmfair.errors import DataError
from plmfair.stats import binomial_summary

AXES = ("protocol", "tie", "pairs")
ALL_PAIRS, AS_TESTED = "all pairs", "as tested"


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


def _estimate(scores: pd.DataFrame, *, tie: float | None, left_out: set[str], alpha: float) -> dict:
    """The decisive share of one specification: ``scores`` (one protocol's pair file), a pair neutral at its
    own tolerance or, with ``tie``, at the larger of it and ``tie``, the pairs ``left_out`` dropped."""
    scored = scores[scores["status"].isin(SCORED_STATUSES) & ~scores["pair_id"].astype(str).isin(left_out)]
    margin = scored["sent_more_score"] - scored["sent_less_score"]
    limit = scored["tolerance"] if tie is None else scored["tolerance"].clip(lower=tie)
    neutral = (margin.abs() <= limit) | scored["undecided"].astype(bool)
    decisive = margin[~neutral]
    biased = int((decisive > 0).sum())
    test = binomial_summary(biased, len(decisive), confidence=1 - alpha, method="exact")
    verdict = "no preference"
    if len(decisive) and test.p_value < alpha:
        verdict = "stereotypical" if test.proportion > 0.5 else "anti-stereotypical"
    return {
        "n_scored": len(scored),
        "n_decisive": len(decisive),
        "n_biased": biased,
        "estimate": 100 * test.proportion,
        "ci_low": 100 * test.ci_low,
        "ci_high": 100 * test.ci_high,
        "p_value": test.p_value,
        "verdict": verdict,
    }


def specifications(
    by_protocol: Mapping[str, pd.DataFrame],
    *,
    protocol: str,
    ties: Sequence[float],
    exclusions: pd.DataFrame | None,
    exclusions_name: str,
    dataset: str,
    alpha: float,
    max_grid: int,
) -> pd.DataFrame:
    """Every specification of one model on one data set (:data:`SPECIFICATIONS_SCHEMA` without its names):
    ``by_protocol`` the per-pair scores under each protocol scored (``protocol`` the run's own first),
    ``ties`` the coarser tie margins, ``exclusions`` the exclusion table (None: no such axis)."""
    left_out = excluded_pairs(exclusions, dataset)
    values: dict[str, list] = {
        "protocol": [protocol, *[p for p in by_protocol if p != protocol]],
        "tie": [AS_TESTED, *ties],
        "pairs": [ALL_PAIRS, *([f"without {exclusions_name}"] if exclusions is not None else [])],
    }
    own = {axis: choices[0] for axis, choices in values.items()}
    grid = 1
    for choices in values.values():
        grid *= len(choices)
    if grid <= max_grid:
        chosen = [dict(zip(AXES, combo, strict=True)) for combo in product(*values.values())]
    else:
        chosen = [own] + [{**own, axis: v} for axis, choices in values.items() for v in choices[1:]]
    rows = []
    for choice in chosen:
        estimate = _estimate(
            by_protocol[choice["protocol"]],
            tie=None if choice["tie"] == AS_TESTED else float(choice["tie"]),
            left_out=left_out if choice["pairs"] != ALL_PAIRS else set(),
            alpha=alpha,
        )
        rows.append(
            {
                "specification": "; ".join(f"{axis}={choice[axis]}" for axis in AXES),
                "changed": ", ".join(axis for axis in AXES if choice[axis] != own[axis]),
                **{axis: str(choice[axis]) for axis in AXES},
                "default": choice == own,
                **estimate,
            }
        )
    out = pd.DataFrame(rows)
    out["holds"] = out["verdict"] == out.loc[out["default"], "verdict"].iloc[0]
    out.attrs["design"] = "grid" if grid <= max_grid else "one axis at a time"
    return out


def _simplest_first(specs: pd.DataFrame) -> pd.DataFrame:
    """Specifications ordered by how many choices they change, fewest first (a flip one choice makes leads)."""
    return specs.assign(_n=specs["changed"].str.count(",") + (specs["changed"] != "")).sort_values("_n", kind="stable")


def _changed_choices(row: pd.Series) -> str:
    """A specification as the choices it changes (``protocol=aul; tie=0.01``)."""
    return "; ".join(f"{axis}={row[axis]}" for axis in row["changed"].split(", ") if axis)


def robustness(
    runs: Sequence[Mapping],
    *,
    langs: Mapping[str, str],
    ties: Sequence[float],
    exclusions: str | Path | None,
    alpha: float,
    max_grid: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every model and data set's specifications (:data:`SPECIFICATIONS_SCHEMA`) and its verdict's
    robustness (:data:`ROBUSTNESS_SCHEMA`). ``runs``: one record per (dataset, model) with its ``protocol``
    and ``scores`` (protocol -> per-pair scores, the run's own protocol among them)."""
    table = read_exclusions(exclusions) if exclusions else None
    name = Path(exclusions).name if exclusions else ""
    frames, summary = [], []
    for run in runs:
        dataset, model = run["dataset"], run["model"]
        specs = specifications(
            run["scores"],
            protocol=run["protocol"],
            ties=ties,
            exclusions=table,
            exclusions_name=name,
            dataset=dataset,
            alpha=alpha,
            max_grid=max_grid,
        )
        names = {"dataset": dataset, "lang": langs[dataset], "model": model}
        frames.append(specs.assign(**names))
        own = specs[specs["default"]].iloc[0]
        change = (specs["estimate"] - own["estimate"]).abs()
        largest = specs.loc[change.idxmax()] if change.notna().any() else own
        summary.append(
            {
                **names,
                "design": specs.attrs["design"],
                **{key: own[key] for key in ("estimate", "ci_low", "ci_high", "verdict")},
                "specifications": len(specs),
                "holding": int(specs["holds"].sum()),
                "robust": bool(specs["holds"].all()),
                "flipped_by": " | ".join(
                    _changed_choices(r) for _, r in _simplest_first(specs[~specs["holds"]]).iterrows()
                ),
                "largest_change": float(change.max()) if change.notna().any() else float("nan"),
                "largest_change_by": _changed_choices(largest),
            }
        )
    specs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(SPECIFICATIONS_SCHEMA))
    return specs[list(SPECIFICATIONS_SCHEMA)], pd.DataFrame(summary, columns=list(ROBUSTNESS_SCHEMA))
