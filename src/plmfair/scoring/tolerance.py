"""How far a score can be from its exact value because of floating-point arithmetic, and so when two
scores are too close to be told apart (a CrowS-Pairs pair neutral, :func:`margin_tolerance`).

A sentence's score is a sum of ``n`` log-probabilities, each the output of a network evaluated in
the model's precision. The bound used is the textbook one for a sum of ``n`` terms, ``n u sum|x_i|``
(Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, §4.2), with ``u`` the unit roundoff
of the precision (:data:`UNIT_ROUNDOFF`) and every term counted at no less than one nat, which covers
the error of the log-softmax itself. The margin of two sentences is then uncertain by the sum of their
two bounds. docs/statistics.md, "Ties", says how it was checked (scores of other batch compositions
differ by far less). Torch-free.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

# half the distance from 1 to the next number of each precision (2^-p for p bits of significand)
UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}
# the names the configuration and the records use for them
PRECISION_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64"}


def unit_roundoff(precision: str) -> float:
    """``u`` of a precision named as torch (``float32``, ``torch.bfloat16``) or the config (``bf16``) names it."""
    name = str(precision).removeprefix("torch.")
    name = PRECISION_DTYPES.get(name, name)
    if name not in UNIT_ROUNDOFF:
        raise ValueError(f"unknown precision {precision!r}; known: {sorted(PRECISION_DTYPES)}")
    return UNIT_ROUNDOFF[name]


def score_error_bound(score: ArrayLike, n_terms: ArrayLike, precision: str) -> np.ndarray:
    """The bound on the floating-point error of a score that sums ``n_terms`` log-probabilities."""
    n = np.maximum(np.asarray(n_terms, dtype=float), 1.0)
    return unit_roundoff(precision) * n * np.maximum(np.abs(np.asarray(score, dtype=float)), n)


def margin_tolerance(
    more: ArrayLike, less: ArrayLike, n_more: ArrayLike, n_less: ArrayLike, precision: str
) -> np.ndarray:
    """The largest margin ``more - less`` that arithmetic alone could produce: a pair whose
    |margin| is at most this is neutral (its order is not decided at this precision)."""
    return score_error_bound(more, n_more, precision) + score_error_bound(less, n_less, precision)
