"""Model entries of the config (``models.<name>``) as specs; torch-free.

An entry has ``hf_id`` (a Hugging Face id) or ``path`` (a local folder), ``family`` (a
name registered in :data:`plmfair.scoring.FAMILIES`: ``mlm``, ``seq2seq`` or ``causal``),
optional ``revision``, ``uncased`` (lower-case input first, as the CrowS-Pairs protocol
does for uncased models) and ``languages`` (the data languages it is evaluated on; empty
= all). Loading is :func:`plmfair.scoring.loader.load`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from plmfair.errors import ConfigError
from plmfair.scoring import get_family


@dataclass(frozen=True)
class ModelSpec:
    """One model entry of the config."""

    name: str
    family: str
    hf_id: str | None = None
    path: str | None = None
    revision: str | None = None
    uncased: bool = False
    languages: tuple[str, ...] = field(default_factory=tuple)

    @property
    def source(self) -> str:
        return self.path if self.path else self.hf_id  # type: ignore[return-value]

    def runs_on(self, lang: str) -> bool:
        return not self.languages or lang in self.languages

    def metadata(self) -> dict:
        return {
            "model": self.name,
            "model_source": self.source,
            "model_revision": self.revision,
            "model_family": self.family,
            "model_uncased": self.uncased,
        }


def model_spec(name: str, entry: dict) -> ModelSpec:
    """Validate one ``models.<name>`` entry and turn it into a :class:`ModelSpec`."""
    if not isinstance(entry, dict):
        raise ConfigError(f"models.{name}: expected a mapping with hf_id or path, family, ...")
    if bool(entry.get("hf_id")) == bool(entry.get("path")):
        raise ConfigError(f"models.{name}: give exactly one of `hf_id` (a Hugging Face id) or `path` (a local folder)")
    family = get_family(entry.get("family"), where=f"models.{name}.family").name
    return ModelSpec(
        name=name,
        family=family,
        hf_id=entry.get("hf_id"),
        path=entry.get("path"),
        revision=entry.get("revision"),
        uncased=bool(entry.get("uncased", False)),
        languages=tuple(entry.get("languages") or ()),
    )


def spec_from_entry(entry: dict) -> ModelSpec:
    """A :class:`ModelSpec` from a scoring rule's ``model`` parameter: the ``models.<name>`` entry
    with its ``name`` added (``get_model_entry`` in ``common.smk``)."""
    entry = dict(entry)
    return model_spec(entry.pop("name"), entry)


def specs_from_config(config: dict) -> dict[str, ModelSpec]:
    """Every ``models`` entry of the config as a spec."""
    return {name: model_spec(name, entry) for name, entry in (config.get("models") or {}).items()}
