"""Linear mixed models: :func:`crossed_mixed_model`, REML with one random intercept, or two crossed ones (sentence
and annotator), fitted per block of the design (:func:`design_blocks`), checked to be at the optimum, its fixed
effects and standard errors those of lme4's ``lmer``; :func:`effects_rows`, a fit's fixed effects as rows.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

if TYPE_CHECKING:  # statsmodels' types only: it loads where a mixed model is fitted
    from statsmodels.regression.mixed_linear_model import MixedLM, MixedLMParams

log = logging.getLogger(__name__)


EFFECTS_COLUMNS = {
    "term": "fixed-effect term: Intercept, group[T.<group>] or lang[T.<lang>] (dataset[T.<name>] for CrowS-Pairs)",
    "reference": "the level the term is measured against",
    "estimate": "fixed-effect estimate (REML)",
    "std_err": "its standard error",
    "ci_low": "Wald 95% interval, lower bound (not printed: the Wald test's level is not shown on these designs)",
    "ci_high": "Wald 95% interval, upper bound",
    "p_value": "two-sided Wald p-value of the mixed model (not printed, and no mark: the same reason)",
    "n_obs": "rows the model was fitted on",
    "converged": "the optimiser converged at the REML optimum and every standard error is finite (kept either way)",
}


@dataclass(frozen=True)
class MixedEffects:
    """Fixed effects of a linear mixed model: one row per term (term, estimate, std_err,
    ci_low, ci_high, p_value), whether the fit converged, and the random-effect variances
    (with the residual's)."""

    terms: pd.DataFrame
    converged: bool
    variances: dict[str, float]
    message: str


def design_blocks(left: Sequence, right: Sequence) -> np.ndarray:
    """The connected components of the bipartite graph whose edges are ``(left[i], right[i])``
    (sentences and the annotators who answered them): one block index per edge. In MozArt each
    annotator answers one batch of sentences, so the blocks are the batches; random effects of
    different blocks are independent, which makes a crossed model cheap to fit."""
    # scipy is heavy: imported where a test is computed
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    left_codes, left_levels = pd.factorize(pd.Series(left, dtype="object"))
    right_codes, right_levels = pd.factorize(pd.Series(right, dtype="object"))
    n_left = len(left_levels)
    size = n_left + len(right_levels)
    graph = coo_matrix((np.ones(len(left_codes)), (left_codes, n_left + right_codes)), shape=(size, size))
    _, labels = connected_components(graph, directed=False)
    return labels[left_codes]


def _gls(
    model: MixedLM, variances: Mapping[str, float], scale: float, blocks: np.ndarray, levels: Mapping[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Fixed effects and their covariance by generalised least squares with the fitted variances,
    V = sum_k tau_k Z_k Z_k' + sigma^2 I, block by block: lme4's ``fixef`` and ``vcov``."""
    x, y = model.exog, model.endog
    xtvx = np.zeros((x.shape[1], x.shape[1]))
    xtvy = np.zeros(x.shape[1])
    for block in np.unique(blocks):
        rows = np.flatnonzero(blocks == block)
        v = scale * np.eye(len(rows))
        for name, codes in levels.items():
            same = codes[rows][:, None] == codes[rows][None, :]
            v += variances[name] * same
        solved = np.linalg.solve(v, np.column_stack([x[rows], y[rows]]))
        xtvx += x[rows].T @ solved[:, :-1]
        xtvy += x[rows].T @ solved[:, -1]
    cov = np.linalg.inv(xtvx)
    return cov @ xtvy, cov


def _at_optimum(model: MixedLM, params: MixedLMParams, *, step: float = 0.01, tol: float = 1e-6) -> bool:
    """No variance component moved by ``step`` (relative) raises the profile REML log-likelihood by
    more than ``tol``; a component at zero is only moved up."""
    # statsmodels is heavy: only the mixed models need it
    from statsmodels.regression.mixed_linear_model import MixedLMParams

    base = model.loglike(params, profile_fe=True)
    for k in range(len(params.vcomp)):
        for factor in (1 - step, 1 + step) if params.vcomp[k] > 1e-8 else (1.0,):
            vcomp = params.vcomp.copy()
            vcomp[k] = vcomp[k] * factor if vcomp[k] > 1e-8 else step
            moved = MixedLMParams.from_components(fe_params=params.fe_params, cov_re=params.cov_re, vcomp=vcomp)
            if model.loglike(moved, profile_fe=True) > base + tol:
                return False
    return True


def crossed_mixed_model(
    data: pd.DataFrame, formula: str, *, effects: Sequence[str], confidence: float = 0.95
) -> MixedEffects:
    """Fit ``formula`` with a random intercept for each column of ``effects`` (one, or two crossed,
    as ``(1|sentence) + (1|annotator)`` in lme4) by REML.

    The rows are split into the blocks of the design (:func:`design_blocks` of two effects; the
    levels of a single one), statsmodels ``MixedLM`` fits the effects as variance components within blocks with
    Powell's method then L-BFGS and, unless that reached the optimum, with its default optimisers
    too, keeping the better optimum. ``converged`` means the optimiser converged, the solution passes
    :func:`_at_optimum` and every standard error is finite. Fixed effects, standard errors, Wald
    intervals and p-values are those of generalised least squares at the fitted variances
    (lme4's ``fixef`` and ``vcov``); ``variances`` holds each effect's variance and the residual's."""

    # statsmodels is heavy: only the mixed models need it
    import statsmodels.formula.api as smf

    if len(effects) not in (1, 2):
        raise ValueError(f"one or two random intercepts, not {len(effects)}")
    blocks = (
        design_blocks(data[effects[0]], data[effects[1]]) if len(effects) == 2 else pd.factorize(data[effects[0]])[0]
    )
    model = smf.mixedlm(
        formula, data, groups=blocks, re_formula="0", vc_formula={name: f"0 + C({name})" for name in effects}
    )
    names = list(model.exog_names)
    if np.ptp(model.endog) == 0:  # every score the same (a model that never hits): nothing to fit
        nan = np.full(len(names), np.nan)
        terms = pd.DataFrame(
            {"term": names, "estimate": nan, "std_err": nan, "ci_low": nan, "ci_high": nan, "p_value": nan}
        )
        return MixedEffects(terms, False, {}, "no variation in the outcome")
    fits, notes = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in (["powell", "lbfgs"], None):  # statsmodels' default optimisers only if needed
            try:
                fits.append(model.fit(reml=True, method=method))
            except (ValueError, np.linalg.LinAlgError) as exc:
                notes.append(f"{method or 'default'} failed: {exc}")
                continue
            if fits[-1].converged and _at_optimum(model, fits[-1].params_object):
                break
        best = max(fits, key=lambda f: f.llf if np.isfinite(f.llf) else -np.inf) if fits else None
    if not fits:
        nan = np.full(len(names), np.nan)
        terms = pd.DataFrame(
            {"term": names, "estimate": nan, "std_err": nan, "ci_low": nan, "ci_high": nan, "p_value": nan}
        )
        return MixedEffects(terms, False, {}, "; ".join(notes) or "no fit")
    fit = best
    assert fit is not None  # some fit, the best of them
    variances = dict(zip(model.exog_vc.names, np.asarray(fit.vcomp, dtype=float).tolist(), strict=True))
    levels = {name: pd.factorize(data[name])[0] for name in effects}
    try:
        beta, cov = _gls(model, variances, float(fit.scale), blocks, levels)
        se = np.sqrt(np.diag(cov))
    except np.linalg.LinAlgError as exc:
        beta, se = np.asarray(fit.fe_params, dtype=float), np.full(len(names), np.nan)
        notes.append(f"fixed-effect covariance singular: {exc}")
    z = stats.norm.ppf(0.5 + confidence / 2)
    terms = pd.DataFrame(
        {
            "term": names,
            "estimate": beta,
            "std_err": se,
            "ci_low": beta - z * se,
            "ci_high": beta + z * se,
            "p_value": 2 * stats.norm.sf(np.abs(beta / se)),
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        optimum = _at_optimum(model, fit.params_object)
    if not optimum:
        notes.append("not at the REML optimum")
    converged = bool(fit.converged) and optimum and bool(np.isfinite(se).all())
    return MixedEffects(terms, converged, {**variances, "residual": float(fit.scale)}, "; ".join(notes))


def term_name(raw: str) -> str:
    """``C(group, Treatment(reference='MN'))[T.FN]`` -> ``group[T.FN]``."""
    return re.sub(r"^C\((\w+).*?\)\[", r"\1[", raw)


def effects_rows(fit: MixedEffects, *, reference: Mapping[str, str], context: str) -> pd.DataFrame:
    """The fixed effects of a fit as rows (term names shortened, reference level of each term,
    converged), a warning logged when the fit did not converge."""
    if not fit.converged:
        log.warning(
            "%s: the mixed model did not converge (%s); its rows are kept with converged = false",
            context,
            fit.message or "no standard errors",
        )
    terms = fit.terms.assign(term=[term_name(t) for t in fit.terms["term"]])
    terms["reference"] = [reference.get(t.split("[")[0], reference.get("Intercept", "")) for t in terms["term"]]
    return terms.assign(converged=fit.converged)
