"""The error rates of the robustness statements (plmfair.multiplicity), on simulated data run through the
workflow's own code: CrowS-Pairs pair scores (plmfair.crows_pairs.robustness.robustness) and cloze annotation
scores (plmfair.cloze.robustness.cloze_robustness, :func:`cloze_rates`).

A simulated data set: n pairs, each with a latent margin u ~ Normal(mu, 1) (mu = 0: no preference; mu > 0: a
uniform one, the same under every specification); each of 4 protocols scores it u + Normal(0, 0.5), each in
bf16 as the fp32 score plus Normal(0, 0.01); half the pairs, at random, are native and half translated. So 4
protocols x 2 precisions x 3 data choices = 24 specifications, every one with the same population share. Where
writers are given (their real pair counts), each writer adds Normal(0, sd) to the latent margins of their pairs.

Printed per design and scenario: how often the verdict is called robust (no effect: a false claim; a uniform
effect: the power), how often some specification is said to differ from the run's own (a false alarm in
both, since no specification differs), and how often the old rule (some specification's unadjusted verdict is
not the run's: "fragile") fired.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from plmfair.crows_pairs.robustness import robustness

PROTOCOLS = ("nangia", "all_tokens", "within_word_l2r", "aul")
PRECISIONS = ("fp32", "bf16")


def _pair_file(ids: np.ndarray, margins: np.ndarray, origin: np.ndarray, clusters: np.ndarray | None) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "pair_id": ids,
            "origin": origin,
            "status": "ok",
            "sent_more_score": margins,
            "sent_less_score": 0.0,
            "tolerance": 1e-9,
            "undecided": False,
        }
    )
    if clusters is not None:
        frame["cluster"] = clusters
    return frame


def simulated_run(n: int, mu: float, rng, *, writer_sizes: np.ndarray | None = None, writer_sd: float = 0.0) -> dict:
    """One model's run on one simulated data set, its passes as the robustness job reads them."""
    latent = rng.normal(mu, 1.0, n)
    clusters = None
    if writer_sizes is not None:
        clusters = np.repeat([f"w{i}" for i in range(len(writer_sizes))], writer_sizes)[:n]
        effects = rng.normal(0.0, writer_sd, len(writer_sizes))
        latent = latent + np.repeat(effects, writer_sizes)[:n]
    ids = np.array([f"p{i}" for i in range(n)])
    origin = np.where(rng.random(n) < 0.5, "native", "translated")
    passes = []
    for protocol in PROTOCOLS:
        fp32 = latent + rng.normal(0.0, 0.5, n)
        for precision in PRECISIONS:
            margins = fp32 if precision == "fp32" else fp32 + rng.normal(0.0, 0.01, n)
            passes.append(
                {"protocol": protocol, "precision": precision, "scores": _pair_file(ids, margins, origin, clusters)}
            )
    return {"dataset": "sim", "model": "m", "protocol": "nangia", "precision": "fp32", "passes": passes}


def robustness_rates(
    n: int,
    mu: float,
    *,
    replicates: int,
    bootstrap: int,
    seed: int,
    alpha: float,
    writer_sizes: np.ndarray | None = None,
    writer_sd: float = 0.0,
) -> dict:
    """The rates of the robustness statements over ``replicates`` simulated data sets (a family of one)."""
    rng = np.random.default_rng([seed, n, int(1000 * mu), int(100 * writer_sd)])
    robust = differs = fragile = preference = 0
    for r in range(replicates):
        run = simulated_run(n, mu, rng, writer_sizes=writer_sizes, writer_sd=writer_sd)
        specs, summary = robustness(
            [run],
            langs={"sim": "fr"},
            ties=[],
            exclusions=None,
            alpha=alpha,
            max_grid=32,
            hypotheses=None,
            replicates=bootstrap,
            seed=r,
        )
        (row,) = summary.to_dict(orient="records")
        robust += bool(row["robust"])
        differs += row["differing"] > 0
        fragile += bool((specs["verdict"] != row["verdict"]).any())
        preference += row["verdict"] != "no preference"
    return {
        "specifications": int(row["specifications"]),
        "robust": robust / replicates,
        "differs": differs / replicates,
        "fragile (old rule)": fragile / replicates,
        "primary rejects": preference / replicates,
    }


def cloze_rates(simulate, *, replicates: int, permutations: int, seed: int, alpha: float) -> dict:
    """The rates of the cloze robustness statements over ``replicates`` data sets drawn by ``simulate(rng)``
    (annotation scores of one model): how often the verdict that the groups differ is robust, how often the
    primary test finds a difference, and how often the old unadjusted rule ("fragile": some specification's
    verdict at alpha is not the run's own) fired."""
    from plmfair.cloze.robustness import cloze_robustness

    rng = np.random.default_rng([seed, 23])
    robust = fragile = differ = 0
    for r in range(replicates):
        specs, summary = cloze_robustness(
            simulate(rng), alpha=alpha, permutations=permutations, seed=r, cloze_set="sim", hypotheses=None
        )
        (row,) = summary.to_dict(orient="records")
        robust += bool(row["robust"])
        differ += row["verdict"] == "groups differ"
        fragile += bool((specs["verdict"] != row["verdict"]).any())
    return {
        "specifications": int(row["specifications"]),
        "robust": robust / replicates,
        "fragile (old rule)": fragile / replicates,
        "primary rejects": differ / replicates,
    }
