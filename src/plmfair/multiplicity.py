"""Multiple testing: which hypotheses of a family can be rejected at all, and the adjusted p-values.

- :func:`holm`: Holm's step-down adjustment (family-wise error);
- :func:`tarone_family`: Tarone's (1990) rule for discrete tests: the hypotheses whose smallest
  attainable p could reach the family's threshold; the others are left out of the family (they can never
  be rejected, and counting them would only make the others harder to reject);
- :func:`family_wise` (Holm) and :func:`false_discovery` (Benjamini & Yekutieli 2001, valid under any
  dependence between the tests), each over the hypotheses Tarone's rule keeps.

Each returns, per hypothesis, whether it was in the family (testable), its adjusted p (NaN outside) and
the family's size; a hypothesis is rejected when its adjusted p < alpha.

A primary verdict judged across the specifications of a sensitivity analysis (each study's robustness
analysis) makes two statements, each with a known error rate (``make bench-stats``, part robustness):

- **robust** (:func:`intersection_union_p`, :func:`family_level`): every specification shows the primary's
  verdict, each at the level the primary question is held to. That is an intersection-union test (Berger
  1982): its p is the largest of the specifications' p (1 when one lies on the other side), and it needs no
  adjustment over the specifications. It does need the primary's adjustment over the run's confirmatory
  family, which it gets by Bonferroni's bound over the same family: Holm's first step, the one threshold a
  claim can meet without knowing the other claims of the family (each study decides its own in its own job).
- **differs** (:func:`differences_from_first`): a specification's estimate differs from the run's own by more
  than sampling noise. Each specification's estimate is a ratio of sums over the same units (pairs, or the
  source's clusters of them, writers), so the units are resampled together for every specification (the
  bootstrap), and the largest studentized difference from the run's own is referred to its bootstrap
  distribution (Romano & Wolf's 2005 single-step max-t): the chance that some specification is said to
  differ when none does stays near alpha whatever the effect, since every specification is held to the same
  null (no difference).

Neither says the verdict is right, and a verdict that is not robust is not therefore "fragile": a
specification that falls short of the adjusted level may only have less power (fewer pairs, coarser ties).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

# whether a result file's rows are primary questions: one value for every row, or one per row
Primary: TypeAlias = "bool | pd.Series"


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment over the non-missing p-values of one family: the i-th smallest of
    m is multiplied by m - i + 1, made non-decreasing and capped at 1 (statsmodels' ``multipletests``
    gives the same; it is written out here because that function runs the garbage collector on
    every call, which made the group tests ten times slower). NaN stays NaN."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if len(ok):
        order = ok[np.argsort(p[ok], kind="stable")]
        scaled = p[order] * (len(order) - np.arange(len(order)))
        out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out


def by_constant(m: int) -> float:
    """Benjamini & Yekutieli's c(m) = 1 + 1/2 + ... + 1/m, the price of arbitrary dependence (1 for m <= 1)."""
    return float(np.sum(1.0 / np.arange(1, m + 1))) if m > 1 else 1.0


def benjamini_yekutieli(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini & Yekutieli's (2001) adjusted p-values over the non-missing p-values of one family:
    min over j >= i of m c(m) p_(j) / j, capped at 1 (scipy's ``false_discovery_control(method="by")``).
    NaN stays NaN."""
    # scipy is heavy: imported where a family is adjusted
    from scipy.stats import false_discovery_control

    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = false_discovery_control(p[ok], method="by")
    return out


@dataclass(frozen=True)
class Family:
    """The outcome of a multiplicity procedure over some hypotheses: ``testable`` (in the family: its
    smallest attainable p could reach the family's threshold), ``adjusted`` p (NaN outside the family),
    ``size`` (the hypotheses in the family) and the ``threshold`` a smallest attainable p had to be below."""

    testable: np.ndarray
    adjusted: np.ndarray
    size: int
    threshold: float


def tarone_family(smallest: Sequence[float], threshold: Callable[[int], float]) -> tuple[np.ndarray, float]:
    """Tarone's (1990) rule: with ``threshold(K)`` the best a hypothesis can need in a family of K
    (alpha / K for Holm's first step, alpha / c(K) for Benjamini-Yekutieli's last), the smallest K for
    which at most K hypotheses have a smallest attainable p below ``threshold(K)``; those form the family.
    The rule looks only at the design (what p each test could reach), not at the p-values themselves.
    Returns (in the family, the threshold)."""
    low = np.asarray(smallest, dtype=float)
    m = int(np.sum(~np.isnan(low)))
    for k in range(1, max(m, 1) + 1):
        if int(np.sum(low < threshold(k))) <= k:
            return low < threshold(k), threshold(k)
    return np.zeros(len(low), dtype=bool), threshold(max(m, 1))


def _adjust(
    p_values: Sequence[float],
    smallest: Sequence[float],
    threshold: Callable[[int], float],
    adjust: Callable[[Sequence[float]], np.ndarray],
) -> Family:
    p = np.asarray(p_values, dtype=float)
    testable, limit = tarone_family(smallest, threshold)
    testable = testable & ~np.isnan(p)
    adjusted = np.full(p.shape, np.nan)
    if testable.any():
        adjusted[testable] = adjust(p[testable].tolist())
    return Family(testable, adjusted, int(testable.sum()), limit)


def family_wise(p_values: Sequence[float], smallest: Sequence[float], *, alpha: float) -> Family:
    """Holm over the hypotheses that Tarone's rule keeps at alpha / K (the family-wise error stays at
    alpha: a hypothesis left out can never be rejected)."""
    return _adjust(p_values, smallest, lambda k: alpha / k, holm)


def false_discovery(p_values: Sequence[float], smallest: Sequence[float], *, alpha: float) -> Family:
    """Benjamini-Yekutieli over the hypotheses that Tarone's rule keeps at alpha / c(K), the largest
    threshold the procedure can give one of K hypotheses (when all K are rejected): the false discovery
    rate stays at alpha whatever the dependence between the tests (Gilbert 2005 for the restriction to
    the testable ones)."""
    return _adjust(p_values, smallest, lambda k: alpha / by_constant(k), benjamini_yekutieli)


# What a study says of each test it prints (its ``questions`` function, one row per hypothesis).
HYPOTHESIS_SCHEMA = {
    "hypothesis": "the test's id, unique in the run; the result file's row that prints it carries the same id",
    "study": "the study that asks it",
    "source": "the result file whose row it is",
    "question": "what it asks, in words",
    "primary": "a primary question of the study (one per model and data set): the run's confirmatory family",
    "p_value": "the test's own p-value (NaN: no test could be made)",
    "p_min": "the smallest p-value the test can give on this design (Tarone's rule keeps it out of its family when "
    "that cannot reach the family's threshold)",
    "size": "the rate at which the test rejects at alpha when its null holds, on this design (a permutation test: "
    "the share of assignments whose p is below alpha; a paired change: given the pairs that moved; NaN for the "
    "binomial tests, whose levels bench-stats shows by the number of pairs); outside LEVEL_BAND the test is "
    "untestable",
    "informative": "false when the test's null distribution is degenerate (every assignment gives the same "
    "statistic): p = 1 whatever the data",
    "limit": "why the design cannot support the test's level ('' when it can: the study's own rule, or the run's "
    "when its size on the design is outside LEVEL_BAND); such a test is untestable",
}


def hypotheses_of(
    rows: pd.DataFrame,
    *,
    study: str,
    source: str,
    question: str | pd.Series,
    primary: Primary,
    p_value: str,
    informative: bool | pd.Series,
) -> pd.DataFrame:
    """A study's hypotheses (:data:`HYPOTHESIS_SCHEMA`) from the rows of one of its result files: each row's
    test id (its ``hypothesis`` column), its ``question`` and whether it is ``primary`` (a value or one per
    row), its p-value (the ``p_value`` column), smallest attainable p (``p_min``) and size (``size``, where
    the rows have one), and whether it is ``informative``."""
    return pd.DataFrame(
        {
            "hypothesis": rows["hypothesis"],
            "study": study,
            "source": source,
            "question": question,
            "primary": primary,
            "p_value": rows[p_value].astype(float),
            "p_min": rows["p_min"].astype(float),
            "size": rows["size"].astype(float) if "size" in rows else float("nan"),
            "informative": informative,
            "limit": rows["limit"].fillna("").astype(str) if "limit" in rows else "",
        }
    ).astype({"primary": bool, "informative": bool})


DECIDED_SCHEMA = {
    **HYPOTHESIS_SCHEMA,
    "family": "confirmatory (a primary question, Holm), secondary (Benjamini-Yekutieli over the whole report), "
    "untestable (its smallest attainable p cannot reach its family's threshold, or its size on the design is "
    "outside LEVEL_BAND: no mark, no testing interval) or uninformative (degenerate null distribution)",
    "procedure": "Holm or Benjamini-Yekutieli ('' outside a family)",
    "family_size": "hypotheses in its family (those Tarone's rule keeps)",
    "threshold": "the smallest attainable p of a hypothesis in the family had to be below this (Tarone's rule)",
    "p_adjusted": "p_value adjusted over its family (NaN outside a family)",
    "significant": "p_adjusted < alpha: the mark",
    "nominal": "p_value < alpha without being significant after the adjustment (an interval beside it can exclude "
    "the null value without a mark)",
    "alpha": "the run's significance level (analysis.alpha)",
}
# A test holds its level on a design when it rejects a true null at a rate within [0.6 alpha, 1.4 alpha]
# ([0.03, 0.07] at 0.05): above, its marks claim more than they hold; below, ties leave it too weak for a
# referee to read its silence as an answer. make bench-stats measures every marked test against it.
LEVEL_BAND = (0.6, 1.4)


def testable_on_design(p_min: ArrayLike, size: ArrayLike, limit: ArrayLike | str, *, alpha: float) -> np.ndarray:
    """Whether a test can mark a row at ``alpha`` before any adjustment: its smallest attainable p below
    alpha, its size (where known) inside LEVEL_BAND, and no ``limit`` of its design."""
    size = np.asarray(size, dtype=float)
    limit = np.asarray(pd.Series(limit).fillna("").astype(str) != "")
    outside = (size < LEVEL_BAND[0] * alpha) | (size > LEVEL_BAND[1] * alpha)
    return (np.asarray(p_min, dtype=float) < alpha) & ~outside & ~limit


FAMILIES = {
    "confirmatory": ("Holm", family_wise),
    "secondary": ("Benjamini-Yekutieli", false_discovery),
}


def decide_hypotheses(hypotheses: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """The decisions on a run's hypotheses, from every study's (:data:`HYPOTHESIS_SCHEMA`): the primary
    questions form the confirmatory family (Holm), every other test the secondary one (Benjamini-Yekutieli
    over the whole report); within each, Tarone's rule leaves out the tests that could never reach its
    threshold, and a test whose design cannot support its level (its ``limit``, or a size outside
    LEVEL_BAND, said in ``limit``) is left out before it (both untestable); a test with
    a degenerate null distribution is uninformative (:data:`DECIDED_SCHEMA`)."""
    missing = [c for c in HYPOTHESIS_SCHEMA if c not in hypotheses]
    if missing:
        raise ValueError(f"hypotheses lack the columns {missing} (plmfair.multiplicity.HYPOTHESIS_SCHEMA)")
    out = hypotheses.reset_index(drop=True).copy()
    duplicated = out["hypothesis"][out["hypothesis"].duplicated()]
    if len(duplicated):
        raise ValueError(f"hypothesis ids must be unique in a run: {sorted(set(duplicated))[:5]}")
    out["family"], out["procedure"] = "untestable", ""
    out["family_size"], out["threshold"], out["p_adjusted"] = 0, float("nan"), float("nan")
    size = out["size"].astype(float)
    weak = (size < LEVEL_BAND[0] * alpha) & (out["limit"] == "")
    out.loc[weak, "limit"] = [
        f"ties: on this design it rejects a true null at alpha {alpha:g} at a rate of {size:.3f}, below "
        f"{LEVEL_BAND[0] * alpha:g}"
        for size in out.loc[weak, "size"]
    ]
    # a discrete test's size on its design can exceed the band too (a paired change given its moves): a mark
    # there would claim more than it holds
    liberal = (size > LEVEL_BAND[1] * alpha) & (out["limit"] == "")
    out.loc[liberal, "limit"] = [
        f"discreteness: on this design it rejects a true null at alpha {alpha:g} at a rate of {size:.3f}, above "
        f"{LEVEL_BAND[1] * alpha:g}"
        for size in out.loc[liberal, "size"]
    ]
    informative = out["informative"].astype(bool) & out["p_value"].notna() & (out["limit"] == "")
    for name, (procedure, adjust) in FAMILIES.items():
        members = np.flatnonzero(informative & (out["primary"].astype(bool) == (name == "confirmatory")))
        family = adjust(out.loc[members, "p_value"], out.loc[members, "p_min"], alpha=alpha)
        kept = members[family.testable]
        out.loc[kept, "family"] = name
        out.loc[kept, "procedure"] = procedure
        out.loc[kept, "family_size"] = family.size
        out.loc[kept, "p_adjusted"] = family.adjusted[family.testable]
        out.loc[members, "threshold"] = family.threshold
    out.loc[~out["informative"].astype(bool), "family"] = "uninformative"
    out["significant"] = out["p_adjusted"] < alpha
    out["nominal"] = (out["p_value"] < alpha) & ~out["significant"]
    out["alpha"] = alpha
    return out[list(DECIDED_SCHEMA)].astype(
        {"primary": bool, "informative": bool, "significant": bool, "nominal": bool, "family_size": int}
    )


def intersection_union_p(p_values: Sequence[float], same_side: Sequence[bool]) -> float:
    """The intersection-union test's p of "every specification shows the verdict": the largest of their
    ``p_values``, 1 when any specification's estimate lies on the other side (``same_side`` false) or has no
    p (NaN)."""
    p = np.asarray(p_values, dtype=float)
    if not len(p) or np.isnan(p).any() or not np.all(same_side):
        return 1.0
    return float(p.max())


def primary_family_sizes(hypotheses: pd.DataFrame | None, ids: Sequence[str]) -> dict[str, int]:
    """The size of the confirmatory family each primary question ``ids`` (hypothesis ids) is in, from the run's
    hypotheses; 0 for one left out of it (untestable on its design, or not among them); 1 each without
    hypotheses (a claim is then held to alpha itself)."""
    if hypotheses is None:
        return dict.fromkeys(ids, 1)
    confirmatory = hypotheses[hypotheses["family"] == "confirmatory"].set_index("hypothesis")["family_size"]
    return {h: int(confirmatory.get(h, 0)) for h in ids}


def family_level(alpha: float, family_size: int) -> float:
    """The level a claim about a primary question is held to in a confirmatory family of ``family_size``
    (Bonferroni's alpha / K; alpha itself in a family of one, or without hypotheses); 0 for a question left out
    of the family (size 0: untestable on its design), which then makes no claim."""
    return alpha / int(family_size) if family_size else 0.0


def _difference_errors(weights: np.ndarray, biased: np.ndarray, decisive: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per row of ``weights`` (resamples x units: how often each unit is drawn), each specification's share
    difference from the first's and its linearized (delta-method, cluster-robust) standard error: the root of
    the weighted sum of the units' squared influences (b_k - theta_k d_k) / D_k - (b_0 - theta_0 d_0) / D_0."""
    x, y = biased, decisive
    s, t = x[:, :1], y[:, :1]
    big_b, big_d = weights @ x, weights @ y
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = big_b / big_d
        own, own_d = theta[:, :1], big_d[:, :1]
        spec = (weights @ (x * x)) - 2 * theta * (weights @ (x * y)) + theta**2 * (weights @ (y * y))
        cross = (
            (weights @ (x * s))
            - own * (weights @ (x * t))
            - theta * (weights @ (y * s))
            + theta * own * (weights @ (y * t))
        )
        first = spec[:, :1]
        variance = spec / big_d**2 - 2 * cross / (big_d * own_d) + first / own_d**2
    return (theta - own)[:, 1:], np.sqrt(np.maximum(variance[:, 1:], 0.0))


def differences_from_first(
    biased: np.ndarray, decisive: np.ndarray, *, replicates: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Whether each specification's share differs from the first's (the run's own) beyond sampling noise.

    ``biased`` and ``decisive`` (units x specifications): per unit, its count of pairs preferring the more
    stereotyping sentence and of decisive pairs under each specification (0 and 0 where the specification
    leaves the unit out). A specification's share is the column's ratio of sums. Each difference from the
    first column is studentized by its linearized cluster-robust standard error; the units are resampled with
    replacement ``replicates`` times (seeded), every column alike, and studentized again in each resample
    (the percentile-t bootstrap, whose tails hold with few and unequal clusters where one standard error for
    every resample does not); a difference's p is the share of resamples whose largest centred studentized
    difference reaches it (single-step max-t: family-wise over the specifications).

    Returns (the differences in percentage points, their adjusted p), the first column's NaN, and p = 1 where
    a difference cannot vary (no unit's outcome moves between the two)."""
    biased, decisive = np.asarray(biased, dtype=float), np.asarray(decisive, dtype=float)
    units, k = decisive.shape
    p = np.ones(k)
    p[0] = np.nan
    observed, error = (a[0] for a in _difference_errors(np.ones((1, units)), biased, decisive))
    difference = np.concatenate([[np.nan], 100 * observed])
    varies = np.isfinite(error) & (error > 1e-12) & np.isfinite(observed)
    if units < 2 or not varies.any():  # one unit, one specification, or no unit that moves
        return difference, p
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(units, np.full(units, 1 / units), size=replicates).astype(float)
    moves, errors = _difference_errors(weights, biased, decisive)
    with np.errstate(invalid="ignore", divide="ignore"):
        # a resample that draws no unit that moves has no error: its centred difference is infinitely far
        centred = np.abs(moves[:, varies] - observed[varies]) / errors[:, varies]
    centred = np.where(np.isnan(centred), np.inf, centred)
    largest = centred.max(axis=1)
    statistic = np.abs(observed[varies]) / error[varies]
    p[1:][varies] = [(1 + np.sum(largest >= z)) / (1 + replicates) for z in statistic]
    return difference, p
