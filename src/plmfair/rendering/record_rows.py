"""A study's part of the run record (``results/run.json``): its result frames as JSON rows, with the run's
decision on each row's test among the run's hypotheses, and the rows that answer its primary questions.

Each study's record module (:attr:`plmfair.studies.StudyRecord.part`, the contract
:class:`plmfair.studies.RecordPartModule`) makes its part with these helpers: its ``SCHEMA`` (its keys of
``results``, each the JSON schema of its list: :func:`schema_part`), ``record_part`` and ``HEADLINES``; the
record (:func:`plmfair.runs.record.run_record`) and its schema (:func:`plmfair.runs.record.record_schema`) put
the parts together.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from plmfair.rendering.marks import DECISION_COLUMNS, TESTED, decisions
from plmfair.rendering.numbers import interval, p_value


def answer(
    row: Mapping,
    *,
    subject: str,
    value: float,
    estimate: str,
    null: float,
    null_words: str,
    test: str,
    found: tuple[str, str],
    not_found: str,
    alpha: float,
    digits: int = 1,
) -> str:
    """A primary answer in words, from its row of the record (``family``, ``significant``, ``p_adjusted``,
    ``ci_low``, ``ci_high``), headed by what it is about (``subject``: the model and data set), its estimate's
    ``value`` and the ``estimate`` in words: the finding when the test
    is significant after the adjustment (``found``: the words for an estimate below and above the
    ``null`` value), else ``not_found``; then the estimate with its interval, where the null lies
    (``null_words``), the test and its adjusted p. An untestable or uninformative row says why it has no
    finding instead."""
    if row["family"] == "uninformative":
        return (
            f"{subject}: no answer: {estimate}, and every assignment gives the same result, so the {test} cannot decide"
        )
    if row["family"] == "untestable":
        return f"{subject}: untestable: {estimate}, {null_words}; the {test} cannot reach the run's level on these data"
    said = (found[0] if value < null else found[1]) if bool(row["significant"]) else not_found
    spread = interval(row["ci_low"], row["ci_high"], digits, keep=(null,))
    adjusted = p_value(row["p_adjusted"], alpha=alpha)
    return f"{subject}: {said}: {estimate} {spread}, {null_words}, {test}, p adjusted {adjusted}"


def schema_part(module_file: str) -> dict:
    """A study's part of the record's schema, from the ``run_record.schema.yaml`` beside its record module
    (``module_file``: the module's ``__file__``): its keys of ``results``, each the schema of its list."""
    # only where a record is written or checked
    import yaml

    with open(Path(module_file).with_name("run_record.schema.yaml"), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def record_alpha(record: Mapping) -> float:
    """The level the record's hypotheses decided at."""
    return float(record["results"]["hypotheses"]["alpha"])


def plain(value: object) -> Any:
    """A value as JSON holds it: numpy scalars as Python ones, NaN and infinities as null."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def rows(frame: pd.DataFrame, fields: Sequence[str], **extra: object) -> list[dict]:
    """Each row of ``frame`` as a JSON row of ``fields``, after ``extra``."""
    return [plain({**extra, **{f: row[f] for f in fields}}) for _, row in frame.iterrows()]


def decided(frame: pd.DataFrame, hypotheses: pd.DataFrame | None) -> pd.DataFrame:
    """``frame`` with the decision on the hypotheses on each row's test (family, adjusted p, mark; untested
    rows without an interval)."""
    if hypotheses is None or frame.empty:
        return frame.assign(**{c: pd.Series(dtype=object) for c in DECISION_COLUMNS})
    out = frame.drop(columns=[c for c in DECISION_COLUMNS if c in frame.columns]).join(decisions(frame, hypotheses))
    tested = out["family"].isin(TESTED)
    return out.assign(ci_low=out["ci_low"].where(tested), ci_high=out["ci_high"].where(tested))
