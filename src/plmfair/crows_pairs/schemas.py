"""The Parquet files of the CrowS-Pairs study between its jobs: the per-pair scores (:data:`PAIR_SCHEMA`,
``results/crows_pairs/{dataset}/{model}.parquet``) and their reader. Light (pandas only), read by the
scoring job (torch) and the summary (scipy) alike."""

from __future__ import annotations

import pandas as pd

from plmfair.io.parquet import read_parquet

SCORED_STATUSES = ("ok", "truncated")
STATUSES = (
    *SCORED_STATUSES,
    "skipped_missing",
    "skipped_empty",
    "skipped_identical",
    "skipped_identical_ids",
    "skipped_unlabelled",
    "skipped_duplicate",
    "skipped_too_long",
)


PAIR_SCHEMA = {
    "pair_id": "pair id of the source file",
    "bias_type": "harmonised bias type (null when the file gives none)",
    "stereo_antistereo": "stereo or antistereo (null when the file gives none)",
    "origin": "native or translated",
    "sent_more_score": "score of sent_more (pseudo-log-likelihood for masked LMs, log-likelihood for causal LMs; "
    "rounded to 3 decimals under nangia and sentence_log_likelihood; null when skipped)",
    "sent_less_score": "score of sent_less (as sent_more_score)",
    "n_masked_more": "units scored for sent_more: masked copies (masked LMs) or predicted tokens (causal LMs)",
    "n_masked_less": "units scored for sent_less (as n_masked_more)",
    "biased": "sent_more_score > sent_less_score (False when skipped)",
    "neutral": "equal scores (False when skipped)",
    "status": f"one of {', '.join(STATUSES)}",
}


# what every reader of a per-pair file checks (results/crows_pairs/{dataset}/{model}.parquet)
PAIR_KINDS = {"sent_more_score": "number", "sent_less_score": "number", "biased": "bool", "neutral": "bool"}


def read_pair_scores(path) -> pd.DataFrame:
    """A per-pair file (:data:`PAIR_SCHEMA`), refused with the command that rebuilds it when another
    version wrote it (a missing column, a status this version does not write, scores or flags of
    another type): its numbers would otherwise be counted as nothing, or fail deep in a figure."""
    return read_parquet(path, columns=list(PAIR_SCHEMA), kinds=PAIR_KINDS, values={"status": STATUSES})
