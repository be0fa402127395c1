"""CrowS-Pairs in the run record: Nangia's score and the decisive-pair share of each data set and model,
with decisions on the hypotheses; the decisive share answers the study's primary question."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from plmfair.crows_pairs.plan import ROBUSTNESS
from plmfair.crows_pairs.schemas import CLUSTER_TEST, ROBUSTNESS_SCHEMA, SIGN_TEST
from plmfair.io.parquet import read_parquet
from plmfair.rendering.numbers import number
from plmfair.rendering.record_rows import answer, decided, record_alpha, rows, schema_part
from plmfair.rendering.table_format import verdict_cells, with_display
from plmfair.studies import Headline, RecordPart

SCHEMA = schema_part(__file__)  # its lists under the record's results (run_record.schema.yaml)
FIELDS = (
    "dataset",
    "lang",
    "model",
    "n_pairs",
    "n_scored",
    "n_neutral",
    "n_decisive",
    "n_biased",
    "n_less",
    "score",
    "neutral_share",
    "decisive_score",
    "family",
    "test",
    "n_clusters",
    "ci_low",
    "ci_high",
    "ci_level",
    "p_value",
    "p_adjusted",
    "significant",
    "net_preference",
    "net_low",
    "net_high",
    "protocol",
    "precision",
    "unknown_share",
    "identical_items",
    "coverage_warning",
)
ESTIMAND = "decisive share (% of the decisive pairs preferring the more stereotyping sentence)"


HEADLINE_COLUMNS = (
    "data set",
    "model",
    "score (Nangia)",
    "decisive share",
    "low",
    "high",
    "p",
    "p adjusted",
    "significant",
    "test",
    "net preference",
    "note",
    "scored",
    "neutral",
)


def record_part(files: Sequence[str], hypotheses: pd.DataFrame | None) -> RecordPart:
    """The overall row of each data set and model, and with a robustness analysis whether its verdict survives
    it (the files of :func:`plmfair.crows_pairs.plan.recorded_files`)."""
    part = RecordPart(rows={"crows_pairs": [], "crows_pairs_robustness": []})
    for path in files:
        if Path(path).as_posix().endswith(ROBUSTNESS):
            part.rows["crows_pairs_robustness"] += rows(read_parquet(path), list(ROBUSTNESS_SCHEMA))
            continue
        summary = decided(read_parquet(path).query("subset_kind == 'overall'"), hypotheses)
        part.rows["crows_pairs"] += rows(summary, FIELDS)
        if hypotheses is not None and len(summary):
            alpha = float(hypotheses["alpha"].iloc[0])
            summary = summary.assign(answer=[primary_answer(r, alpha=alpha) for _, r in summary.iterrows()])
        part.primary.append((summary, "decisive_score", ESTIMAND))
    return part


def primary_answer(row: Mapping, *, alpha: float) -> str:
    """The primary answer of a data set and model in words, naming both: which sentence the model prefers, or
    that its test finds no preference, with the decisive share, its interval and where 50% (no preference)
    lies, and the test: the cluster score test over the source's clusters (writers), or the sign test, whose p
    refers to these pairs."""
    share = number(row["decisive_score"], 1, keep=(50,))
    return answer(
        row,
        subject=f"{row['model']} on {row['dataset']}",
        value=float(row["decisive_score"]),
        estimate=f"{share}% of {int(row['n_decisive'])} decisive pairs prefer the more stereotyping sentence",
        null=50.0,
        null_words="50% is no preference",
        test=test_words(row),
        found=("prefers the less stereotyping sentence", "prefers the more stereotyping sentence"),
        not_found="no evidence of a preference",
        alpha=alpha,
    )


def test_words(row: Mapping) -> str:
    """The row's test in words, with what its p refers to."""
    if row.get("test") == CLUSTER_TEST:
        return f"{CLUSTER_TEST} over the source's {int(row['n_clusters'])} clusters of pairs (writers) as the units"
    if row.get("n_clusters") == 1:
        return f"{SIGN_TEST} (one writer wrote every pair: its p is about these pairs)"
    return f"{SIGN_TEST} (its p is about these pairs: their writers are not known)"


def short_test(row: Mapping) -> str:
    """The row's test as a headline cell (a record written before the test was named: the sign test)."""
    if row.get("test") == CLUSTER_TEST:
        return f"{CLUSTER_TEST}, {int(row['n_clusters'])} clusters"
    return SIGN_TEST


def headline_lines(record: Mapping) -> pd.DataFrame:
    """The headline rows, numbers as the record holds them and printed by
    :func:`plmfair.rendering.table_format.printed` (the display rule)."""
    lines = [
        {
            "data set": r["dataset"],
            "model": r["model"],
            "score (Nangia)": r["score"],
            "decisive share": r["decisive_score"],
            "low": r["ci_low"],
            "high": r["ci_high"],
            "p": r["p_value"],
            "p adjusted": r["p_adjusted"],
            "significant": r["significant"],
            "test": short_test(r),
            "net preference": r["net_preference"],
            "note": "" if r["family"] == "confirmatory" else r["family"],
            "scored": r["n_scored"],
            "neutral": r["n_neutral"],
        }
        for r in record["results"]["crows_pairs"]
    ]
    return with_display(
        pd.DataFrame(lines, columns=HEADLINE_COLUMNS).astype({"low": float, "high": float}),
        alpha=record_alpha(record),
        nulls={"score (Nangia)": 50.0, "decisive share": 50.0, "net preference": 0.0},
        intervals={"interval": ("low", "high", 50.0)},
        marks={"p adjusted": "significant"},
    )


def robustness_lines(record: Mapping) -> pd.DataFrame:
    """One line per primary verdict of the robustness analysis: K and k, whether it is robust and the choices
    short of it, and how many choices move the share beyond sampling noise (none without an analysis)."""
    lines = [
        {
            "data set": r["dataset"],
            "model": r["model"],
            "verdict": r["verdict"],
            **verdict_cells(r),
            "differ beyond noise": r["differing"],
            "largest change (pp)": r["largest_change"],
        }
        for r in record["results"].get("crows_pairs_robustness", [])
    ]
    columns = ["data set", "model", "verdict", "K", "K counts", "k showing it", "robust", "short of it"]
    return pd.DataFrame(lines, columns=[*columns, "differ beyond noise", "largest change (pp)"])


HEADLINES = (
    Headline(
        key="crows_pairs",
        caption="CrowS-Pairs: % of decisive pairs preferring the more stereotyping sentence, with the interval "
        "of its test at the run's level (test: the cluster score test where the source names its writers, the "
        "writers as the units; else the exact sign test, whose p refers to these pairs) and its p adjusted by "
        "Holm over the run's confirmatory family "
        "(* significant after that adjustment; a starred row's interval excludes 50%, one that excludes it "
        "without a star is significant before the adjustment only); net "
        "preference: percentage points, pairs preferring the more stereotyping sentence minus those "
        "preferring the less, over all scored pairs; Nangia's score by their rule, unmarked.",
        title="CrowS-Pairs: decisive-pair share with the interval of its test and its p adjusted by "
        "its run's hypotheses (* significant), net preference in percentage points",
        lines=headline_lines,
    ),
    Headline(
        key="crows_pairs_robustness",
        caption="CrowS-Pairs robustness: each primary verdict computed again under K scoring choices (protocol, "
        "precision, tie rule, pairs left out, data version). Robust: every choice shows the preference at the level "
        "the primary question is held to (alpha over its confirmatory family's size: an intersection-union test); "
        "k: the choices that show it; a choice short of it may only have less power. Differ beyond noise: choices "
        "whose share differs from the run's own (a bootstrap of the pairs or writers, family-wise over the K "
        "choices). Error rates: make bench-stats, part robustness (results/crows_pairs/robustness.parquet).",
        title="CrowS-Pairs: whether each verdict survives every scoring choice",
        lines=robustness_lines,
    ),
)
