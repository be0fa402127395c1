"""The design the annotator-group tests permute: the annotations of a model on a language indexed by
annotator, sentence, group and batch (:class:`AnnotatorDesign`), the label assignments a test compares
(every distinct one up to :data:`EXACT_LIMIT`, else random shuffles within the batches), and the sums,
means, sentence gaps and net wins of every assignment at once, which the tests of
:mod:`plmfair.cloze.group_tests` are built from."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from math import factorial, lcm, prod

import numpy as np
import pandas as pd

from plmfair.cloze.annotations import GROUPS
from plmfair.stats.mixed_models import design_blocks


@dataclass(frozen=True)
class AnnotatorDesign:
    """The annotations of one model's scores on one language (or all pooled), indexed for permutation:
    per annotation its annotator and unit (sentence); per annotator its group, language and stratum
    (batch within language), within which labels are shuffled."""

    annotator: np.ndarray
    unit: np.ndarray
    group: np.ndarray
    lang: np.ndarray
    stratum: np.ndarray
    n_units: int

    @classmethod
    def of(cls, data: pd.DataFrame) -> AnnotatorDesign:
        sentence = (data["lang"].astype(str) + ":" + data["s_id"].astype(str)).to_numpy()
        annotator = (data["lang"].astype(str) + ":" + data["u_id"].astype(str)).to_numpy()
        codes, levels = pd.factorize(annotator)
        first = pd.Series(range(len(codes))).groupby(codes).first().to_numpy()
        group = pd.Categorical(data["group"].to_numpy()[first], categories=GROUPS).codes
        if (group < 0).any():
            raise ValueError(f"unknown annotator group(s) {sorted(set(data['group']) - set(GROUPS))}")
        units, _ = pd.factorize(sentence)
        lang = pd.factorize(data["lang"].to_numpy()[first])[0]
        blocks = design_blocks(sentence, annotator)[first]
        stratum = pd.factorize(pd.Series(lang).astype(str) + ":" + pd.Series(blocks).astype(str))[0]
        return cls(codes, units, group, lang, stratum, int(units.max()) + 1 if len(units) else 0)

    def strata(self, *, among: Sequence[str] = GROUPS, within: np.ndarray | None = None) -> np.ndarray:
        """Per annotator, the stratum its label is shuffled in: its batch, split further by
        ``within`` (an attribute of its group, e.g. nativeness); -1 (label kept) for annotators of
        groups not ``among`` those shuffled."""
        keyed = self.stratum * 2 + (within[self.group] if within is not None else 0)
        return np.where(np.isin(self.group, [GROUPS.index(g) for g in among]), keyed, -1)

    def assignments(
        self, n_permutations: int, rng: np.random.Generator, strata: np.ndarray | None = None
    ) -> np.ndarray:
        """Group labels per annotator: the observed ones (row 0), then the assignments compared with
        them, shuffled within ``strata`` (default: the batches; an annotator of stratum -1 keeps its
        label). When the strata allow at most :data:`EXACT_LIMIT` distinct assignments, all of them but
        one copy of the observed one (so that (1 + count) / (1 + rows) is the exact p); otherwise
        ``n_permutations`` random shuffles."""
        strata = self.stratum if strata is None else strata
        shuffled = [np.flatnonzero(strata == s) for s in np.unique(strata[strata >= 0])]
        if distinct_assignments([self.group[m] for m in shuffled]) <= EXACT_LIMIT:
            return self._enumerated(shuffled)
        out = np.empty((n_permutations + 1, len(self.group)), dtype=np.int64)
        out[:] = self.group
        for members in shuffled:
            labels = self.group[members]
            out[1:, members] = rng.permuted(np.broadcast_to(labels, (n_permutations, len(labels))), axis=1)
        return out

    def _enumerated(self, shuffled: list[np.ndarray]) -> np.ndarray:
        """Every distinct assignment within the strata, the observed one first and not repeated."""
        per_stratum = [list(_arrangements(tuple(self.group[m]))) for m in shuffled]
        rows = [self.group.copy()]
        observed = tuple(tuple(self.group[m]) for m in shuffled)
        for combination in product(*per_stratum):
            if combination == observed:
                continue
            row = self.group.copy()
            for members, labels in zip(shuffled, combination, strict=True):
                row[members] = labels
            rows.append(row)
        return np.array(rows, dtype=np.int64)


# the most distinct label assignments a permutation test enumerates rather than samples
EXACT_LIMIT = 10_000


def distinct_assignments(strata_labels: Sequence[np.ndarray]) -> int:
    """How many distinct ways the labels can be arranged within each stratum: the product of the
    multinomial coefficients n! / (n_1! ... n_k!)."""
    total = 1
    for labels in strata_labels:
        counts = np.unique(labels, return_counts=True)[1]
        total *= factorial(int(counts.sum())) // prod(factorial(int(c)) for c in counts)
        if total > EXACT_LIMIT:
            return total
    return total


def _arrangements(labels: tuple) -> Iterator[tuple]:
    """The distinct orderings of a multiset of labels."""
    if not labels:
        yield ()
        return
    for first in sorted(set(labels)):
        rest = list(labels)
        rest.remove(first)
        for tail in _arrangements(tuple(rest)):
            yield (first, *tail)


def cell_sums(weight_sets: Sequence[np.ndarray], cells: np.ndarray, n_cells: int) -> list[np.ndarray]:
    """For each of ``weight_sets``, per row of ``cells`` (one assignment each), the sum of the weights
    falling in every cell (the rows' cells flattened once for all of them)."""
    n_rows = cells.shape[0]
    index = (np.arange(n_rows)[:, None] * n_cells + cells).ravel()
    return [
        np.bincount(index, weights=np.tile(weights, n_rows), minlength=n_rows * n_cells).reshape(n_rows, n_cells)
        for weights in weight_sets
    ]


def group_sums(values: np.ndarray, design: AnnotatorDesign, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per assignment (rows of ``labels``), language and group: sum of the values and annotations."""
    n_langs, g = int(design.lang.max()) + 1, len(GROUPS)
    per_annotator = np.bincount(design.annotator, weights=values, minlength=len(design.group))
    count_annotator = np.bincount(design.annotator, minlength=len(design.group)).astype(float)
    cells = design.lang[None, :] * g + labels
    sums, counts = cell_sums([per_annotator, count_annotator], cells, n_langs * g)
    return sums.reshape(len(labels), n_langs, g), counts.reshape(len(labels), n_langs, g)


def group_means(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per assignment, the four groups' means over every language's annotations."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums.sum(axis=1) / counts.sum(axis=1)


def sentence_gap(
    value_sets: Sequence[np.ndarray], design: AnnotatorDesign, labels: np.ndarray, a: int, b: int
) -> tuple[list[np.ndarray], np.ndarray]:
    """Per assignment, for each of ``value_sets``, the gap of group ``a`` to group ``b`` adjusted for
    sentence (:func:`weighted_gap`), and the number of sentences both answered."""
    per_annotation = labels[:, design.annotator]
    side = np.where(per_annotation == a, 0, np.where(per_annotation == b, 1, 2))
    cells = np.where(side < 2, design.unit[None, :] * 2 + side, 2 * design.n_units)
    n_cells = 2 * design.n_units + 1
    counts, *value_sums = (
        sums[:, :-1].reshape(len(labels), -1, 2)
        for sums in cell_sums([np.ones(len(design.annotator)), *value_sets], cells, n_cells)
    )
    gaps = [weighted_gap(sums[:, :, 0], counts[:, :, 0], sums[:, :, 1], counts[:, :, 1]) for sums in value_sums]
    return gaps, ((counts[:, :, 0] > 0) & (counts[:, :, 1] > 0)).sum(axis=1)


def weighted_gap(sum_a: np.ndarray, n_a: np.ndarray, sum_b: np.ndarray, n_b: np.ndarray) -> np.ndarray:
    """Per assignment (rows; columns the sentences), sum over the sentences both groups answered of
    w_s (mean_a,s - mean_b,s) / sum of w_s, w_s = n_a n_b / (n_a + n_b); NaN where none was."""
    both = (n_a > 0) & (n_b > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = np.where(both, n_a * n_b / (n_a + n_b), 0.0)
        total = weight.sum(axis=1)
        diff = np.where(both, sum_a / np.where(both, n_a, 1) - sum_b / np.where(both, n_b, 1), 0.0)
        return np.where(total > 0, (weight * diff).sum(axis=1) / np.where(total > 0, total, 1), np.nan)


def exact_scale(values: np.ndarray) -> int | None:
    """The smallest integer that makes every value an integer (rr: 60), when one below 10^6 does."""
    denominators = {Fraction(float(v)).limit_denominator(1000).denominator for v in np.unique(values)}
    scale = lcm(*denominators) if denominators else 1
    if scale > 10**6 or not np.allclose(values * scale, np.round(values * scale), atol=1e-9):
        return None
    return scale


def net_wins(
    value_sets: Sequence[np.ndarray], design: AnnotatorDesign, labels: np.ndarray, a: int, b: int
) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], np.ndarray]:
    """Per assignment, for groups ``a`` and ``b`` and each of ``value_sets``: (wins of a, wins of b, the
    sentence-adjusted gap of a to b, :func:`weighted_gap` from the same sums); and the shared units.
    Means are compared exactly (sums and counts cross-multiplied as integers) when the values are
    rationals of small denominators, else to 1e-12."""
    g = len(GROUPS)
    cells = design.unit[None, :] * g + labels[:, design.annotator]
    scales = [exact_scale(values) for values in value_sets]
    # integer sums (exact in float64 below 2^53) when the values are small rationals
    weight_sets = [
        np.round(values * scale) if scale else values for values, scale in zip(value_sets, scales, strict=True)
    ]
    counts, *value_sums = (
        sums.reshape(len(labels), design.n_units, g)
        for sums in cell_sums([np.ones(len(design.annotator)), *weight_sets], cells, design.n_units * g)
    )
    both = (counts[:, :, a] > 0) & (counts[:, :, b] > 0)
    out = []
    for sums, scale in zip(value_sums, scales, strict=True):
        left, right = sums[:, :, a] * counts[:, :, b], sums[:, :, b] * counts[:, :, a]
        tolerance = 0 if scale else 1e-12
        wins_a = (both & (left > right + tolerance)).sum(axis=1)
        wins_b = (both & (left < right - tolerance)).sum(axis=1)
        gap = weighted_gap(sums[:, :, a], counts[:, :, a], sums[:, :, b], counts[:, :, b]) / (scale or 1)
        out.append((wins_a, wins_b, gap))
    return out, both.sum(axis=1)
