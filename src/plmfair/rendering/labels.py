"""Names for people: how tables and figures name what the code calls by short names.

Statistical terms as patsy writes them (``group[T.FN]``) become the contrast they measure
(``FN vs MN``); per-annotation metrics (``rr``, ``hit1``) the measure their mean is (MRR, P@1).
"""

from __future__ import annotations

import functools
import re

from plmfair.studies import STUDIES

# a minimal pair's score margin; the studies name their own per-item scores (plmfair.studies.StudyOutputs.labels)
METRIC_LABELS = {"margin": "score margin"}


@functools.cache
def metric_labels() -> dict[str, str]:
    """Each per-item score by the measure its mean is: :data:`METRIC_LABELS` and each study's ``labels``
    (a cloze set's per-annotation ``hit1`` is "P@1 (hit at 1)": :mod:`plmfair.cloze.measures`)."""
    labels = dict(METRIC_LABELS)
    for study in STUDIES.values():
        labels.update(study.outputs.labels() if study.outputs.labels else {})
    return labels


def metric_label(metric: str) -> str:
    """The name a table or figure gives a per-item score (its study's ``labels``), or the score's own name."""
    return metric_labels().get(metric, metric)


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
