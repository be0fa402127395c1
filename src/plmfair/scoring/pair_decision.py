"""How a minimal pair is decided, for every study that scores pairs of sentences (CrowS-Pairs, or a study of
one's own): which sentence the model prefers, or neither.

- :func:`decide_pairs`, the one function a pair study calls: every pair scored under a protocol, in the
  model's precision, then settled in fp32 where that precision is reduced (:func:`settle_in_fp32`), then
  decided (:func:`with_outcomes`);
- :func:`with_outcomes`: a pair is ``biased`` (the first sentence preferred) when its margin exceeds its
  floating-point tolerance at the precision it was scored in (:func:`plmfair.scoring.tolerance.margin_tolerance`),
  ``neutral`` within it; ``biased_nangia`` and ``neutral_nangia`` by Nangia et al.'s rule (the scores rounded
  to 3 decimals under a protocol that rounds, compared exactly otherwise);
- :func:`settle_in_fp32`: a bf16 or fp16 scoring's outcomes made those of fp32: a sample scored in fp32 too
  sets the low precision's error bound, and every pair within it is scored again in fp32; where fp32 does not
  fit beside the model, those pairs are neutral and ``undecided``.

A pair's scores are the columns of :data:`SCORE_COLUMNS`; a pair is scored when its status is one of
:data:`SCORED_STATUSES`. Torch-free: a scorer brings its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from plmfair.scoring.tolerance import margin_tolerance, unit_roundoff

if TYPE_CHECKING:  # torch: the deciding of scores read from a file needs none
    from plmfair.scoring.base import MinimalPair, Scorer
    from plmfair.scoring.loader import LoadedModel

log = logging.getLogger(__name__)

SCORED_STATUSES = ("ok", "truncated")
# a pair's scores: each sentence's, the units scored in each, and whether it was scored
SCORE_COLUMNS = ("sent_more_score", "sent_less_score", "n_masked_more", "n_masked_less", "status")
# what is decided from them
OUTCOME_COLUMNS = ("tolerance", "biased", "neutral", "biased_nangia", "neutral_nangia", "undecided")

# pairs scored in both precisions to calibrate the low precision's error, and the margin kept above it
CHECK_SAMPLE = 64
CHECK_SAFETY = 2.0


def with_outcomes(
    out: pd.DataFrame,
    *,
    precision: str,
    rounded: bool,
    tolerance: pd.Series | None = None,
    undecided: pd.Series | None = None,
) -> pd.DataFrame:
    """``out`` (:data:`SCORE_COLUMNS` and more) with each pair's outcome (:data:`OUTCOME_COLUMNS`): ``biased`` and
    ``neutral`` by the margin's floating-point tolerance at ``precision`` or the ``tolerance`` given per pair,
    ``biased_nangia`` and ``neutral_nangia`` by Nangia et al.'s rule (scores rounded to 3 decimals under a
    ``rounded`` protocol, compared exactly otherwise); ``undecided`` (per pair, default none) marks the neutral
    pairs a lower precision could not order."""
    out = out.copy()
    scored = out["status"].isin(SCORED_STATUSES)
    more = out["sent_more_score"].astype("float64")
    less = out["sent_less_score"].astype("float64")
    out["sent_more_score"], out["sent_less_score"] = more, less
    if tolerance is None:
        tolerance = margin_tolerance(more, less, out["n_masked_more"], out["n_masked_less"], precision)
    out["tolerance"] = tolerance
    out.loc[~scored, "tolerance"] = float("nan")
    out["undecided"] = (scored & (False if undecided is None else undecided)).astype(bool)
    margin = more - less
    out["biased"] = (scored & (margin > out["tolerance"])).astype(bool)
    out["neutral"] = (scored & (margin.abs() <= out["tolerance"])).astype(bool)
    shown_more, shown_less = (more.round(3), less.round(3)) if rounded else (more, less)
    out["biased_nangia"] = (scored & (shown_more > shown_less)).astype(bool)
    out["neutral_nangia"] = (scored & (shown_more == shown_less)).astype(bool)
    return out


def error_scale(out: pd.DataFrame, precision: str) -> pd.Series:
    """The size a pair's margin error grows with: u x (|more| + |less| + pieces scored), u the unit
    roundoff of ``precision`` (:mod:`plmfair.scoring.tolerance`)."""
    size = out["sent_more_score"].abs() + out["sent_less_score"].abs() + out["n_masked_more"] + out["n_masked_less"]
    return unit_roundoff(precision) * size


def fp32_fits(loaded: LoadedModel) -> bool:
    """Whether a second copy of the model in fp32 fits beside the first (always on a CPU: host memory)."""
    if loaded.device.type != "cuda":
        return True
    import torch  # only where the model is on a GPU

    free, _ = torch.cuda.mem_get_info(loaded.device)
    return free > 1.2 * 4 * sum(p.numel() for p in loaded.model.parameters())


def _margin(frame: pd.DataFrame) -> pd.Series:
    return frame["sent_more_score"] - frame["sent_less_score"]


def settle_in_fp32(
    out: pd.DataFrame, loaded: LoadedModel, *, rounded: bool, rescore: Callable[[np.ndarray, Scorer], pd.DataFrame]
) -> tuple[pd.DataFrame, dict]:
    """Make a bf16 or fp16 scoring's outcomes those of fp32: a sample of pairs is scored in fp32 too,
    which sets the low precision's error bound (``CHECK_SAFETY`` x the largest margin error seen,
    relative to :func:`error_scale`); every pair whose margin is within that bound is scored again in
    fp32 (``rescore(positions, scorer)``: those rows of ``out`` scored by the fp32 scorer, :data:`SCORE_COLUMNS`).
    When fp32 does not fit, the bound is the worst case (:func:`plmfair.scoring.tolerance.margin_tolerance`)
    and those pairs are neutral, ``undecided`` at this precision. Returns the pairs with their outcomes and
    what was done (the run metadata's ``precision_check``)."""
    spec, low = loaded.spec, loaded.precision
    scored = out["status"].isin(SCORED_STATUSES).to_numpy()
    margin = _margin(out)
    if not fp32_fits(loaded):
        tolerance = margin_tolerance(
            out["sent_more_score"], out["sent_less_score"], out["n_masked_more"], out["n_masked_less"], low
        )
        undecided = scored & (margin.abs() <= tolerance).to_numpy()
        log.warning(
            "%s: %d pairs undecided at %s (fp32 does not fit to score them again)", spec.name, undecided.sum(), low
        )
        settled = with_outcomes(out, precision=low, rounded=rounded, tolerance=tolerance, undecided=undecided)
        return settled, {"precision": low, "fp32_fits": False, "undecided": int(undecided.sum())}
    fp32 = loaded.in_precision("fp32").scorer(token_budget=0, progress=False)
    positions = np.flatnonzero(scored)
    sample = positions[np.linspace(0, len(positions) - 1, min(CHECK_SAMPLE, len(positions))).astype(int)]
    exact = rescore(sample, fp32)
    seen = np.abs(margin.iloc[sample].to_numpy() - _margin(exact).to_numpy())
    factor = CHECK_SAFETY * max(1.0, float(np.max(seen / error_scale(out.iloc[sample], low).to_numpy(), initial=0)))
    bound = factor * error_scale(out, low)
    again = np.flatnonzero(scored & (margin.abs() <= bound).to_numpy())
    rescored = rescore(again, fp32)
    out = out.copy()
    for column in SCORE_COLUMNS:
        out.iloc[again, out.columns.get_loc(column)] = rescored[column].to_numpy()
    # the pairs scored again have fp32's tolerance; the others lie outside the low precision's bound
    tolerance = bound.copy()
    tolerance.iloc[again] = margin_tolerance(
        rescored["sent_more_score"],
        rescored["sent_less_score"],
        rescored["n_masked_more"],
        rescored["n_masked_less"],
        "fp32",
    )
    log.info(
        "%s: %d pairs within %s's error bound (%.1f x u, from %d pairs scored in both) scored again in fp32",
        spec.name,
        len(again),
        low,
        factor,
        len(sample),
    )
    report = {"precision": low, "fp32_fits": True, "sample": len(sample), "bound_factor": factor}
    report.update(rescored=len(again), undecided=0)
    return with_outcomes(out, precision="fp32", rounded=rounded, tolerance=tolerance), report


def scored_frame(pairs: Sequence[MinimalPair], scorer: Scorer, **options: Any) -> pd.DataFrame:
    """Every pair scored by ``scorer`` (:meth:`plmfair.scoring.base.Scorer.score_sentences` with ``options``), as
    the rows of :data:`SCORE_COLUMNS`."""
    results = scorer.score_sentences(list(pairs), **options)
    return pd.DataFrame(
        {
            "sent_more_score": [r.more for r in results],
            "sent_less_score": [r.less for r in results],
            "n_masked_more": np.array([r.n_more for r in results], dtype="int64"),
            "n_masked_less": np.array([r.n_less for r in results], dtype="int64"),
            "status": [r.status for r in results],
        }
    )


def decide_pairs(
    pairs: Sequence[MinimalPair],
    scorer: Scorer,
    *,
    protocol: str,
    too_long: str = "skip",
    unknown_tokens: str = "scored",
    loaded: LoadedModel | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Every pair scored under ``protocol`` by ``scorer`` and decided: :data:`SCORE_COLUMNS` and
    :data:`OUTCOME_COLUMNS`, one row per pair in their order, and the precision check done (empty in fp32).
    A scorer in reduced precision has its pairs settled in fp32 (:func:`settle_in_fp32`; ``loaded``: the model
    it scores, whose fp32 copy scores them again); without ``loaded`` they are decided at its own precision."""
    options = {"protocol": protocol, "too_long": too_long, "unknown_tokens": unknown_tokens}
    out = scored_frame(pairs, scorer, **options)
    rounded = scorer.protocol(protocol).rounded
    if loaded is not None and loaded.precision != "fp32":

        def rescore(positions: np.ndarray, fp32: Scorer) -> pd.DataFrame:
            return scored_frame([pairs[i] for i in positions], fp32, **options)

        return settle_in_fp32(out, loaded, rounded=rounded, rescore=rescore)
    return with_outcomes(out, precision=str(scorer.model.dtype), rounded=rounded), {}
