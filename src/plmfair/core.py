"""Names the studies, the plan and the library share, with no dependency of their own (standard
library only): every module imports them from here, so no reader of data or scorer has to import
another study's reader or the DAG planner for a constant."""

from __future__ import annotations

import importlib
from collections.abc import Callable

# The literal gap of a cloze sentence, in MozArt's files and in constructed sets.
MASK = "[MASK]"
# The annotator groups of MozArt: gender (M/F) x native (N) / non-native (NN) speaker.
GROUPS = ("MN", "FN", "MNN", "FNN")


def is_folder_name(name: str) -> bool:
    """Whether a spaCy pipeline name from ``cloze.spacy`` is a folder (it has a path separator)
    rather than an installed package's name."""
    return "/" in name or "\\" in name


def named_function(name: str) -> Callable:
    """The function ``"<module>:<function>"`` names: the registries name plan functions
    (:data:`plmfair.studies.STUDIES`) and library jobs (:mod:`plmfair.jobs`) this way, so that a module
    is imported only when it is asked for."""
    module, _, attr = name.partition(":")
    try:
        function = getattr(importlib.import_module(module), attr, None) if module and attr else None
    except ModuleNotFoundError:
        function = None
    if not callable(function):
        raise LookupError(f"{name!r} names no function: write it as '<module>:<function>'")
    return function
