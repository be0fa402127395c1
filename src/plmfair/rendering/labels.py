"""Names for people: how tables and figures name what the code calls by short names.

Statistical terms as patsy writes them (``group[T.FN]``) become the contrast they measure
(``FN vs MN``); per-annotation metrics (``rr``, ``hit1``) the measure their mean is (MRR, P@1).
"""

from __future__ import annotations

import re

# each per-item score by the measure its mean is: a minimal pair's margin here, and each cloze metric's
# per-annotation score, which plmfair.cloze.measures adds (``hit1``: "P@1 (hit at 1)")
METRIC_LABELS = {"margin": "score margin"}


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def metric_name(metric: str) -> str:
    """The measure's name without its gloss: ``hit1`` is ``P@1``, ``rr`` ``MRR``."""
    return metric_label(metric).partition(" (")[0]


def contrast_label(term: str, reference: str) -> str:
    """A fixed-effect term for people: ``group[T.FN]`` against MN is ``FN vs MN``,
    ``dataset[T.demo_de]`` against demo_en ``demo_de vs demo_en``; the intercept is the mean at
    the reference level (``mean at MN, de``)."""
    if term == "Intercept":
        return f"mean at {reference}" if reference else "intercept"
    level = re.fullmatch(r"\w+\[T\.(.*)\]", term)
    return f"{level.group(1)} vs {reference}" if level else term


# the annotator groups spelled out (MozArt's M/F x native/non-native)
GROUP_NAMES = {"MN": "male native", "FN": "female native", "MNN": "male non-native", "FNN": "female non-native"}
