"""The CrowS-Pairs scoring job (torch): every pair of a data set scored by one model.

A pair is scored when both sentences are present, non-empty, different and labelled (direction and
bias type known) and its id is not a repeat; otherwise it is kept with a ``skipped_*`` status
(:data:`STATUSES`) and counted. Output: ``results/crows_pairs/{dataset}/{model}.parquet``
(:data:`PAIR_SCHEMA`)."""

from __future__ import annotations

import logging
import unicodedata

import numpy as np
import pandas as pd
import torch

from plmfair.crows_pairs.schemas import OUTCOME_COLUMNS, PAIR_SCHEMA, SCORED_STATUSES, with_outcomes
from plmfair.scoring.base import MinimalPair, Scorer
from plmfair.scoring.coverage import (
    Coverage,
    unknown_id,
)
from plmfair.scoring.loader import LoadedModel, load
from plmfair.scoring.protocols import PROTOCOLS
from plmfair.scoring.specs import ModelSpec
from plmfair.scoring.tolerance import margin_tolerance, unit_roundoff

log = logging.getLogger(__name__)


def pair_status(pair) -> str:
    """``ok``, or why the pair cannot be scored."""
    more, less = pair["sent_more"], pair["sent_less"]
    if pd.isna(more) or pd.isna(less):
        return "skipped_missing"
    if not str(more).strip() or not str(less).strip():
        return "skipped_empty"
    if more == less:
        return "skipped_identical"
    if pd.isna(pair["stereo_antistereo"]) or pd.isna(pair["bias_type"]):
        return "skipped_unlabelled"
    if "duplicate_of" in pair and not pd.isna(pair["duplicate_of"]):
        return "skipped_duplicate"
    return "ok"


# characters a reader does not see and a tokenizer may drop: zero-width space, joiners, BOM
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))


def as_read(text: str, scorer: Scorer) -> str:
    """A sentence as the model reads it: NFC, invisible characters out, white space collapsed, and
    lower-cased for an uncased model (``scorer.prepare``); two sentences equal in this form are the
    same sentence to the model."""
    return scorer.prepare(" ".join(unicodedata.normalize("NFC", text).translate(_INVISIBLE).split()))


def score_pairs(
    pairs: pd.DataFrame,
    scorer: Scorer,
    *,
    protocol: str = "nangia",
    too_long: str = "skip",
    unknown_tokens: str = "scored",
    coverage: Coverage | None = None,
) -> pd.DataFrame:
    """Score every pair of an ingested CrowS-Pairs table; one row per pair (:data:`PAIR_SCHEMA`).

    Pairs that cannot be scored (:func:`pair_status`), pairs whose sentences the model reads as the
    same token ids (``skipped_identical_ids``: they differ only in pieces it does not know), and with
    ``too_long='skip'`` pairs with a sentence longer than the model accepts, are kept with a
    ``skipped_*`` status and logged with their id; ``too_long='truncate'`` scores truncated
    sentences and marks them ``truncated``; ``unknown_tokens``: an unknown piece scored or left out
    (:meth:`plmfair.scoring.base.Scorer.score_sentences`). ``coverage`` counts the pieces of every labelled pair
    and the unknown ones among them (:mod:`plmfair.scoring.coverage`).
    """
    coverage = Coverage() if coverage is None else coverage
    unknown = unknown_id(scorer.tokenizer)
    rows, todo = [], []
    for i, (_, pair) in enumerate(pairs.iterrows()):
        row = {k: pair.get(k) for k in ("pair_id", "bias_type", "stereo_antistereo", "origin", "cluster")}
        status = pair_status(pair)
        if status == "ok" and as_read(pair["sent_more"], scorer) == as_read(pair["sent_less"], scorer):
            status = "skipped_identical"  # differing in form only (NFC/NFD, spaces, case for an uncased model)
        if status == "ok":
            ids = [scorer.read_ids(pair[s]) for s in ("sent_more", "sent_less")]
            coverage.items += 1
            for sentence in ids:
                coverage.read(sentence, unknown)
            if ids[0] == ids[1]:
                coverage.identical_items += 1
                status = "skipped_identical_ids"
        row.update(sent_more_score=None, sent_less_score=None, n_masked_more=0, n_masked_less=0, status=status)
        rows.append(row)
        if row["status"] == "ok":
            todo.append(i)
    minimal_pairs = [
        MinimalPair(pairs["sent_more"].iloc[i], pairs["sent_less"].iloc[i], rows[i]["stereo_antistereo"] == "stereo")
        for i in todo
    ]
    for i, res in zip(
        todo,
        scorer.score_sentences(minimal_pairs, protocol=protocol, too_long=too_long, unknown_tokens=unknown_tokens),
        strict=True,
    ):
        rows[i].update(
            sent_more_score=res.more,
            sent_less_score=res.less,
            n_masked_more=res.n_more,
            n_masked_less=res.n_less,
            status=res.status,
        )
    for row in rows:
        if row["status"] != "ok":
            log.warning("pair %s: %s", row["pair_id"], row["status"])
    out = pd.DataFrame(rows, columns=[c for c in PAIR_SCHEMA if c not in OUTCOME_COLUMNS])
    out["n_masked_more"] = out["n_masked_more"].astype("int64")
    out["n_masked_less"] = out["n_masked_less"].astype("int64")
    return with_outcomes(out, precision=str(scorer.model.dtype), rounded=scorer.protocol(protocol).rounded)


# pairs scored in both precisions to calibrate the low precision's error, and the margin kept above it
CHECK_SAMPLE = 64
CHECK_SAFETY = 2.0


def error_scale(out: pd.DataFrame, precision: str) -> pd.Series:
    """The size a pair's margin error grows with: u x (|more| + |less| + pieces scored), u the unit
    roundoff of ``precision`` (:mod:`plmfair.scoring.tolerance`)."""
    size = out["sent_more_score"].abs() + out["sent_less_score"].abs() + out["n_masked_more"] + out["n_masked_less"]
    return unit_roundoff(precision) * size


def fp32_fits(loaded: LoadedModel) -> bool:
    """Whether a second copy of the model in fp32 fits beside the first (always on a CPU: host memory)."""
    if loaded.device.type != "cuda":
        return True
    free, _ = torch.cuda.mem_get_info(loaded.device)
    return free > 1.2 * 4 * sum(p.numel() for p in loaded.model.parameters())


def _margin(frame: pd.DataFrame) -> pd.Series:
    return frame["sent_more_score"] - frame["sent_less_score"]


def settle_in_fp32(
    out: pd.DataFrame, pairs: pd.DataFrame, loaded: LoadedModel, *, protocol: str, too_long: str, unknown_tokens: str
):
    """Make a bf16 or fp16 scoring's outcomes those of fp32: a sample of pairs is scored in fp32 too,
    which sets the low precision's error bound (``CHECK_SAFETY`` x the largest margin error seen,
    relative to :func:`error_scale`); every pair whose margin is within that bound is scored again in
    fp32. When fp32 does not fit, the bound is the worst case
    (:func:`plmfair.scoring.tolerance.margin_tolerance`) and those pairs are neutral, ``undecided`` at
    this precision. Returns the pairs and what was done (the run metadata's ``precision_check``)."""
    spec, low, rounded = loaded.spec, loaded.precision, PROTOCOLS[protocol].rounded
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
    exact = score_pairs(pairs.iloc[sample], fp32, protocol=protocol, too_long=too_long, unknown_tokens=unknown_tokens)
    seen = np.abs(margin.iloc[sample].to_numpy() - _margin(exact).to_numpy())
    factor = CHECK_SAFETY * max(1.0, float(np.max(seen / error_scale(out.iloc[sample], low).to_numpy(), initial=0)))
    bound = factor * error_scale(out, low)
    again = np.flatnonzero(scored & (margin.abs() <= bound).to_numpy())
    rescored = score_pairs(pairs.iloc[again], fp32, protocol=protocol, too_long=too_long, unknown_tokens=unknown_tokens)
    out = out.copy()
    for column in ("sent_more_score", "sent_less_score", "n_masked_more", "n_masked_less", "status"):
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


def run_scoring(
    pairs: pd.DataFrame,
    spec: ModelSpec,
    *,
    protocol: str,
    precision: str,
    too_long: str,
    token_budget: int,
    unknown_tokens: str = "scored",
    device: str = "auto",
    threads: int | None = None,
    progress: bool = True,
) -> tuple[pd.DataFrame, dict]:
    """Load the model of ``spec``, score ``pairs``; return the per-pair table and run metadata."""
    # torch and transformers (through the loader): only the scoring job loads a model
    loaded = load(spec, device=device, precision=precision, threads=threads)
    return score_loaded(
        pairs,
        loaded,
        protocol=protocol,
        too_long=too_long,
        unknown_tokens=unknown_tokens,
        token_budget=token_budget,
        progress=progress,
    )


def score_loaded(
    pairs: pd.DataFrame,
    loaded: LoadedModel,
    *,
    protocol: str,
    too_long: str,
    token_budget: int,
    unknown_tokens: str = "scored",
    progress: bool = True,
) -> tuple[pd.DataFrame, dict]:
    """Score ``pairs`` with a model already loaded (:func:`plmfair.scoring.loader.load`); return the
    per-pair table and run metadata."""
    spec, precision = loaded.spec, loaded.precision
    scorer = loaded.scorer(token_budget=token_budget, progress=progress)
    coverage = Coverage()
    check = {}
    with loaded.stopwatch() as watch:
        out = score_pairs(
            pairs, scorer, protocol=protocol, too_long=too_long, unknown_tokens=unknown_tokens, coverage=coverage
        )
        if precision != "fp32":
            out, check = settle_in_fp32(
                out, pairs, loaded, protocol=protocol, too_long=too_long, unknown_tokens=unknown_tokens
            )
    meta = loaded.metadata(
        precision_check=check,
        protocol=protocol,
        unknown_tokens=unknown_tokens,
        token_budget=scorer.token_budget,
        wall_time_s=round(watch.seconds, 3),
        n_pairs=int(len(out)),
        status_counts=out["status"].value_counts().to_dict(),
        coverage=coverage.as_dict(),
    )
    log.info(
        "%s read %d pieces, %d of them unknown (%.1f%%); %d of %d pairs identical as it reads them",
        spec.name,
        coverage.pieces,
        coverage.unknown_pieces,
        100 * coverage.unknown_share,
        coverage.identical_items,
        coverage.items,
    )
    skipped = int((out["status"] != "ok").sum())
    log.info(
        "scored %d pairs (%d skipped: %s) with %s in %.1f s on %s",
        len(out) - skipped,
        skipped,
        ", ".join(f"{k} {v}" for k, v in out["status"].value_counts().items() if k != "ok") or "none",
        spec.name,
        watch.seconds,
        meta["device"],
    )
    return out, meta
