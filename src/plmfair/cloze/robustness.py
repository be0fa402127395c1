"""Whether a cloze set's verdict on its annotator groups survives the ruler: the primary question (do the four
groups differ, sigma_gd of the primary metric with the languages pooled, by its permutation test) answered again
under every other metric the group tests test, and with each annotator left out in turn.

One choice changes at a time: each other metric with every annotator, then the primary metric without each
annotator. A verdict that the groups differ is *robust* when every specification shows it at the level the
primary question is held to in the run's confirmatory family (an intersection-union test, Bonferroni over that
family: :mod:`plmfair.multiplicity`; the removals count as specifications of one family, so no removal is
tested on its own). Beside it, the annotator whose removal moves sigma_gd most: a disparity one annotator
drives is a finding about that annotator, not about the group (docs/statistics.md, "Robustness")."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from plmfair.cloze.disparity import pooled_disparity
from plmfair.cloze.group_tests import hypothesis_id
from plmfair.cloze.measures import LABELS, PRIMARY
from plmfair.cloze.schemas import CLOZE_ROBUSTNESS_SCHEMA, CLOZE_SPECIFICATIONS_SCHEMA, DIFFER, NOT_SHOWN
from plmfair.multiplicity import family_level, intersection_union_p, primary_family_sizes


def _choice(row: pd.Series) -> str:
    return f"metric={LABELS[row['metric']]}" if row["changed"] == "metric" else f"without {row['left_out']}"


def cloze_robustness(
    scores: pd.DataFrame,
    *,
    alpha: float,
    permutations: int,
    seed: int,
    cloze_set: str = "",
    hypotheses: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every specification of every model (:data:`CLOZE_SPECIFICATIONS_SCHEMA`) and each verdict's robustness
    (:data:`CLOZE_ROBUSTNESS_SCHEMA`), from a cloze set's annotation scores (``annotation_scores.parquet``);
    ``hypotheses``: the run's hypotheses, whose confirmatory family sets the level a robust claim is held to."""
    key = scores["lang"].astype(str) + ":" + scores["u_id"].astype(str)  # an annotator: language:id
    annotators = list(dict.fromkeys(key))
    primary = PRIMARY.column

    def disparity(frame: pd.DataFrame, metrics: Sequence[str] | None = None) -> pd.DataFrame:
        return pooled_disparity(frame, alpha=alpha, permutations=permutations, seed=seed, metrics=metrics)

    full = disparity(scores).assign(left_out="")
    frames = [full.assign(changed=["" if m == primary else "metric" for m in full["metric"]])]
    for annotator in annotators:
        without = disparity(scores[key != annotator], metrics=[primary])
        frames.append(without.assign(left_out=annotator, changed="annotator"))
    specs = pd.concat(frames, ignore_index=True)
    specs["verdict"] = specs["differ"].map({True: DIFFER, False: NOT_SHOWN})
    own = specs[specs["changed"] == ""].set_index("model")
    ids = {m: hypothesis_id(cloze_set, "group_disparity", m, "all", primary) for m in own.index}
    families = primary_family_sizes(hypotheses, list(ids.values()))
    levels = {m: family_level(alpha, families[h]) for m, h in ids.items()}
    level = specs["model"].map(levels)
    differ = specs["model"].map(own["verdict"]) == DIFFER
    reaches = specs["differ"] & (specs["p_value"] < level)
    specs["holds"] = reaches.where(differ, ~reaches)
    rows = []
    for model, part in specs.groupby("model", sort=False):
        base = own.loc[model]
        removed = part[part["changed"] == "annotator"]
        change = removed["sigma_gd"] - base["sigma_gd"]
        top = removed.loc[change.abs().idxmax()] if len(removed) else None
        claim = base["verdict"] == DIFFER
        p_all = intersection_union_p(part["p_value"], [True] * len(part)) if claim else float("nan")
        others = int((part["changed"] == "metric").sum())
        rows.append(
            {
                "model": model,
                "metric": primary,
                "sigma_gd": base["sigma_gd"],
                "p_value": base["p_value"],
                "verdict": base["verdict"],
                "specifications": len(part),
                "counted": f"1 + {others} other metrics + {len(removed)} annotators left out",
                "family_size": families[ids[model]],
                "level": levels[model],
                "holding": int(part["holds"].sum()),
                "p_all": p_all,
                "robust": bool(claim and p_all < levels[model]),
                "short_of": " | ".join(_choice(r) for _, r in part[~part["holds"]].iterrows()),
                "removals_short": int((~removed["holds"]).sum()),
                "most_influential": "" if top is None else top["left_out"],
                "largest_change": float("nan") if top is None else float(top["sigma_gd"] - base["sigma_gd"]),
            }
        )
    return specs[list(CLOZE_SPECIFICATIONS_SCHEMA)], pd.DataFrame(rows, columns=list(CLOZE_ROBUSTNESS_SCHEMA))
