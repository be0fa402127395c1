"""Cloze sets in the run record: P@1, P@5 and MRR per set, model, language and group; sigma_gd with its
interval and test; the omnibus test; each with decisions on the hypotheses. sigma_gd of MRR, languages
pooled, answers the primary question of a set with answers."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pandas as pd

from plmfair.cloze.annotations import GROUPS
from plmfair.cloze.measures import COLUMNS, LABELS, METRICS, PRIMARY
from plmfair.cloze.schemas import CLOZE_ROBUSTNESS_SCHEMA, read_metrics
from plmfair.io.parquet import read_parquet
from plmfair.rendering.labels import GROUP_NAMES
from plmfair.rendering.marks import TESTED
from plmfair.rendering.numbers import compared, number
from plmfair.rendering.record_rows import answer, decided, record_alpha, rows, schema_part
from plmfair.rendering.table_format import verdict_cells, with_display
from plmfair.studies import Headline, RecordPart

SCHEMA = schema_part(__file__)  # its lists under the record's results (run_record.schema.yaml)
# with a field for each metric (plmfair.cloze.measures)
SCHEMA["cloze"]["items"]["required"] += list(COLUMNS)
SCHEMA["cloze"]["items"]["properties"].update(
    {m.column: {"$ref": "#/$defs/number", "description": m.description} for m in METRICS}
)
SCHEMA["disparity"]["items"]["properties"]["metric"] = {"enum": list(COLUMNS)}
MRR = PRIMARY.label  # the primary metric, whose disparity the headline shows
EVERY_METRIC = ", ".join(LABELS.values())
CLOZE_FIELDS = (
    "model",
    "lang",
    "group",
    "n",
    *COLUMNS,
    "unknown_share",
    "identical_items",
    "coverage_warning",
)
DISPARITY_FIELDS = (
    "model",
    "lang",
    "metric",
    "sigma_gd",
    "ci_low",
    "ci_high",
    "ci_level",
    "null_mean",
    "debiased",
    "critical_value",
    "p_permutation",
    "family",
    "p_adjusted",
    "significant",
)
OMNIBUS_FIELDS = ("model", "lang", "metric", "statistic", "p_permutation", "family", "p_adjusted", "significant")
ESTIMAND = f"disparity sigma_gd of {MRR} across the four groups, languages pooled (percentage points; debiased)"


def record_part(files: Sequence[str], hypotheses: pd.DataFrame | None) -> RecordPart:
    """The rows of the files of :func:`plmfair.cloze.plan.recorded_files` (a set named by its folder)."""
    part = RecordPart(rows={key: [] for key in SCHEMA})
    for path in files:
        cloze_set, kind = Path(path).parent.name, Path(path).stem
        if kind == "metrics":
            part.rows["cloze"] += rows(read_metrics(path), CLOZE_FIELDS, set=cloze_set)
        elif kind == "robustness":
            part.rows["cloze_robustness"] += rows(read_parquet(path), list(CLOZE_ROBUSTNESS_SCHEMA), set=cloze_set)
        elif kind == "group_disparity":
            disparity = decided(read_parquet(path), hypotheses)
            part.rows["disparity"] += rows(disparity, DISPARITY_FIELDS, set=cloze_set)
            if hypotheses is not None and len(disparity):
                metrics = read_metrics(Path(path).with_name("metrics.parquet"))
                alpha = float(hypotheses["alpha"].iloc[0])
                disparity = disparity.assign(
                    answer=[primary_answer(r, metrics, cloze_set, alpha=alpha) for _, r in disparity.iterrows()]
                )
            part.primary.append((disparity, "debiased", ESTIMAND))
        else:
            tests = read_parquet(path)
            omnibus = tests[tests["test"] == "omnibus"].assign(ci_low=float("nan"), ci_high=float("nan"))
            part.rows["omnibus"] += rows(decided(omnibus, hypotheses), OMNIBUS_FIELDS, set=cloze_set)
    return part


def furthest_group(metrics: pd.DataFrame, model: str) -> str:
    """In words, the annotator group whose primary metric (its languages' values weighted by their annotations)
    lies furthest from the mean of the other three groups', for one model: descriptive, not a test."""
    rows = metrics[(metrics["model"] == model) & metrics["group"].isin(GROUPS)]
    weighted = rows.assign(total=rows[PRIMARY.column] * rows["n"]).groupby("group")[["total", "n"]].sum()
    values = (weighted["total"] / weighted["n"]).dropna()
    if len(values) < 2:
        return ""
    others = {g: values.drop(g).mean() for g in values.index}
    group = max(values.index, key=lambda g: (abs(values[g] - others[g]), g))
    mine, theirs = compared(values[group], others[group], 1)
    return f"; furthest from the others: {group} ({GROUP_NAMES[group]}), {MRR} {mine} against {theirs} (descriptive)"


def primary_answer(row: Mapping, metrics: pd.DataFrame, cloze_set: str, *, alpha: float) -> str:
    """The primary answer of a cloze set and model in words, naming both: whether the model serves the annotator
    groups differently, with the disparity, its interval and where 0 (no disparity) lies, and the group furthest
    from the others."""
    found = "serves the annotator groups differently"
    return answer(
        row,
        subject=f"{row['model']} on {cloze_set}",
        value=float(row["debiased"]),
        estimate=f"sigma_gd of {MRR} {number(row['debiased'], 2)} percentage points (debiased)",
        null=0.0,
        null_words="0 is no disparity",
        test="permutation test",
        found=(found, found),
        not_found="no evidence that it serves the annotator groups differently",
        alpha=alpha,
        digits=2,
    ) + furthest_group(metrics, row["model"])


def headline_rows(record: Mapping) -> Iterator[tuple[dict, dict]]:
    """Each row of all annotators with the primary metric's disparity (MRR's) of its set, model and language
    ({} without)."""
    disparity = {
        (d["set"], d["model"], d["lang"]): d for d in record["results"]["disparity"] if d["metric"] == PRIMARY.column
    }
    for r in record["results"]["cloze"]:
        if r["group"] == "all":
            yield r, disparity.get((r["set"], r["model"], r["lang"]), {})


def headline_lines(record: Mapping) -> pd.DataFrame:
    """The headline rows: all annotators' P@1, P@5 and MRR, and the MRR disparity against its critical
    value with the adjusted p of the run's hypotheses, printed by the display rule."""
    lines = []
    for r, d in headline_rows(record):
        lines.append(
            {
                "set": r["set"],
                "model": r["model"],
                "lang": r["lang"],
                **{m.label: r[m.column] for m in METRICS},
                f"σ_gd {MRR}": d.get("sigma_gd"),
                # an untested row (every score 0, say) has no threshold to print
                "critical value": d.get("critical_value") if d.get("family") in TESTED else None,
                "p adjusted": d.get("p_adjusted"),
                "significant": d.get("significant"),
                "note": "" if d.get("family") in (*TESTED, None) else d.get("family"),
            }
        )
    return with_display(
        pd.DataFrame(lines),
        alpha=record_alpha(record),
        thresholds={f"σ_gd {MRR}": "critical value"},
        marks={"p adjusted": "significant"},
    )


def robustness_lines(record: Mapping) -> pd.DataFrame:
    """One line per primary verdict of the robustness analysis: K and k, whether it is robust and the choices
    short of it, and the annotator whose removal moves sigma_gd most (none without an analysis)."""
    lines = [
        {
            "set": r["set"],
            "model": r["model"],
            "verdict": r["verdict"],
            **verdict_cells(r),
            "most influential annotator": r["most_influential"],
            f"its removal moves σ_gd {MRR} by": r["largest_change"],
        }
        for r in record["results"].get("cloze_robustness", [])
    ]
    return pd.DataFrame(lines)


HEADLINES = (
    Headline(
        key="cloze",
        caption=f"Cloze sets: all annotators' {EVERY_METRIC} (percent); σ_gd of {MRR} across the four groups "
        "(percentage points), the critical value it must exceed, and its p adjusted by the hypotheses "
        "(* groups differ; pooled: the primary question).",
        title=f"Cloze sets: all annotators' {EVERY_METRIC} (percent); σ_gd of {MRR} across the four groups "
        "(percentage points) against its critical value, with its p adjusted by its run's hypotheses "
        "(* groups differ)",
        lines=headline_lines,
    ),
    Headline(
        key="cloze_robustness",
        caption=f"Cloze robustness: each primary verdict (σ_gd of {MRR}, languages pooled) computed again with the "
        "other metrics and with each annotator left out (K specifications). Robust: every one shows the groups "
        "differing at the level the primary question is held to (alpha over its confirmatory family's size: an "
        "intersection-union test, the removals one family); k: those that show it; one short of it may only have "
        "less power. The annotator whose removal moves σ_gd most (make bench-stats, part robustness).",
        title="Cloze sets: whether each verdict survives the other metrics and each annotator's removal",
        lines=robustness_lines,
    ),
)
