"""The CrowS-Pairs scoring job (torch): every pair of a data set scored by one model.

A pair is scored when both sentences are present, non-empty, different and labelled (direction and
bias type known) and its id is not a repeat; otherwise it is kept with a ``skipped_*`` status
(:data:`plmfair.crows_pairs.schemas.STATUSES`) and counted. Output: ``results/crows_pairs/{dataset}/{model}.parquet``
(:data:`PAIR_SCHEMA`)."""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Mapping

import pandas as pd

from plmfair.crows_pairs.schemas import PAIR_SCHEMA
from plmfair.scoring.base import MinimalPair, Scorer
from plmfair.scoring.coverage import (
    Coverage,
    unknown_id,
)
from plmfair.scoring.loader import LoadedModel, load
from plmfair.scoring.pair_decision import OUTCOME_COLUMNS, decide_pairs
from plmfair.scoring.specs import ModelSpec

log = logging.getLogger(__name__)


def pair_status(pair: Mapping) -> str:
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


# the outcome of a pair skipped before scoring, as pair_decision gives one it could not score
UNSCORED = {column: float("nan") if column == "tolerance" else False for column in OUTCOME_COLUMNS}


def score_pairs(
    pairs: pd.DataFrame,
    scorer: Scorer,
    *,
    protocol: str = "nangia",
    too_long: str = "skip",
    unknown_tokens: str = "scored",
    coverage: Coverage | None = None,
    loaded: LoadedModel | None = None,
) -> pd.DataFrame:
    """Score every pair of an ingested CrowS-Pairs table; one row per pair (:data:`PAIR_SCHEMA`).

    Pairs that cannot be scored (:func:`pair_status`), pairs whose sentences the model reads as the
    same token ids (``skipped_identical_ids``: they differ only in pieces it does not know), and with
    ``too_long='skip'`` pairs with a sentence longer than the model accepts, are kept with a
    ``skipped_*`` status and logged with their id; ``too_long='truncate'`` scores truncated
    sentences and marks them ``truncated``; ``unknown_tokens``: an unknown piece scored or left out
    (:meth:`plmfair.scoring.base.Scorer.score_sentences`). ``coverage`` counts the pieces of every labelled pair
    and the unknown ones among them (:mod:`plmfair.scoring.coverage`). The scored pairs are decided by
    :func:`plmfair.scoring.pair_decision.decide_pairs` (settled in fp32 when ``loaded``, the scorer's model, runs
    in reduced precision; what was done is ``out.attrs["precision_check"]``).
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
        row.update(UNSCORED)  # a pair that is not scored has no tolerance and no outcome
        rows.append(row)
        if row["status"] == "ok":
            todo.append(i)
    minimal_pairs = [
        MinimalPair(pairs["sent_more"].iloc[i], pairs["sent_less"].iloc[i], rows[i]["stereo_antistereo"] == "stereo")
        for i in todo
    ]
    decided, check = decide_pairs(
        minimal_pairs, scorer, protocol=protocol, too_long=too_long, unknown_tokens=unknown_tokens, loaded=loaded
    )
    for i, res in zip(todo, decided.to_dict(orient="records"), strict=True):
        rows[i].update(res)
    for row in rows:
        if row["status"] != "ok":
            log.warning("pair %s: %s", row["pair_id"], row["status"])
    out = pd.DataFrame(rows, columns=list(PAIR_SCHEMA))
    out["n_masked_more"] = out["n_masked_more"].astype("int64")
    out["n_masked_less"] = out["n_masked_less"].astype("int64")
    out["sent_more_score"] = out["sent_more_score"].astype("float64")
    out["sent_less_score"] = out["sent_less_score"].astype("float64")
    out.attrs["precision_check"] = check
    return out


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
    spec = loaded.spec
    scorer = loaded.scorer(token_budget=token_budget, progress=progress)
    coverage = Coverage()
    with loaded.stopwatch() as watch:
        out = score_pairs(
            pairs,
            scorer,
            protocol=protocol,
            too_long=too_long,
            unknown_tokens=unknown_tokens,
            coverage=coverage,
            loaded=loaded,
        )
    check = out.attrs.pop("precision_check", {})
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
