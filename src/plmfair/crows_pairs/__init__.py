"""The CrowS-Pairs study: minimal sentence pairs, one more stereotyping than the other, scored by the
masked-LM pseudo-log-likelihood protocol of Nangia et al. (2020) or a causal LM's log-likelihood;
the French extension of Névéol et al. (2022) and the multilingual sets in any CSV layout.

Its modules, from the data to the tables: :mod:`~plmfair.crows_pairs.reader` (files in any layout),
:mod:`~plmfair.crows_pairs.scoring_job` (torch), :mod:`~plmfair.crows_pairs.schemas` (the per-pair
files), :mod:`~plmfair.crows_pairs.summary` (scores, exact tests, McNemar),
:mod:`~plmfair.crows_pairs.languages` (one model across data sets), :mod:`~plmfair.crows_pairs.breakdowns`,
:mod:`~plmfair.crows_pairs.plan` (its jobs and paths), :mod:`~plmfair.crows_pairs.outputs`,
:mod:`~plmfair.crows_pairs.tables`, :mod:`~plmfair.crows_pairs.figures`. Its rules are
``workflow/rules/crows_pairs.smk``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from plmfair.crows_pairs import config_checks, outputs, plan
from plmfair.resources import SCORING
from plmfair.studies import (
    PAIRS_TASK,
    DataChoice,
    ReadableComparePart,
    RecordPartModule,
    Study,
    StudyConfig,
    StudyData,
    StudyHypotheses,
    StudyOutputs,
    StudyRecord,
    StudyScoring,
    StudyWorkflow,
)

if TYPE_CHECKING:
    import pandas as pd


# Its hooks that need pandas or more import their module when they are called (the comment on each import):
# every job reads the registry, so the package itself stays light.
def count_data(frames: Mapping[str, pd.DataFrame]) -> list[tuple[str, str, str, int]]:
    """What is in its ingested data sets (:func:`plmfair.crows_pairs.data_counts.counts`)."""
    from plmfair.crows_pairs import data_counts  # loaded when called

    return data_counts.counts(frames)


def study_questions(results: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every test its tables mark, from its result files by path (:func:`plmfair.crows_pairs.questions.questions`)."""
    from plmfair.crows_pairs.questions import questions  # loaded when called

    return questions(results)


def record_module() -> RecordPartModule:
    """Its part of the run record (:mod:`plmfair.crows_pairs.record_part`)."""
    from plmfair.crows_pairs import record_part  # loaded when called

    return record_part


def compare_module() -> ReadableComparePart:
    """Its part of ``plmfair compare`` (:mod:`plmfair.crows_pairs.run_changes`)."""
    from plmfair.crows_pairs import run_changes  # loaded when called

    return run_changes


STUDY = Study(
    name="crows_pairs",
    title="CrowS-Pairs",
    task=PAIRS_TASK,
    data=StudyData(
        described="CrowS-Pairs files in any layout (datasets.crows_pairs, crows_pairs.datasets)",
        downloads={
            "datasets.crows_pairs": plan.crows_pairs_ingested,
            "crows_pairs.robustness": plan.robustness_downloads,
        },
        choices=(
            DataChoice(
                "a CrowS-Pairs data set",
                ("datasets", "crows_pairs"),
                languages=lambda entry: [entry["lang"]],
                chosen=("crows_pairs", "datasets"),
            ),
        ),
        ingested=plan.ingested,
        counts=count_data,
    ),
    workflow=StudyWorkflow(
        rules=(
            "ingest_crows_pairs",
            "crows_pairs_score",
            "crows_pairs_summary",
            "crows_pairs_languages",
            "crows_pairs_pass_score",
            "crows_pairs_robustness",
        ),
        files=("crows_pairs_common.smk", "crows_pairs.smk"),
        needs={"crows_pairs_score": SCORING, "crows_pairs_pass_score": SCORING},
    ),
    scoring=StudyScoring(languages=plan.minimal_pair_languages, scored=plan.scored, passes=plan.robustness_passes),
    outputs=StudyOutputs(
        folders=("results/data/crows_pairs/", "results/crows_pairs/"),
        subjects={
            "crows_pairs": plan.crows_pairs_outputs,
            "crows_pairs_model_pairs": plan.crows_pairs_model_pair_outputs,
            "crows_pairs_languages": plan.crows_pairs_language_outputs,
            "crows_pairs_verdicts": plan.robustness_outputs,
        },
        published=plan.published,
        tables=outputs.TABLES,
        figures=outputs.FIGURES,
        answered_in={"tables": ("crows_pairs_tests",), "figures": ("crows_pairs",)},
    ),
    hypotheses=StudyHypotheses(files=plan.question_files, questions=study_questions),
    record=StudyRecord(recorded=plan.recorded_files, part=record_module),
    compare=compare_module,
    config=StudyConfig(check=config_checks.check, moved=config_checks.MOVED),
)
