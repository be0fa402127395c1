"""Whether a cloze set's verdict on its annotator groups survives the ruler: the primary question (do the four
groups differ, sigma_gd of the primary metric with the languages pooled, by its permutation test) answered again
under every other metric the group tests test, and with each annotator left out in turn.

One choice changes at a time: each other metric with every annotator, then the primary metric without each
annotator. The verdict is the test's at the run's level, unadjusted (a sensitivity analysis of the primary
question, not more questions; docs/statistics.md, "Robustness"). Besides whether any choice flips it, the
summary names the annotator whose removal moves sigma_gd most: a disparity one annotator drives is a finding
about that annotator, not about the group."""

from __future__ import annotations

import pandas as pd

from plmfair.cloze.group_tests import pooled_disparity
from plmfair.cloze.measures import LABELS, PRIMARY
from plmfair.cloze.schemas import CLOZE_ROBUSTNESS_SCHEMA, CLOZE_SPECIFICATIONS_SCHEMA, DIFFER, NOT_SHOWN


def _verdicts(frame: pd.DataFrame) -> pd.Series:
    return frame["differ"].map({True: DIFFER, False: NOT_SHOWN})


def cloze_robustness(
    scores: pd.DataFrame, *, alpha: float, permutations: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every specification of every model (:data:`CLOZE_SPECIFICATIONS_SCHEMA`) and each verdict's robustness
    (:data:`CLOZE_ROBUSTNESS_SCHEMA`), from a cloze set's annotation scores (``annotation_scores.parquet``)."""
    key = scores["lang"].astype(str) + ":" + scores["u_id"].astype(str)  # an annotator: language:id
    annotators = list(dict.fromkeys(key))
    primary = PRIMARY.column

    def disparity(frame: pd.DataFrame, metrics=None) -> pd.DataFrame:
        return pooled_disparity(frame, alpha=alpha, permutations=permutations, seed=seed, metrics=metrics)

    full = disparity(scores).assign(left_out="")
    frames = [full.assign(changed=["" if m == primary else "metric" for m in full["metric"]])]
    for annotator in annotators:
        without = disparity(scores[key != annotator], metrics=[primary])
        frames.append(without.assign(left_out=annotator, changed="annotator"))
    specs = pd.concat(frames, ignore_index=True)
    specs["verdict"] = _verdicts(specs)
    own = specs[specs["changed"] == ""].set_index("model")
    specs["holds"] = specs["verdict"] == specs["model"].map(own["verdict"])
    rows = []
    for model, part in specs.groupby("model", sort=False):
        base = own.loc[model]
        removed = part[part["changed"] == "annotator"]
        change = removed["sigma_gd"] - base["sigma_gd"]
        top = removed.loc[change.abs().idxmax()] if len(removed) else None
        flips = part[~part["holds"]]
        rows.append(
            {
                "model": model,
                "metric": primary,
                "sigma_gd": base["sigma_gd"],
                "p_value": base["p_value"],
                "verdict": base["verdict"],
                "specifications": len(part),
                "holding": int(part["holds"].sum()),
                "robust": bool(part["holds"].all()),
                "flipped_by": " | ".join(
                    f"metric={LABELS[r['metric']]}" if r["changed"] == "metric" else f"without {r['left_out']}"
                    for _, r in flips.iterrows()
                ),
                "most_influential": "" if top is None else top["left_out"],
                "largest_change": float("nan") if top is None else float(top["sigma_gd"] - base["sigma_gd"]),
                "annotator_flips": bool((~removed["holds"]).any()),
            }
        )
    return specs[list(CLOZE_SPECIFICATIONS_SCHEMA)], pd.DataFrame(rows, columns=list(CLOZE_ROBUSTNESS_SCHEMA))
