"""Significance tests and intervals used across the studies.

- :func:`binomial_summary`: exact two-sided binomial test of k successes in n against p0,
  with the Wilson score interval (scipy ``binomtest`` and ``proportion_ci(method="wilson")``).
- :func:`bonferroni`: Bonferroni adjustment, min(1, p x m).
- :func:`mcnemar_exact`: exact McNemar test on paired binary outcomes: the two-sided binomial
  test of b against b + c discordant pairs with p = 0.5; :func:`paired_mcnemar` runs it for
  every two conditions on the items they share (joined on item id).
- :func:`win_loss` and :func:`sign_test`: two conditions compared on the same units (win,
  loss, tie of their mean scores per unit) with an exact sign test, as dialect-robust
  evaluation compares dialects on the same examples; :func:`mixed_effects`: a linear mixed model (statsmodels
  ``MixedLM``, REML) with a random intercept per unit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats


@dataclass(frozen=True)
class BinomialSummary:
    k: int
    n: int
    proportion: float
    ci_low: float
    ci_high: float
    p_value: float


def binomial_summary(k: int, n: int, *, p0: float = 0.5, confidence: float = 0.95) -> BinomialSummary:
    """Proportion k/n with its Wilson interval and the exact two-sided binomial test against ``p0``.

    With n = 0 every field but k and n is NaN.
    """
    if n == 0:
        nan = float("nan")
        return BinomialSummary(k, n, nan, nan, nan, nan)
    res = stats.binomtest(int(k), int(n), p0, alternative="two-sided")
    ci = res.proportion_ci(confidence_level=confidence, method="wilson")
    return BinomialSummary(int(k), int(n), k / n, float(ci.low), float(ci.high), float(res.pvalue))


def bonferroni(p_values: Sequence[float], m: int | None = None) -> np.ndarray:
    """Bonferroni-adjusted p-values min(1, p x m), m the number of non-missing entries unless
    given (NaN stays NaN)."""
    p = np.asarray(p_values, dtype=float)
    m = int(np.sum(~np.isnan(p))) if m is None else m
    return np.minimum(1.0, p * m)


@dataclass(frozen=True)
class McNemar:
    b: int  # first positive, second negative
    c: int  # first negative, second positive
    p_value: float


def mcnemar_exact(first: Sequence[bool], second: Sequence[bool]) -> McNemar:
    """Exact McNemar test of two paired binary outcomes (same items, same order)."""
    a = np.asarray(first, dtype=bool)
    b_ = np.asarray(second, dtype=bool)
    if a.shape != b_.shape:
        raise ValueError("paired outcomes must have the same length")
    b = int(np.sum(a & ~b_))
    c = int(np.sum(~a & b_))
    p = 1.0 if b + c == 0 else float(stats.binomtest(b, b + c, 0.5, alternative="two-sided").pvalue)
    return McNemar(b, c, p)


def paired_mcnemar(outcomes: Mapping[str, pd.Series]) -> pd.DataFrame:
    """Exact McNemar test for every two conditions (sorted by name) on the items both have.

    ``outcomes`` maps a condition (a model, a language) to a boolean Series indexed by item
    id. Columns: a, b, n (shared items), score_a, score_b (percent of True on those items),
    a_only, b_only (discordant items), p_value, p_adjusted (Bonferroni across the rows).
    """
    rows = []
    for a, b in combinations(sorted(outcomes), 2):
        sa, sb = outcomes[a], outcomes[b]
        ids = sa.index[sa.index.isin(sb.index)]
        ba, bb = sa.loc[ids].to_numpy(dtype=bool), sb.loc[ids].to_numpy(dtype=bool)
        res = mcnemar_exact(ba, bb)
        n = len(ids)
        rows.append({
            "a": a, "b": b, "n": n,
            "score_a": 100 * ba.mean() if n else float("nan"), "score_b": 100 * bb.mean() if n else float("nan"),
            "a_only": res.b, "b_only": res.c, "p_value": res.p_value,
        })
    out = pd.DataFrame(rows, columns=["a", "b", "n", "score_a", "score_b", "a_only", "b_only", "p_value"])
    out["p_adjusted"] = bonferroni(out["p_value"].to_numpy()) if len(out) else []
    return out


def sign_test(wins_a: int, wins_b: int) -> tuple[float, float]:
    """Exact binomial (sign) test of ``wins_a`` among ``wins_a + wins_b`` against p = 0.5:
    (two-sided p, one-sided p for the alternative that a wins more). Without any win, (1, 1)."""
    n = wins_a + wins_b
    if n == 0:
        return 1.0, 1.0
    two = stats.binomtest(int(wins_a), n, 0.5, alternative="two-sided").pvalue
    one = stats.binomtest(int(wins_a), n, 0.5, alternative="greater").pvalue
    return float(two), float(one)


def win_loss(values: pd.DataFrame, *, unit: Sequence[str], condition: str, value: str,
             pairs: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Compare conditions on the same units, as dialect-robust evaluation compares dialects.

    For every unit (a sentence, a pair) each condition's score is the mean of ``value`` over
    its rows of that unit; for each pair of conditions (a, b), over the units both have:
    n_units, wins_a (a's mean higher), wins_b, ties, and the sign test of wins_a among the
    decisive units (p_two_sided; p_one_sided for "a wins more"). With no shared unit the
    p-values are NaN (nothing to test); with only ties they are 1.
    """
    means = values.groupby([*unit, condition], sort=False)[value].mean().unstack(condition)
    rows = []
    for a, b in pairs:
        both = means.reindex(columns=[a, b]).dropna()
        wins_a, wins_b = int((both[a] > both[b]).sum()), int((both[a] < both[b]).sum())
        two, one = sign_test(wins_a, wins_b) if len(both) else (float("nan"), float("nan"))
        rows.append({"a": a, "b": b, "n_units": len(both), "wins_a": wins_a, "wins_b": wins_b,
                     "ties": len(both) - wins_a - wins_b, "p_two_sided": two, "p_one_sided": one})
    return pd.DataFrame(rows, columns=["a", "b", "n_units", "wins_a", "wins_b", "ties", "p_two_sided",
                                       "p_one_sided"])


@dataclass(frozen=True)
class MixedEffects:
    """Fixed effects of a linear mixed model: one row per term (term, estimate, std_err,
    ci_low, ci_high, p_value), whether the fit converged, and the random-effect variances."""

    terms: pd.DataFrame
    converged: bool
    variances: dict[str, float]
    message: str


def mixed_effects(data: pd.DataFrame, formula: str, *, groups: str, variance_components: Mapping[str, str] | None = None,
                  confidence: float = 0.95) -> MixedEffects:
    """Fit ``formula`` with a random intercept per level of the column ``groups`` by REML
    (statsmodels ``MixedLM``, its default optimiser), or, with ``variance_components``
    (name -> formula such as ``0 + C(u_id)``), with those crossed random effects instead.

    A fit that does not converge, or fails, is returned with ``converged`` False and a
    message, never dropped; its estimates are whatever statsmodels left (NaN when none).
    """
    import warnings

    import statsmodels.formula.api as smf

    if variance_components:
        # Crossed random effects: one group holding every row, a variance component each.
        model = smf.mixedlm(formula, data, groups=np.ones(len(data)), re_formula="0",
                            vc_formula=dict(variance_components))
    else:
        model = smf.mixedlm(formula, data, groups=data[groups])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = model.fit(reml=True)
        except (ValueError, np.linalg.LinAlgError) as exc:
            nan = np.full(len(model.exog_names), np.nan)
            terms = pd.DataFrame({"term": model.exog_names, "estimate": nan, "std_err": nan, "ci_low": nan,
                                  "ci_high": nan, "p_value": nan})
            return MixedEffects(terms, False, {}, f"fit failed: {exc}")
    fixed = fit.model.exog_names
    ci = fit.conf_int(alpha=1 - confidence).loc[fixed]
    terms = pd.DataFrame({
        "term": fixed,
        "estimate": fit.fe_params.loc[fixed].to_numpy(),
        "std_err": fit.bse_fe.loc[fixed].to_numpy(),
        "ci_low": ci.iloc[:, 0].to_numpy(),
        "ci_high": ci.iloc[:, 1].to_numpy(),
        "p_value": fit.pvalues.loc[fixed].to_numpy(),
    })
    if variance_components:
        variances = dict(zip(fit.model.exog_vc.names, np.asarray(fit.vcomp, dtype=float).tolist(), strict=True))
    else:
        variances = {groups: float(np.asarray(fit.cov_re)[0, 0])}
    notes = sorted({str(w.message).split(".")[0] for w in caught if "converge" in str(w.message).lower()
                    or "singular" in str(w.message).lower() or "boundary" in str(w.message).lower()})
    converged = bool(fit.converged) and not np.isnan(terms["std_err"]).any()
    return MixedEffects(terms, converged, variances, "; ".join(notes))
