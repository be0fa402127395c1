"""The studies a run can make, one record each: the study registry.

A study is a config section (``<name>.enabled``, ``<name>.models`` and its scoring settings), the
data it reads, what its models do (``task``: fill the gap of cloze sentences, or score the two
sentences of minimal pairs), its jobs (Snakemake rules) and the rule files that define them (which the
``Snakefile`` includes from here), its outputs (result folders), the kinds of
subject its tables and figures are made for (:data:`plmfair.outputs.SUBJECTS`, which
:func:`tables` and :func:`figures` resolve in :mod:`plmfair.outputs`) and the report category they
go under. The plan (:mod:`plmfair.plan`), the model families (:mod:`plmfair.scoring`), the command
line and the report ask this registry rather than compare study names: a test refuses a comparison
with a study name outside this module, and another that the workflow's rules are exactly the
studies' jobs and the shared ones. Light: the standard library and :mod:`plmfair.outputs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from plmfair.outputs import FIGURES, TABLES

CLOZE_TASK = "cloze"  # fill the gap of cloze sentences (predictions and answer scores)
PAIRS_TASK = "minimal_pairs"  # score both sentences of minimal pairs

# The chain every cloze set goes through, whichever study it belongs to: scores, metrics, Tables 1-5
# (the generic table rule), Figure 1, group tests and their figure, breakdowns.
CLOZE_SET_JOBS = ("cloze_score", "cloze_metrics", "cloze_mrr_figure", "group_analysis", "group_figure",
                  "cloze_breakdowns", "cloze_breakdown_figure")
# ... and the rule file that defines it (workflow/rules/), included for every study of the cloze task.
CLOZE_SET_RULES = "cloze_sets.smk"
# Jobs every study shares: downloads, the data summary, models, tables, the run record, the targets
# (in the rule files the Snakefile names itself).
SHARED_JOBS = ("download", "data_summary", "ingest", "build_tiny_model", "fetch_model", "model_manifest", "models",
               "table", "run_record", "all")


@dataclass(frozen=True)
class Study:
    """One study: ``name`` (its config section), ``title`` (its report category), ``task``,
    ``constructs`` (its cloze sets are built from parallel text by the cloze-construction stages,
    rather than read ready-made with their answers), what it reads (``data``), its own jobs
    (``own_jobs``, rule names; :attr:`jobs` adds the cloze-set chain for a cloze study) and the
    files of ``workflow/rules/`` that define them (``rules``; :attr:`rule_files` adds the chain's), its result
    folders (``outputs``, with ``{name}`` for each data set) and the subject kinds of its tables and
    figures (``subjects``), each with the plan function (``"module:function"``, imported by
    :func:`plmfair.plan.output_subjects` when asked) that lists a configuration's subjects of that
    kind, the config sections its downloads are declared in (``downloads``: ``datasets.crows_pairs``
    holds one entry per data set), each with the plan function that lists the entries in use, and the
    plan function giving the languages of its data (``languages``, ``(config, study)``: a model scores
    the study when it covers one of them; None for a study that scores no model)."""

    name: str
    title: str
    task: str
    constructs: bool
    data: str
    own_jobs: tuple[str, ...]
    rules: tuple[str, ...]
    outputs: tuple[str, ...]
    subjects: dict[str, str]
    downloads: dict[str, str]
    languages: str | None = None

    @property
    def jobs(self) -> tuple[str, ...]:
        return self.own_jobs + (CLOZE_SET_JOBS if self.task == CLOZE_TASK else ())

    @property
    def rule_files(self) -> tuple[str, ...]:
        return self.rules + ((CLOZE_SET_RULES,) if self.task == CLOZE_TASK else ())


STUDIES: dict[str, Study] = {s.name: s for s in (
    Study("mozart", "MozArt", CLOZE_TASK, False,
          "ready-made cloze tests in MozArt's format, sentences with the answers of annotator groups "
          "(datasets.cloze_tests; MozArt's own is mozart)",
          own_jobs=("ingest_cloze_test", "tsne_vectors", "tsne"),
          rules=("mozart.smk",),
          outputs=("results/data/{name}/", "results/cloze/{name}/"),
          subjects={"answered_sets": "plmfair.plan.cloze:answered_sets", "tsne": "plmfair.plan.cloze:tsne_sets"},
          downloads={"datasets.cloze_tests": "plmfair.plan.data:cloze_tests"},
          languages="plmfair.plan.data:cloze_set_languages"),
    Study("crows_pairs", "CrowS-Pairs", PAIRS_TASK, False,
          "CrowS-Pairs files in any layout (datasets.crows_pairs, crows_pairs.datasets)",
          own_jobs=("ingest_crows_pairs", "crows_pairs_score", "crows_pairs_summary", "crows_pairs_figure",
                    "crows_pairs_breakdowns", "crows_pairs_breakdown_figure", "crows_pairs_languages",
                    "crows_pairs_language_figure"),
          rules=("crows_pairs.smk",),
          outputs=("results/data/crows_pairs/", "results/crows_pairs/"),
          subjects={"crows_pairs": "plmfair.plan.crows_pairs:crows_pairs_outputs",
                    "crows_pairs_languages": "plmfair.plan.crows_pairs:crows_pairs_language_outputs"},
          downloads={"datasets.crows_pairs": "plmfair.plan.data:crows_pairs_ingested"},
          languages="plmfair.plan.data:minimal_pair_languages"),
    Study("cloze", "Cloze sets", CLOZE_TASK, True,
          "cloze sets constructed from multi-way parallel text, with human answers when given (cloze.corpora)",
          own_jobs=("cloze_join_bitexts", "cloze_tokenize", "build_spacy_pipeline", "cloze_align", "cloze_select",
                    "cloze_sheets", "ingest_cloze_answers", "cloze_alignment_quality"),
          rules=("cloze.smk",),
          outputs=("results/spacy/", "results/cloze/{name}/", "results/data/{name}/"),
          subjects={"answered_sets": "plmfair.plan.cloze:answered_sets", "corpora": "plmfair.plan.data:cloze_corpora",
                    "gold_corpora": "plmfair.plan.construction:gold_corpora"},
          downloads={"cloze.corpora": "plmfair.plan.data:cloze_corpora",
                     "cloze.spacy": "plmfair.plan.data:corpus_languages"},
          languages="plmfair.plan.data:cloze_set_languages"),
)}

CLOZE_STUDIES = frozenset(name for name, study in STUDIES.items() if study.task == CLOZE_TASK)


def rule_files() -> list[str]:
    """The rule files (``workflow/rules/``) of every study, each once, in the registry's order: what
    the ``Snakefile`` includes besides the shared ones."""
    return list(dict.fromkeys(f for study in STUDIES.values() for f in study.rule_files))


def tables(study: str) -> list[str]:
    """The names (templates of ``{subject}``) of the tables a study's data sets get."""
    return [spec.name for spec in TABLES if spec.subjects in STUDIES[study].subjects]


def figures(study: str) -> list[str]:
    """The names (templates of ``{subject}``) of the figures a study's data sets get."""
    return [name for name, subjects in FIGURES.items() if subjects in STUDIES[study].subjects]


def owners(subjects: str) -> list[Study]:
    """The studies whose outputs are made for a kind of subject (none: the data and models)."""
    return [study for study in STUDIES.values() if subjects in study.subjects]
