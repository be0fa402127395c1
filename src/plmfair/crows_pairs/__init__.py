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

from typing import TYPE_CHECKING

from plmfair.crows_pairs import config_checks, outputs, plan
from plmfair.resources import SCORING
from plmfair.studies import PAIRS_TASK, DataChoice, Study

if TYPE_CHECKING:  # mypy checks the study's parts against their contracts; at run time they load lazily
    from plmfair.crows_pairs import record_part, run_changes
    from plmfair.rendering.record_rows import RecordPartModule
    from plmfair.studies import ComparePart, ForPeople

    _record: RecordPartModule = record_part
    _compare: ComparePart = run_changes
    _readable: ForPeople = run_changes

STUDY = Study(
    name="crows_pairs",
    title="CrowS-Pairs",
    task=PAIRS_TASK,
    constructs=False,
    data="CrowS-Pairs files in any layout (datasets.crows_pairs, crows_pairs.datasets)",
    own_jobs=(
        "ingest_crows_pairs",
        "crows_pairs_score",
        "crows_pairs_summary",
        "crows_pairs_languages",
        "crows_pairs_pass_score",
        "crows_pairs_robustness",
    ),
    rules=("crows_pairs_common.smk", "crows_pairs.smk"),
    outputs=("results/data/crows_pairs/", "results/crows_pairs/"),
    subjects={
        "crows_pairs": plan.crows_pairs_outputs,
        "crows_pairs_model_pairs": plan.crows_pairs_model_pair_outputs,
        "crows_pairs_languages": plan.crows_pairs_language_outputs,
        "crows_pairs_verdicts": plan.robustness_outputs,
    },
    downloads={"datasets.crows_pairs": plan.crows_pairs_ingested, "crows_pairs.robustness": plan.robustness_downloads},
    languages=plan.minimal_pair_languages,
    published=plan.published,
    tables=outputs.TABLES,
    figures=outputs.FIGURES,
    question_files=plan.question_files,
    questions="plmfair.crows_pairs.questions:questions",
    answered_in={"tables": ("crows_pairs_tests",), "figures": ("crows_pairs",)},
    scored=plan.scored,
    recorded=plan.recorded_files,
    record="plmfair.crows_pairs.record_part",
    compare="plmfair.crows_pairs.run_changes",
    check=config_checks.check,
    moved=config_checks.MOVED,
    ingested=plan.ingested,
    counts="plmfair.crows_pairs.data_counts:counts",
    needs={"crows_pairs_score": SCORING, "crows_pairs_pass_score": SCORING},
    passes=plan.robustness_passes,
    choices=(
        DataChoice(
            "a CrowS-Pairs data set",
            ("datasets", "crows_pairs"),
            languages=lambda entry: [entry["lang"]],
            chosen=("crows_pairs", "datasets"),
        ),
    ),
)
