"""How the annotator-group tests break ties in a 0/1 metric: by a finer score of the same answers.

Two annotators with the same P@1 hits swapped give the same gap, and such ties made the pairwise tests of
P@1 reject 0.027 of null data sets at alpha 0.05 (docs/statistics.md, "Ties in P@1 broken by the
reciprocal rank"). The tests (:mod:`plmfair.cloze.group_tests`) and the captions and column notes that
describe them (:mod:`plmfair.cloze.outputs`, which the table jobs import without scipy) read it here.
"""

from __future__ import annotations

from plmfair.cloze.measures import TIE_BREAK as METRIC_TIE_BREAK

# metric -> the finer score of the same answers that breaks its ties (plmfair.cloze.measures)
TIE_BREAK = METRIC_TIE_BREAK
# the tie-break's weight in the gap test's statistic, gap + TIE_WEIGHT x the tie-break's gap (a sum, so
# that the statistic stays linear in a shift and its test can be inverted into the interval)
TIE_WEIGHT = 1e-4


def then_by() -> str:
    """The tie-breaks after the sentence-adjusted gap, as a win/loss note says them: 'for hit1 then by
    the gap in rr'."""
    return "; ".join(f"for {metric} then by the gap in {finer}" for metric, finer in TIE_BREAK.items())


def gap_statistic() -> str:
    """The gap test's statistic where a tie-break applies: 'for hit1, of the gap + 0.0001 x the gap in rr'."""
    return "; ".join(
        f"for {metric}, of the gap + {TIE_WEIGHT:g} x the gap in {finer}" for metric, finer in TIE_BREAK.items()
    )
