"""The studies a run can make, one record each: the study registry.

A study is a config section (``<name>.enabled``, ``<name>.models`` and its scoring settings), the
data it reads, what its models do (``task``: fill the gap of cloze sentences, or score the two
sentences of minimal pairs), and the report category its tables and figures go under. The plan
(:mod:`plmfair.plan`), the model families (:mod:`plmfair.scoring`), the command line and the report
ask this registry rather than compare study names: a test refuses a comparison with a study name
outside this module. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

CLOZE_TASK = "cloze"  # fill the gap of cloze sentences (predictions and answer scores)
PAIRS_TASK = "minimal_pairs"  # score both sentences of minimal pairs


@dataclass(frozen=True)
class Study:
    """One study: ``name`` (its config section), ``title`` (its report category), ``task``,
    ``constructs`` (its cloze sets are built from parallel text by the cloze-construction stages,
    rather than read ready-made with their answers), and what it reads (``data``)."""

    name: str
    title: str
    task: str
    constructs: bool
    data: str


STUDIES: dict[str, Study] = {s.name: s for s in (
    Study("mozart", "MozArt", CLOZE_TASK, False,
          "MozArt's parallel cloze sentences with the answers of four annotator groups (datasets.mozart)"),
    Study("crows_pairs", "CrowS-Pairs", PAIRS_TASK, False,
          "CrowS-Pairs files in any layout (datasets.crows_pairs, crows_pairs.datasets)"),
    Study("cloze", "Cloze sets", CLOZE_TASK, True,
          "cloze sets constructed from multi-way parallel text, with human answers when given (cloze.corpora)"),
)}

CLOZE_STUDIES = frozenset(name for name, study in STUDIES.items() if study.task == CLOZE_TASK)
