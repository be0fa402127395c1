"""CrowS-Pairs tables for people: Tables 4 and 5 of Névéol et al. (2022) and the decisive-pair tests;
rendered by :func:`plmfair.rendering.table_format.render_table`."""

from __future__ import annotations

import pandas as pd

from plmfair.crows_pairs.reader import BIAS_TYPES
from plmfair.rendering.table_format import (
    interval_text,
    level_text,
    marked_p,
    with_coverage_warnings,
)

ROW_LABELS = {"metric": "Metric score", "stereo": "Stereo score", "antistereo": "Anti-stereo score"}


def _cell(row) -> str:
    """Nangia et al.'s score as the paper prints it: no mark (the test is about the decisive pairs,
    :func:`crows_pairs_tests_table`)."""
    return "" if pd.isna(row["score"]) else f"{row['score']:.2f}"


def _neutral(row) -> str:
    """Neutral pairs, count and share of the scored pairs: ``454 (27.1%)``."""
    return "" if pd.isna(row["neutral_share"]) else f"{int(row['n_neutral'])} ({row['neutral_share']:.1f}%)"


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
        table[f"{ds} %"] = ["" if n is None else f"{100 * n / total:.1f}" for n in sizes]
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
    return with_coverage_warnings(pd.DataFrame(table), summary)


def _unknown(row) -> str:
    """A run's share of unknown pieces, ``0.4``, with ``(!)`` when it carries a coverage warning."""
    share = row.get("unknown_share")
    if share is None or pd.isna(share):
        return ""
    return f"{100 * share:.1f}" + (" (!)" if row.get("coverage_warning") else "")


def table5(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 5 of Névéol et al. (2022): metric score on native vs translated pairs, per data set and
    model (unmarked, as Table 4), each with its neutral pairs beside it."""
    sub = summary[summary["subset_kind"] == "origin"]
    rows = []
    for (ds, origin), g in sub.groupby(["dataset", "subset"], sort=False):
        row = {"dataset": ds, "pairs": origin, "n": int(g["n_scored"].iloc[0])}
        for _, r in g.iterrows():
            row[r["model"]] = _cell(r)
            row[f"{r['model']} neutral"] = _neutral(r)
        rows.append(row)
    return with_coverage_warnings(pd.DataFrame(rows).fillna(""), sub)


def crows_pairs_tests_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per data set, model and subset: pairs scored, neutral pairs, Nangia et al.'s score, and the
    decisive-pair share with the interval and exact binomial test that belong to it (``*`` on the
    adjusted p exactly when the interval excludes 50%)."""
    out = (
        summary[["dataset", "model", "subset_kind", "subset", "n_scored"]]
        .rename(columns={"subset_kind": "kind", "n_scored": "scored"})
        .copy()
    )
    out["neutral"] = [_neutral(r) for _, r in summary.iterrows()]
    out["score (Nangia)"] = summary["score"]
    out["decisive share"] = summary["decisive_score"]
    out["interval"] = interval_text(summary["ci_low"], summary["ci_high"], digits=1)
    out["level"] = level_text(summary["ci_level"])
    out["p"] = summary["p_value"]
    out["p adjusted"] = marked_p(summary["p_adjusted"], summary["significant"])
    out["unknown pieces"] = [_unknown(r) for _, r in summary.iterrows()]
    return with_coverage_warnings(out.reset_index(drop=True), summary)
