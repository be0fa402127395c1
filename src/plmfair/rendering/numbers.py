"""The display rule: how every number a reader sees is printed (tables, ``plmfair show``, ``plmfair
compare``, figure labels).

A printed number stays on the same side of the values it is judged against as the exact number:
of the null value of its test, of the threshold it is compared with, of alpha for a p-value. It is
printed with the usual digits and with as many more as that takes (an upper bound of 49.9887
against a null of 50 prints ``49.99``, not ``50.0``; a p of 0.0496 prints ``0.0496``, not
``0.050``). ``-0`` is never printed; a level prints exactly (``95%``, ``1 − 0.05/9``). Files meant
for programs (CSV, JSON) hold the numbers themselves at full precision and are not printed by
these functions; a table's CSV has their floating-point noise taken off (:func:`in_file`), as the
printed numbers and the marks already treat it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real
from typing import Any

import numpy as np

# beyond this many decimals a number is printed as the shortest text that reads back as the same float
MAX_DECIMALS = 12
# two numbers this close (relative) are the same number to the marks (floating-point noise)
EQUAL = 1e-12
# a value this close to 0 is floating-point noise (a difference of equal sums taken in another order) and
# prints as 0: every quantity printed here (scores, percentages, nats, gaps) is far larger when it is not 0
NOISE = 1e-12
# what a table's cell holds: a number of any kind (Python's, numpy's), text, a flag, or a missing value
Cell = Any


def missing(value: Cell) -> bool:
    """None, NaN or pandas' NA: printed as ''."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:  # pandas.NA has no truth value
        return True


# floating-point noise: a float this many units in the last place from a decimal of at most SHORT_DIGITS digits
NOISE_ULPS, SHORT_DIGITS = 8, 8


def in_file(value: Cell, *, p_value: bool = False) -> Cell:
    """``value`` as a file for programs (CSV) holds it: the float itself, except floating-point noise: a float
    within :data:`NOISE_ULPS` units in the last place of a decimal of at most :data:`SHORT_DIGITS` significant
    digits (``0.28800000000000003``, ``2.9999999999999996``) is that decimal, and a value within :data:`NOISE`
    of 0 is 0, as the printed numbers treat both (:data:`EQUAL`, :data:`NOISE`). A p-value is returned as it
    is: it can be that small, and its mark compares the float itself with alpha."""
    if p_value or missing(value) or isinstance(value, bool | np.bool_ | Integral) or not isinstance(value, Real):
        return value
    v = float(value)
    if not math.isfinite(v):
        return v
    if abs(v) <= NOISE:
        return 0.0
    ulp = float(np.spacing(abs(v)))
    for digits in range(1, SHORT_DIGITS + 1):
        short = float(f"{v:.{digits}g}")
        if abs(short - v) <= NOISE_ULPS * ulp:
            return short
    return v


def _side(a: float, b: float) -> int:
    return (a > b) - (a < b)


def number(value: Cell, digits: int = 2, *, keep: Iterable = ()) -> str:
    """``value`` with ``digits`` decimals, or more where fewer would put the printed number on
    another side of (or onto) zero or one of the values in ``keep`` than the exact one (beyond
    :data:`MAX_DECIMALS`, the shortest text that reads back as the same float); never ``-0``; a value
    within :data:`NOISE` of 0 is 0. Integers print as integers, infinities as ``inf``/``-inf``, missing
    values as ''."""
    if missing(value):
        return ""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, Integral):
        return str(int(value))
    if not isinstance(value, Real):  # text, and anything else a table holds, as it is
        return str(value)
    v = float(value)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    v = 0.0 if abs(v) <= NOISE else v
    refs = [0.0, *(float(r) for r in keep if not missing(r) and math.isfinite(float(r)))]
    for decimals in range(digits, MAX_DECIMALS + 1):
        text = f"{v:.{decimals}f}"
        if all(_side(float(text), r) == _side(v, r) for r in refs):
            break
    else:
        text = np.format_float_positional(v, unique=True, trim="-")  # the shortest text of v itself
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def compared(a: Cell, b: Cell, digits: int = 2, *, keep: Iterable = ()) -> tuple[str, str]:
    """Two numbers a reader compares (an estimate and its threshold), printed with the same decimals,
    as many as it takes for the printed pair to be ordered as the exact pair and each to keep its
    side of zero and of ``keep``. Numbers within :data:`EQUAL` of each other (relative) are equal, as
    the marks compare them, and print alike."""
    if missing(a) or missing(b) or not all(math.isfinite(float(x)) for x in (a, b)):
        return number(a, digits, keep=keep), number(b, digits, keep=keep)
    a, b = float(a), float(b)
    order = 0 if abs(a - b) <= EQUAL * max(1.0, abs(a), abs(b)) else _side(a, b)
    refs = [0.0, *(float(r) for r in keep if not missing(r))]
    for decimals in range(digits, MAX_DECIMALS + 1):
        ta, tb = f"{a:.{decimals}f}", f"{b:.{decimals}f}"
        sides = all(_side(float(t), r) == _side(v, r) for t, v in ((ta, a), (tb, b)) for r in refs)
        if _side(float(ta), float(tb)) == order and (sides or order == 0):
            break
    return tuple(t[1:] if t.startswith("-") and float(t) == 0 else t for t in (ta, tb))  # type: ignore[return-value]


def interval(low: Cell, high: Cell, digits: int = 2, *, keep: Iterable = ()) -> str:
    """``[low, high]``, each end by :func:`number` with the same ``keep``; '' when missing."""
    if missing(low) or missing(high):
        return ""
    keep = tuple(keep)
    return f"[{number(low, digits, keep=keep)}, {number(high, digits, keep=keep)}]"


def p_value(p: Cell, *, alpha: float | None, digits: int = 3, keep: Iterable = ()) -> str:
    """A p-value: ``digits`` decimals, ``<0.001`` below what they show, never rounded onto or across
    ``alpha`` (0.0496 prints ``0.0496`` at alpha 0.05; no level kept where ``alpha`` is None) nor the values
    of ``keep`` (a threshold it is set beside); '' when missing."""
    if missing(p):
        return ""
    floor = 10.0**-digits
    if p < floor and (alpha is None or floor <= alpha):
        return f"<{floor:.{digits}f}"
    return number(float(p), digits, keep=(*keep, *(() if alpha is None else (alpha,))))


def level(value: Cell, *, alpha: float | None = None) -> str:
    """A confidence level exactly: ``95%``, ``99.5%``, or a Bonferroni level that has no short decimal
    as ``1 − 0.05/9`` (given the family's ``alpha``); '' when missing."""
    if missing(value):
        return ""
    percent = 100 * float(value)
    for decimals in range(5):
        if abs(round(percent, decimals) - percent) < 1e-9:
            return f"{percent:.{decimals}f}%"
    if alpha and value < 1:
        family = alpha / (1 - float(value))
        if abs(family - round(family)) < 1e-6:
            return f"1 − {alpha:g}/{round(family)}"
    return f"{percent!r}%"


def marked(text: str, significant: Cell) -> str:
    """``text`` with ``*`` when ``significant`` is true (not when missing)."""
    return text + ("*" if not missing(significant) and bool(significant) else "")
