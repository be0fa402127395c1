"""One registry type for every name-to-thing table of the project (model families, protocols,
studies, tables, figures, breakdown attributes, resource needs, tiny model kinds).

A :class:`Registry` maps names to objects, or to ``"module:object"`` strings loaded on first use
(so that the DAG is planned without importing torch or pandas). An unknown name raises the
registry's error with a did-you-mean and the names that exist. After lm-evaluation-harness's
``lm_eval/api/registry.py``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, KeysView, Mapping
from typing import Any, Generic, TypeVar

from plmfair.errors import did_you_mean

T = TypeVar("T")
_MISSING = object()


def load_object(reference: str) -> Any:
    """The object ``"<module>:<name>"`` names; LookupError when there is none."""
    module, _, attr = reference.partition(":")
    try:
        found = getattr(importlib.import_module(module), attr, None) if module and attr else None
    except ModuleNotFoundError:
        found = None
    if found is None:
        raise LookupError(f"{reference!r} names nothing: write it as '<module>:<name>'")
    return found


def load_function(reference: str) -> Callable:
    """The function ``"<module>:<function>"`` names; LookupError when it names none."""
    found = load_object(reference)
    if not callable(found):
        raise LookupError(f"{reference!r} names no function: write it as '<module>:<function>'")
    return found


class Registry(Generic[T]):
    """Things of one ``kind`` by name: ``register`` adds one (an object or a ``"module:object"``
    reference, loaded when first looked up), ``registry[name]`` looks one up. ``error`` is the
    exception an unknown name raises (``where`` says which file or key named it)."""

    def __init__(
        self, kind: str, entries: Mapping[str, T | str] | None = None, *, error: type[Exception] = LookupError
    ):
        self.kind = kind
        self.error = error
        self._entries: dict[str, T | str] = {}
        self._references: dict[str, str] = {}  # a lazy entry's "module:object", kept once it is loaded
        for name, entry in (entries or {}).items():
            self.register(name, entry)

    def register(self, name: str, entry: T | str) -> T | str:
        """Add ``entry`` under ``name``; a name registered twice is a programming error."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self[name] = entry
        return entry

    def unknown(self, name: str, where: str = "") -> Exception:
        """The error an unknown ``name`` gets: did-you-mean and the names that exist."""
        at = f"{where}: " if where else ""
        return self.error(
            f"{at}unknown {self.kind} {name!r}{did_you_mean(name, self._entries)}; "
            f"known: {', '.join(sorted(self._entries)) or 'none'}"
        )

    def get(self, name: str, default: Any = _MISSING, *, where: str = "") -> T:
        """The entry called ``name`` (loaded if it is a reference); else ``default`` when one is given,
        or the registry's error naming ``where``."""
        if name not in self._entries:
            if default is not _MISSING:
                return default
            raise self.unknown(name, where)
        entry = self._entries[name]
        if name in self._references and isinstance(entry, str):  # not loaded yet
            entry = self._entries[name] = load_object(entry)
        return entry  # type: ignore[return-value]  # a loaded reference is an entry

    def module_of(self, name: str) -> str:
        """The module an entry lives in, without loading it."""
        if name in self._references:
            return self._references[name].partition(":")[0]
        entry = self._entries[name]
        return getattr(entry, "__module__", None) or type(entry).__module__

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __setitem__(self, name: str, entry: T | str) -> None:
        """Put ``entry`` under ``name``, replacing what was there (a test or a plug-in overriding one)."""
        self._references.pop(name, None)
        self._entries[name] = entry
        if isinstance(entry, str) and ":" in entry:
            self._references[name] = entry

    def __delitem__(self, name: str) -> None:
        del self._entries[name]
        self._references.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> Iterator[tuple[str, T]]:
        return ((name, self.get(name)) for name in self._entries)

    def values(self) -> Iterator[T]:
        return (self.get(name) for name in self._entries)

    def keys(self) -> KeysView[str]:
        return self._entries.keys()
