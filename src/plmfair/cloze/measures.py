"""The cloze metrics, one entry each (:data:`METRICS`).

A metric is the mean, in percent, of a score of each annotation (``hit5``: 1 when the answer is among the
model's top 5 candidates): :func:`plmfair.cloze.metrics.annotation_scores` writes the scores,
:func:`plmfair.cloze.metrics.group_metrics` and :func:`plmfair.cloze.breakdowns.cloze_breakdowns` their
means, and the metrics files' schemas, the annotator-group tests (which scores are tested, their
tie-breaks, sigma_gd of every metric), the comparisons of runs, the tables' labels and the run record's
fields and schema are derived from the entries here. A new metric is one more entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Metric:
    """One metric: its column in the metrics, breakdowns and record (``column``), the per-annotation score
    whose mean it is (``score``), its name in tables (``label``) and what its score is (``gloss``), the
    candidates it looks at (ranks 1 to ``cutoff``), whether its score is the reciprocal rank within them
    (``reciprocal``; else a hit, 1 within them), the text of its column and of its score's in the files'
    schemas; whether the annotator-group tests test its score (``tested``), the ``primary`` one first; the
    finer score of the same answers that breaks its ties (``tie_break``); and the fewest annotators of a
    group in a batch for which Freedman & Lane's interaction tests hold their level on it
    (``interaction_min_annotators``; 0: any)."""

    column: str
    score: str
    label: str
    gloss: str
    cutoff: int
    reciprocal: bool
    description: str
    score_description: str
    tested: bool = False
    primary: bool = False
    tie_break: str = ""
    interaction_min_annotators: int = 0

    def scores(self, rank: np.ndarray) -> np.ndarray:
        """Each annotation's score from the rank of its answer among the candidates (NaN: absent)."""
        within = rank <= self.cutoff
        return np.where(within, 1.0 / rank, 0.0) if self.reciprocal else within.astype("int64")

    def mean(self, rank: np.ndarray) -> float:
        """The metric of annotations whose answers have these ranks: 100 x the mean of their scores."""
        if self.reciprocal:
            return 100 * float(np.nan_to_num(self.scores(rank), nan=0.0).mean())
        return 100 * float(self.scores(rank).sum()) / len(rank)


METRICS: tuple[Metric, ...] = (
    Metric(
        "p_at_1",
        "hit1",
        "P@1",
        "hit at 1",
        1,
        False,
        "percentage of annotations whose answer is the top candidate",
        "1 when the answer is the model's top candidate, else 0",
        tested=True,
        tie_break="rr",
        interaction_min_annotators=14,
    ),
    Metric(
        "p_at_5",
        "hit5",
        "P@5",
        "hit in the top 5",
        5,
        False,
        "percentage of annotations whose answer is among the top 5 candidates",
        "1 when the answer is among the model's top 5 candidates, else 0",
    ),
    Metric(
        "mrr",
        "rr",
        "MRR",
        "reciprocal rank",
        5,
        True,
        "mean reciprocal rank of the answer among the top 5 (0 when absent), percent",
        "1 / rank within the top 5, else 0",
        tested=True,
        primary=True,
    ),
)

COLUMNS = tuple(m.column for m in METRICS)
# the candidates the metrics look at
TOP = max(m.cutoff for m in METRICS)
# each metric's column by its score, and its label by its column (the tables' and the record's names)
BY_SCORE = {m.score: m.column for m in METRICS}
LABELS = {m.column: m.label for m in METRICS}
(PRIMARY,) = (m for m in METRICS if m.primary)
# the scores the group tests test, the primary one first
TESTED = tuple(m.score for m in sorted((m for m in METRICS if m.tested), key=lambda m: not m.primary))
TIE_BREAK = {m.score: m.tie_break for m in METRICS if m.tie_break}
INTERACTION_MIN_ANNOTATORS = {m.score: m.interaction_min_annotators for m in METRICS if m.interaction_min_annotators}


def listed(names: Iterable[str]) -> str:
    """Names in words: 'a, b or c'."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


# what a table or figure names each score by (the studies' ``labels``: plmfair.rendering.labels.metric_label)
SCORE_LABELS = {m.score: f"{m.label} ({m.gloss})" for m in METRICS}
