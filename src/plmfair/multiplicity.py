"""Multiple testing: which hypotheses of a family can be rejected at all, and the adjusted p-values.

- :func:`holm`: Holm's step-down adjustment (family-wise error);
- :func:`tarone_family`: Tarone's (1990) rule for discrete tests: the hypotheses whose smallest
  attainable p could reach the family's threshold; the others are left out of the family (they can never
  be rejected, and counting them would only make the others harder to reject);
- :func:`family_wise` (Holm) and :func:`false_discovery` (Benjamini & Yekutieli 2001, valid under any
  dependence between the tests), each over the hypotheses Tarone's rule keeps.

Each returns, per hypothesis, whether it was in the family (testable), its adjusted p (NaN outside) and
the family's size; a hypothesis is rejected when its adjusted p < alpha.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


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


def _adjust(p_values, smallest, threshold, adjust) -> Family:
    p = np.asarray(p_values, dtype=float)
    testable, limit = tarone_family(smallest, threshold)
    testable = testable & ~np.isnan(p)
    adjusted = np.full(p.shape, np.nan)
    if testable.any():
        adjusted[testable] = adjust(p[testable])
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
    "limit": "why the design cannot support the test's level ('' when it can: the study's own rule, or the plan's "
    "when its size on the design is outside LEVEL_BAND); such a test is untestable",
}


def hypotheses(rows: pd.DataFrame, *, study: str, source: str, question, primary, p_value: str, informative):
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


ANALYSIS_PLAN_SCHEMA = {
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


def testable_on_design(p_min, size, limit, *, alpha: float):
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


def build_plan(hypotheses: pd.DataFrame, *, alpha: float) -> pd.DataFrame:
    """The run's analysis plan from every study's hypotheses (:data:`HYPOTHESIS_SCHEMA`): the primary
    questions form the confirmatory family (Holm), every other test the secondary one (Benjamini-Yekutieli
    over the whole report); within each, Tarone's rule leaves out the tests that could never reach its
    threshold, and a test whose design cannot support its level (its ``limit``, or a size outside
    LEVEL_BAND, said in ``limit``) is left out before it (both untestable); a test with
    a degenerate null distribution is uninformative (:data:`ANALYSIS_PLAN_SCHEMA`)."""
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
    return out[list(ANALYSIS_PLAN_SCHEMA)].astype(
        {"primary": bool, "informative": bool, "significant": bool, "nominal": bool, "family_size": int}
    )
