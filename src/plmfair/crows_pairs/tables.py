"""CrowS-Pairs tables for people: Tables 4 and 5 of Névéol et al. (2022) and the decisive-pair tests;
rendered by :func:`plmfair.rendering.table_format.render_table`."""

from __future__ import annotations

import pandas as pd

from plmfair.crows_pairs.reader import BIAS_TYPES
from plmfair.crows_pairs.schemas import CHANGES, CLUSTER_TEST, OUTCOMES
from plmfair.rendering.marks import add_decisions
from plmfair.rendering.numbers import number
from plmfair.rendering.table_format import (
    held_to,
    shortened,
    verdict_columns,
    with_coverage_warnings,
    with_display,
    with_layout,
)

ROW_LABELS = {"metric": "Metric score", "stereo": "Stereo score", "antistereo": "Anti-stereo score"}


def _cell(row: pd.Series) -> str:
    """Nangia et al.'s score as the paper prints it, on its side of 50: no mark (the test is about the
    decisive pairs, :func:`crows_pairs_tests_table`)."""
    return number(row["score"], 2, keep=(50,))


def _share(count: float, total: float) -> str:
    """A count and its share of ``total``: ``454 (27.1%)``."""
    return f"{int(count)} ({number(100 * count / total, 1, keep=(0, 100))}%)" if total else ""


def _neutral(row: pd.Series) -> str:
    """Pairs neutral under Nangia et al.'s rule, count and share of the scored pairs (Table 4's count)."""
    return _share(row["n_neutral_nangia"], row["n_scored"])


def mm_ss(seconds: float) -> str:
    """A duration as the paper prints run times: minutes and seconds, ``13:05``."""
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes:02d}:{secs:02d}"


def table4(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 4 of Névéol et al. (2022): rows metric/stereo/anti-stereo score, run time (mm:ss),
    pairs skipped, then each bias type; per data set an ``n`` column (the pairs actually scored) and
    a ``%`` column (that n as a share of every pair of the data set), as the paper counts them
    (French stereo: 1,462, 87.2% of 1,677), then per model its score and, beside it, the row's
    neutral pairs (count and share of the scored pairs; a direction score leaves them out). Scores
    carry no mark: the tests are in :func:`crows_pairs_tests_table`, beside the interval they agree
    with. The paper's ``DCF`` row is not defined in its text and is left out."""
    datasets = list(dict.fromkeys(summary["dataset"]))
    row_keys = [
        ("overall", "metric"),
        ("direction", "stereo"),
        ("direction", "antistereo"),
        ("runtime", ""),
        ("skipped", ""),
        ("unknown", ""),
    ]
    present = set(summary.loc[summary["subset_kind"] == "bias_type", "subset"])
    row_keys += [("bias_type", bt) for bt in BIAS_TYPES if bt in present]
    labels = {"runtime": "Run time (mm:ss)", "skipped": "Pairs skipped", "unknown": "Unknown pieces (%)"}
    table: dict[str, list] = {"": [labels.get(k, ROW_LABELS.get(s, s)) for k, s in row_keys]}
    for ds in datasets:
        sub = summary[summary["dataset"] == ds]
        first = sub[sub["model"] == sub["model"].iloc[0]].set_index(["subset_kind", "subset"])
        total = first.loc[("overall", "metric"), "n_pairs"]
        sizes = [
            None if k in labels or (k, s) not in first.index else int(first.loc[(k, s), "n_scored"])
            for k, s in row_keys
        ]
        table[f"{ds} n"] = ["" if n is None else n for n in sizes]
        table[f"{ds} %"] = ["" if n is None else number(100 * n / total, 1, keep=(0, 100)) for n in sizes]
        for model in dict.fromkeys(sub["model"]):
            m = sub[sub["model"] == model].set_index(["subset_kind", "subset"])
            col, neutral = [], []
            for k, s in row_keys:
                if k == "runtime":
                    col.append(mm_ss(m["wall_time_s"].iloc[0]))
                elif k == "skipped":
                    col.append(str(int(m.loc[("overall", "metric"), "n_skipped"])))
                elif k == "unknown":
                    col.append(_unknown(m.iloc[0]))
                else:
                    col.append(_cell(m.loc[(k, s)]) if (k, s) in m.index else "")
                neutral.append(_neutral(m.loc[(k, s)]) if (k, s) in m.index else "")
            table[f"{ds} {model}"] = col
            table[f"{ds} {model} neutral"] = neutral
    return with_layout(with_coverage_warnings(_scores(summary), summary), pd.DataFrame(table))


def _scores(summary: pd.DataFrame) -> pd.DataFrame:
    """Nangia et al.'s scores as numbers, a row per data set, model and subset: what the paper's tables lay
    out (the CSV of Tables 4 and 5)."""
    first = summary.groupby("dataset", sort=False)["n_pairs"].transform("first")
    overall = summary[summary["subset_kind"] == "overall"].set_index(["dataset", "model"])
    run = overall.reindex(pd.MultiIndex.from_frame(summary[["dataset", "model"]]))
    return pd.DataFrame(
        {
            "dataset": summary["dataset"],
            "model": summary["model"],
            "kind": summary["subset_kind"],
            "subset": summary["subset"],
            "scored": summary["n_scored"],
            "% of the data set's pairs": 100 * summary["n_scored"] / first,
            "score (Nangia)": summary["score"],
            "neutral (Nangia)": summary["n_neutral_nangia"],
            "neutral %": 100 * summary["n_neutral_nangia"] / summary["n_scored"].where(summary["n_scored"] > 0),
            "run time (s)": run["wall_time_s"].to_numpy(),
            "pairs skipped": run["n_skipped"].to_numpy(),
            "unknown pieces %": 100 * run["unknown_share"].to_numpy(dtype=float),
        }
    ).reset_index(drop=True)


def _unknown(row: pd.Series) -> str:
    """A run's share of unknown pieces, ``0.4``, with ``(!)`` when it carries a coverage warning."""
    share = row.get("unknown_share")
    if share is None or pd.isna(share):
        return ""
    return number(100 * share, 1, keep=(0,)) + (" (!)" if row.get("coverage_warning") else "")


def table5(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 5 of Névéol et al. (2022): metric score on native vs translated pairs, per data set and
    model (unmarked, as Table 4), each with its neutral pairs beside it (data sets with both origins)."""
    sub = summary[summary["subset_kind"] == "origin"]
    rows = []
    for (ds, origin), g in sub.groupby(["dataset", "subset"], sort=False):
        row = {"dataset": ds, "pairs": origin, "n": str(int(g["n_scored"].iloc[0]))}
        for _, r in g.iterrows():
            row[r["model"]] = _cell(r)
            row[f"{r['model']} neutral"] = _neutral(r)
        rows.append(row)
    numbers = _scores(summary).loc[(summary["subset_kind"] == "origin").to_numpy()].reset_index(drop=True)
    return with_layout(with_coverage_warnings(numbers, sub), pd.DataFrame(rows).fillna(""))


def crows_pairs_tests_table(summary: pd.DataFrame, hypotheses: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """Per data set, model and subset: pairs scored, neutral pairs (margin within its floating-point
    tolerance), Nangia et al.'s score (unmarked), the decisive-pair share with the interval that inverts its
    test (the exact sign test; the cluster score test on the overall row where the source groups its pairs),
    the net preference with Tango's interval, and the decision on the run's hypotheses
    decision on the test (:mod:`plmfair.rendering.marks`): the adjusted p, marked where significant; an
    untestable row has no interval and says why."""
    out = (
        summary[["dataset", "model", "subset_kind", "subset", "n_scored", "n_neutral", "n_undecided"]]
        .rename(columns={"subset_kind": "kind", "n_scored": "scored", "n_neutral": "neutral"})
        .copy()
    )
    out["neutral %"] = 100 * summary["n_neutral"] / summary["n_scored"].where(summary["n_scored"] > 0)
    out = out.rename(columns={"n_undecided": "undecided at its precision"})
    out["score (Nangia)"] = summary["score"]
    out["decisive share"] = summary["decisive_score"]
    out["low"], out["high"] = summary["ci_low"], summary["ci_high"]
    out["net preference"] = summary["net_preference"]
    out["net_low"], out["net_high"] = summary["net_low"], summary["net_high"]
    out["p"] = summary["p_value"]
    out["test"] = summary["test"]
    marks = add_decisions(out, summary, hypotheses, untested=("low", "high", "net_low", "net_high"))
    out["unknown pieces %"] = 100 * summary["unknown_share"].astype(float)
    return with_display(
        with_coverage_warnings(out.reset_index(drop=True), summary),
        alpha=alpha,
        nulls={"score (Nangia)": 50.0, "decisive share": 50.0, "net preference": 0.0},
        intervals={
            f"interval ({number(100 * (1 - alpha), 0)}%)": ("low", "high", 50.0),
            "net interval (Tango)": ("net_low", "net_high", 0.0),
        },
        marks=marks,
    )


def directions_table(summary: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """Per data set and model: the stereo and anti-stereo decisive shares, their direction-balanced
    mean with its 95% interval, and Fisher's exact test of the two shares (unadjusted)."""
    overall = summary[summary["subset_kind"] == "overall"].set_index(["dataset", "model"])
    directions = summary[summary["subset_kind"] == "direction"].pivot(
        index=["dataset", "model"], columns="subset", values="decisive_score"
    )
    out = overall[[]].copy()
    for direction in ("stereo", "antistereo"):
        out[f"{direction} share"] = directions.get(direction)
    out["balanced share"] = overall["balanced_score"]
    out["low"], out["high"] = overall["balanced_low"], overall["balanced_high"]
    out["p (stereo vs anti-stereo)"] = overall["direction_p"]
    return with_display(
        out.reset_index(),
        alpha=alpha,
        nulls={"stereo share": 50.0, "antistereo share": 50.0, "balanced share": 50.0},
        intervals={"interval (95%)": ("low", "high", 50.0)},
    )


def robustness_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per data set and model: the decisive share under each pair's tolerance, under fixed tie
    margins (sensitivity), and, where the source groups its pairs and the test is the cluster score test, the
    sign test's Clopper-Pearson interval beside it: what taking the pairs as independent draws would claim."""
    overall = summary[summary["subset_kind"] == "overall"]
    out = overall[["dataset", "model", "n_scored", "n_neutral"]].rename(
        columns={"n_scored": "scored", "n_neutral": "neutral"}
    )
    out["neutral %"] = 100 * overall["n_neutral"] / overall["n_scored"].where(overall["n_scored"] > 0)
    out["decisive share"] = overall["decisive_score"]
    for name in ("0", "1e-3", "1e-2"):
        out[f"share, tie when abs. margin ≤ {name}"] = overall[f"decisive_score_at_{name}"]
    out["clusters"] = overall["n_clusters"]
    clustered = overall["test"] == CLUSTER_TEST
    out["low"], out["high"] = overall["sign_low"].where(clustered), overall["sign_high"].where(clustered)
    return with_display(
        out.reset_index(drop=True),
        nulls={c: 50.0 for c in out.columns if "share" in c},
        intervals={"pairs as independent (sign test's interval)": ("low", "high", 50.0)},
    )


def changes_table(changes: pd.DataFrame, hypotheses: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """Two scorings of the same pairs compared (:data:`plmfair.crows_pairs.changes.CHANGE_SCHEMA`) for
    people, a row per comparison and change: the pairs, the 3 x 3 transitions (outcome under a -> under b:
    more, neutral or less stereotyping sentence preferred), the change with Tango's interval, its test's p
    and the decision on the run's hypotheses (``*`` where significant)."""
    rows = []
    for name, label in CHANGES.items():
        block = changes[["dataset", "a", "b", "n"]].rename(columns={"n": "pairs"}).copy()
        for x in OUTCOMES:
            for y in OUTCOMES:
                block[f"{x[0]}→{y[0]}"] = changes[f"{x}_to_{y}"]
        block["change of"] = label
        block["a value"], block["b value"] = changes[f"{name}_a"], changes[f"{name}_b"]
        block["change"] = changes[f"{name}_change"]
        block["low"], block["high"] = changes[f"{name}_low"], changes[f"{name}_high"]
        block["p"] = changes[f"{name}_p"]
        marks = add_decisions(block, changes, hypotheses, hypothesis=f"{name}_hypothesis", untested=("low", "high"))
        block["note"] = [
            "identical (no pair moved)" if same else text
            for same, text in zip(changes["identical"], block["note"], strict=True)
        ]
        block["order"] = range(len(block))
        rows.append(block)
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    if len(out):
        out = out.sort_values("order", kind="stable").drop(columns="order").reset_index(drop=True)
    return with_display(
        out,
        alpha=alpha,
        nulls={"change": 0.0},
        intervals={f"interval (Tango, {number(100 * (1 - alpha), 0)}%)": ("low", "high", 0.0)},
        marks=marks if rows else {},
    )


def verdicts_table(robustness: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """Per data set and model: the primary estimate with its interval and verdict, whether every scoring choice
    shows the verdict at the level the primary question is held to (robust: K, k and the choices short of it,
    :func:`plmfair.rendering.table_format.verdict_cells`), how many choices move the share beyond sampling
    noise and which, and the largest change of the estimate
    (:data:`plmfair.crows_pairs.schemas.ROBUSTNESS_SCHEMA`)."""
    out = robustness[["dataset", "model"]].copy()
    out["decisive share"] = robustness["estimate"]
    out["low"], out["high"] = robustness["ci_low"], robustness["ci_high"]
    out["verdict"] = robustness["verdict"]
    out["held to"] = [held_to(alpha, size) for size in robustness["family_size"]]
    cells = verdict_columns(robustness)
    out[list(cells.columns)] = cells
    out["p (all show it)"] = robustness["p_all"]
    out["differ beyond noise"] = robustness["differing"].astype(int)
    out["which (pp)"] = [shortened(d) for d in robustness["differs_by"]]
    out["p (some differs)"] = robustness["p_differs"]
    out["largest change (pp)"] = robustness["largest_change"]
    out["by"] = robustness["largest_change_by"]
    level = number(100 * (1 - alpha), 0)
    return with_display(
        out.reset_index(drop=True),
        alpha=alpha,
        nulls={"decisive share": 50.0},
        intervals={f"interval ({level}%)": ("low", "high", 50.0)},
    )


def ranking_table(ranking: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """Per data set: whether the scoring protocols rank the models alike, the interval of Kendall's W
    (:data:`plmfair.crows_pairs.schemas.RANKING_SCHEMA`), or why it is not computed. The interval only: the W
    of the measured shares falls well below a true W of 1 where the models are close, and takes any value
    where they are equal (make bench-stats, part ranking), so it is kept in the results file, not printed."""
    out = ranking[["dataset", "models", "protocols", "n_pairs"]].rename(columns={"n_pairs": "pairs"})
    out["low"], out["high"] = ranking["ci_low"], ranking["ci_high"]
    out["note"] = ranking["note"]
    level = number(100 * (1 - alpha), 0)
    return with_display(
        out.reset_index(drop=True),
        alpha=alpha,
        intervals={f"Kendall's W, interval ({level}%)": ("low", "high", float("nan"))},
    )
