"""The CrowS-Pairs configuration's checks beyond the schema (:attr:`plmfair.studies.StudyConfig.check`): the
data sets a run scores are declared, chains of ``direction_from`` end, the masked-LM protocol is one of
the registry's; and its keys an earlier version had (:attr:`plmfair.studies.StudyConfig.moved`)."""

from __future__ import annotations

from plmfair.crows_pairs.plan import crows_pairs_sets
from plmfair.errors import ConfigError, did_you_mean
from plmfair.scoring.protocols import PROTOCOLS, family_protocols

MOVED = {
    "crows_pairs.alpha": "a run has one significance level for all its tests (its hypotheses adjust them "
    "together); set analysis.alpha instead",
}


def check(config: dict) -> None:
    """Names used by the study are declared and fit it; one line naming the key otherwise."""
    sets = crows_pairs_sets(config)
    for i, name in enumerate(config["crows_pairs"]["datasets"]):
        if name not in sets:
            raise ConfigError(
                f"config error at crows_pairs.datasets.{i}: data set {name!r} is not declared under "
                f"datasets.crows_pairs{did_you_mean(name, sets)} (declared: {sorted(sets)})"
            )
    for name, entry in sets.items():
        chain, source = [name], entry.get("direction_from")
        while source:
            if source not in sets:
                raise ConfigError(
                    f"config error at datasets.crows_pairs.{chain[-1]}.direction_from: data set {source!r} "
                    f"is not declared under datasets.crows_pairs{did_you_mean(source, sets)}"
                )
            if source in chain:
                raise ConfigError(
                    f"config error at datasets.crows_pairs.{name}.direction_from: a cycle "
                    f"({' -> '.join([*chain, source])}); a chain of direction_from must end in a data "
                    f"set with its own directions"
                )
            chain.append(source)
            source = sets[source].get("direction_from")
    check_protocol(config["crows_pairs"]["protocol"])


def check_protocol(name: str) -> None:
    """``crows_pairs.protocol`` names a masked-LM protocol of the registry (a new protocol is its module
    and its registry line, with no list to extend here or in the schema)."""
    masked = family_protocols("mlm")
    if name in masked:
        return
    if name in PROTOCOLS:
        raise ConfigError(
            f"config error at crows_pairs.protocol: {name!r} is the protocol of {PROTOCOLS[name].family} "
            f"models, used for them whatever this key says; this key chooses the masked LMs' protocol, "
            f"one of {masked}"
        )
    raise ConfigError(
        f"config error at crows_pairs.protocol: unknown protocol {name!r}{did_you_mean(name, masked)}; "
        f"the masked-LM protocols are {masked}"
    )
