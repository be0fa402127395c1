"""plmfair.registry: one registry type for every name-to-thing table of the project."""

from __future__ import annotations

import pytest

from plmfair.cloze.breakdowns import CLOZE_ATTRIBUTES
from plmfair.crows_pairs.breakdowns import CROWS_ATTRIBUTES
from plmfair.errors import ConfigError
from plmfair.plan.targets import all_tables
from plmfair.registry import Registry, load_function, load_object
from plmfair.rendering.table_spec import TableSpec
from plmfair.resources import NEEDS, Need
from plmfair.scoring import FAMILIES
from plmfair.scoring.masking import MASKING_RULES
from plmfair.scoring.protocols import CLOZE_PROTOCOLS, PROTOCOLS, ClozeProtocol, Protocol
from plmfair.studies import STUDIES, Study
from plmfair_demo import TINY_KINDS, TinyKind


def test_lookup_registration_and_the_error_of_an_unknown_name():
    things = Registry("colour", {"red": 1, "green": 2}, error=ConfigError)
    things.register("blue", 3)
    assert things["blue"] == 3 and list(things) == ["red", "green", "blue"] and len(things) == 3
    with pytest.raises(
        ConfigError,
        match=r"^at x: unknown colour 'gren' \(did you mean 'green'\?\); known: blue, "
        r"green, red$",
    ):
        things.get("gren", where="at x")
    with pytest.raises(ValueError, match="registered twice"):
        things.register("red", 4)
    assert things.get("nothing", None) is None


def test_a_lazy_entry_loads_only_when_looked_up():
    things = Registry("table spec", {"spec": "plmfair.rendering.table_spec:TableSpec", "bad": "plmfair.nowhere:x"})
    assert isinstance(things._entries["spec"], str) and things.module_of("spec") == "plmfair.rendering.table_spec"
    assert things["spec"] is TableSpec and things._entries["spec"] is TableSpec
    with pytest.raises(LookupError, match="'plmfair.nowhere:x' names nothing"):
        things["bad"]
    with pytest.raises(LookupError, match="names no function"):
        load_function("plmfair.registry:__doc__")
    assert load_object("plmfair.registry:Registry") is Registry


@pytest.mark.parametrize(
    "registry, kind",
    [
        (FAMILIES, object),
        (PROTOCOLS, Protocol),
        (CLOZE_PROTOCOLS, ClozeProtocol),
        (MASKING_RULES, Protocol),
        (STUDIES, Study),
        (all_tables(), TableSpec),
        (NEEDS, Need),
        (CLOZE_ATTRIBUTES, object),
        (CROWS_ATTRIBUTES, object),
        (TINY_KINDS, TinyKind),
    ],
    ids=lambda value: getattr(value, "kind", ""),
)
def test_every_registry_of_the_project_is_one(registry, kind):
    """Every name-to-thing table of the project is a Registry whose entries load, and an unknown name in
    it gets a did-you-mean."""
    assert isinstance(registry, Registry)
    assert all(isinstance(entry, kind) for entry in registry.values())
    with pytest.raises(Exception, match="did you mean"):
        registry.get(next(iter(registry)) + "x")


def test_a_study_package_registers_on_two_lines_and_a_malformed_one_is_one_line(tmp_path):
    """A study package's schema part names its studies and their place on two lines of their own, read
    without YAML (every job reads the registry); either line missing or malformed is one line naming the file."""
    from plmfair.errors import ConfigError
    from plmfair.studies import _package

    good = tmp_path / "mine" / "config.schema.yaml"
    good.parent.mkdir()
    good.write_text("# mine\nx-studies: {mine: STUDY, other: OTHER}\nx-order: 7\nproperties: {}\n")
    package = _package(good)
    assert (package.name, package.studies, package.order) == ("mine", {"mine": "STUDY", "other": "OTHER"}, 7)
    for text in ("x-studies: {mine: STUDY}\n", "x-order: 1\n", "x-studies: {mine}\nx-order: 1\n"):
        good.write_text(text)
        with pytest.raises(ConfigError, match=r"mine/config.schema.yaml: a study package's schema names its studies"):
            _package(good)
