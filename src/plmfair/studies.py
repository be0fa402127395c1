"""The studies a run can make: the :class:`Study` record and the study registry, :data:`STUDIES`.

Each study package defines its record (``plmfair.crows_pairs:STUDY``, ``plmfair.cloze:MOZART`` and
``plmfair.cloze:CLOZE``) with its own plan functions, and names it in its part of the configuration's schema
(:func:`study_packages`); the registry finds them there and loads them lazily, so this module imports no
study. The plan, the model families, the command line and the report ask the registry
rather than compare study names (a test refuses a comparison with a study name elsewhere).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from plmfair.errors import ConfigError
from plmfair.registry import Registry
from plmfair.resources import SCORING, Need, need

if TYPE_CHECKING:  # pandas for the contracts' types only: this module is imported by every job
    import pandas as pd

# every test the studies' tables mark, with its family, adjusted p and mark (plmfair.runs.hypotheses)
HYPOTHESES = "results/hypotheses.parquet"
CLOZE_TASK = "cloze"  # fill the gap of cloze sentences (predictions and answer scores)
PAIRS_TASK = "minimal_pairs"  # score both sentences of minimal pairs

# The chain every cloze set goes through, whichever study it belongs to: scores, metrics, group tests,
# breakdowns (their tables and figures, Tables 1-5 and Figure 1 among them, by the generic table and figure
# rules).
CLOZE_SET_JOBS = ("cloze_score", "cloze_metrics", "group_analysis", "cloze_breakdowns", "cloze_robustness")
# ... the memory and run time its scoring job declares (the others are light table-and-figure jobs) ...
CLOZE_SET_NEEDS = {"cloze_score": SCORING}
# ... and the rule files that define it (workflow/rules/: what its rules read, then the rules), included for
# every study of the cloze task.
CLOZE_SET_RULES = ("cloze_sets_common.smk", "cloze_sets.smk")
# Jobs every study shares: downloads, the data summary, models, tables, the run record, the targets
# (in the rule files the Snakefile names itself).
SHARED_JOBS = (
    "download",
    "data_summary",
    "ingest",
    "build_tiny_model",
    "fetch_model",
    "model_manifest",
    "models",
    "tables",
    "figures",
    "hypotheses",
    "run_record",
)

Subjects = Callable[[dict], Iterable[str]]


class ComparePart(Protocol):
    """What the module a study names in :attr:`Study.compare` holds: its part of ``plmfair compare``, named
    ``KEY`` and titled ``TITLE``. ``changes`` compares every two runs' results (``folders`` and ``records`` by
    run name), its tests named for the hypotheses of ``source``; ``tests`` gives the comparison its
    hypotheses (:data:`plmfair.multiplicity.HYPOTHESIS_SCHEMA`); ``decided`` adds their decisions to the
    changes; ``sections`` names the configuration sections a run's numbers depend on. Each study package
    checks its module against this contract where mypy reads it (``if TYPE_CHECKING`` in its ``__init__``)."""

    @property
    def KEY(self) -> str: ...  # noqa: N802 (a module constant)

    @property
    def TITLE(self) -> str: ...  # noqa: N802

    def changes(
        self,
        folders: Mapping[str, Path],
        records: Mapping[str, dict],
        *,
        alpha: float,
        source: str,
        other_models: bool = False,
    ) -> pd.DataFrame: ...

    def tests(self, table: pd.DataFrame) -> list[pd.DataFrame]: ...

    def decided(self, table: pd.DataFrame, hypotheses: pd.DataFrame) -> pd.DataFrame: ...

    def sections(self, record: Mapping) -> set[str]: ...


@runtime_checkable
class ForPeople(Protocol):
    """A compare part that also has a Markdown view of its changes (``for_people``) and a block of text printed
    after them, with its title (``text``)."""

    def for_people(self, table: pd.DataFrame, hypotheses: pd.DataFrame, *, alpha: float) -> pd.DataFrame: ...

    def text(self, table: pd.DataFrame) -> tuple[str, str]: ...


def section(config: Mapping, path: Sequence[str]) -> dict:
    """The mapping at a key path of a configuration ({} where it is missing or not a mapping)."""
    node: object = config
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, dict) else {}


@dataclass(frozen=True)
class DataChoice:
    """A kind of data set of a study that ``plmfair run --datasets`` can name
    (:func:`plmfair.runs.folders.run_settings`): what it is, in words (``kind``); the key path of the
    mapping that declares them by name (``declared``); how a run keeps only those named: the key path of
    the study's list of the names in use (``chosen``), or None when each declared entry is switched by its
    own ``enabled``; and whether an entry may carry a model list of its own (``own_models``), which the
    run's models then replace; the languages of an entry (``languages``: the configuration's checks ask
    every declared data set's). A later call keeps what an earlier one chose (``keep_earlier``)."""

    kind: str
    declared: tuple[str, ...]
    languages: Callable[[dict], list[str]]
    chosen: tuple[str, ...] | None = None
    own_models: bool = False

    @property
    def noun(self) -> str:
        """The kind without its article ("cloze corpus")."""
        return self.kind.removeprefix("a ").removeprefix("an ")

    def entries(self, config: dict) -> dict:
        """The entries a configuration declares, by name."""
        return section(config, self.declared)


@dataclass(frozen=True)
class Study:
    """One study: its config section (``name``), report category (``title``), ``task``, whether its
    cloze sets are ``constructs``-ed from parallel text, what it reads (``data``), its jobs and rule
    files, its result folders (``outputs``), the kinds of subject of its tables and figures
    (``subjects``: kind -> the plan function listing a configuration's subjects), its downloads
    (config section -> the plan function listing the entries in use), the plan function giving its
    languages (None: no model scores it), the plan function listing the files a run of it publishes
    (its targets and the record's file list), its ``tables`` and ``figures`` (their specs), and its
    part of the run's hypotheses: the plan function listing the result files whose tests are adjusted
    (``question_files``) and the ``"module:function"`` turning them, by path, into its hypotheses
    (``questions``, :data:`plmfair.multiplicity.HYPOTHESIS_SCHEMA`; its primary question among them); and
    the models it scores, as (model, the scoring output whose run metadata describes that run), in its
    jobs' order (``scored``: the models table, the run record and the models' manifests ask it); its part
    of the run record: the plan function listing the files it summarises (``recorded``) and the module
    whose ``SCHEMA`` gives its lists under the record's ``results`` (each the JSON schema of its list), whose
    ``record_part(files, hypotheses)`` makes them and whose ``HEADLINES`` show them (``record``:
    :mod:`plmfair.rendering.record_rows`); the kinds of its data sets
    ``--datasets`` can name (``choices``, :class:`DataChoice`); its part of ``plmfair compare``: the module
    (``compare``) whose ``KEY`` and ``TITLE`` name the part, whose ``changes(folders, records, alpha=,
    source=, other_models=)`` compares every two runs, ``tests(changes)`` gives the comparison its
    hypotheses, ``decided(changes, hypotheses)`` adds their decisions and ``sections(record)`` names the
    configuration sections a run's numbers depend on; optionally ``for_people(changes, hypotheses, alpha=)`` (its
    Markdown view) and ``text(changes)`` (a title and a block of text printed after it); its configuration
    checks beyond the schema (``check(config)``, raising :class:`plmfair.errors.ConfigError` naming the key)
    and the keys of its section an earlier version had, each with what to do instead (``moved``: key path ->
    words); the plan function listing the data sets it ingests that hold text, by name (``ingested``: the
    demo's tiny models learn their vocabulary from them) and the ``"module:function"`` counting what is in
    them for the run's data summary, a frame per name -> rows of
    :data:`plmfair.runs.data_summary.DATA_SUMMARY_SCHEMA` (``counts``; none: not summarised); the plan function
    naming the spaCy pipelines it needs installed before a run, by language (its section's ``spacy.<lang>``),
    which ``plmfair run`` installs or names (``pipelines``, :func:`plmfair.preflight.missing_pipelines`); the
    memory and run time its heavy rules declare for their input (``needs``: rule ->
    :class:`plmfair.resources.Need`; a rule without one declares a light job's); and the ``"module:attribute"``
    of the names its tables and figures give its per-item scores (``labels``: score -> the measure its mean
    is, :func:`plmfair.rendering.labels.metric_label`); and the plan function listing the extra scoring passes
    its robustness analysis adds, each as a line (``passes``: counted and printed before a run starts, each a
    pass of its model's one load); and the tables and figures that show the test behind each of its primary
    answers (``answered_in``: ``"tables"`` and ``"figures"`` -> their names, ``{subject}`` the second part of
    the hypothesis's id, a cloze set's name: the report's landing page links each answer to them)."""

    name: str
    title: str
    task: str
    constructs: bool
    data: str
    own_jobs: tuple[str, ...]
    rules: tuple[str, ...]
    outputs: tuple[str, ...]
    subjects: Mapping[str, Subjects]
    downloads: Mapping[str, Callable[[dict], Iterable[str]]]
    languages: Callable[[dict, str], list[str]] | None = None
    published: Callable[[dict], list[str]] | None = None
    tables: tuple = ()
    figures: tuple = ()
    question_files: Callable[[dict], list[str]] | None = None
    questions: str = ""
    scored: Callable[[dict], list[tuple[str, str]]] | None = None
    recorded: Callable[[dict], list[str]] | None = None
    record: str = ""
    choices: tuple[DataChoice, ...] = ()
    compare: str = ""
    check: Callable[[dict], None] | None = None
    moved: Mapping[str, str] = field(default_factory=dict)
    ingested: Callable[[dict], dict[str, str]] | None = None
    counts: str = ""
    pipelines: Callable[[dict], dict[str, str]] | None = None
    needs: Mapping[str, Need] = field(default_factory=dict)
    labels: str = ""
    passes: Callable[[dict], list[str]] | None = None
    answered_in: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def jobs(self) -> tuple[str, ...]:
        return self.own_jobs + (CLOZE_SET_JOBS if self.task == CLOZE_TASK else ())

    @property
    def rule_needs(self) -> dict[str, Need]:
        """The memory and run time its rules declare, fitted per rule (the others' are light)."""
        return {**self.needs, **(CLOZE_SET_NEEDS if self.task == CLOZE_TASK else {})}

    @property
    def rule_files(self) -> tuple[str, ...]:
        return self.rules + (CLOZE_SET_RULES if self.task == CLOZE_TASK else ())


# A study package is a package of plmfair with its part of the configuration's schema beside its code
# (STUDY_SCHEMA): its x-studies names the studies the package defines (name -> the package's attribute that
# holds each Study), its x-order where they come among the studies (the record's, tables' and report's order).
# A new study is a new package: no shared file names it.
STUDY_SCHEMA = "config.schema.yaml"


@functools.cache
def study_packages() -> tuple[tuple[str, dict], ...]:
    """Each study package's name and its part of the configuration's schema (:data:`STUDY_SCHEMA`), in their
    ``x-order`` (then by name), read once."""
    import yaml  # C-accelerated where it can be: every job reads the registry

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    found = []
    for path in sorted(Path(__file__).parent.glob(f"*/{STUDY_SCHEMA}")):
        fragment = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}
        if not isinstance(fragment.get("x-studies"), dict) or not fragment["x-studies"]:
            raise ConfigError(f"{path}: a study package's schema names its studies: x-studies: {{name: ATTRIBUTE}}")
        found.append((path.parent.name, fragment))
    return tuple(sorted(found, key=lambda item: (item[1].get("x-order", 100), item[0])))


STUDIES: Registry[Study] = Registry(
    "study",
    {
        name: f"plmfair.{package}:{attribute}"
        for package, fragment in study_packages()
        for name, attribute in fragment["x-studies"].items()
    },
    error=ConfigError,
)


def study_modules(attribute: str) -> list[ModuleType]:
    """Each distinct module the studies name in ``attribute`` (``record``, ``compare``), in the registry's
    order, imported: what a layer above the plan asks of every study."""
    names = dict.fromkeys(getattr(study, attribute) for study in STUDIES.values() if getattr(study, attribute))
    return [importlib.import_module(name) for name in names]


def compare_parts() -> list[ComparePart]:
    """Each study's part of ``plmfair compare`` (:attr:`Study.compare`), imported; typed by its contract, which
    each study package has mypy check."""
    # a module is checked against the contract where mypy can name it (each study package's __init__)
    return study_modules("compare")  # type: ignore[return-value]


def rule_files() -> list[str]:
    """The rule files (``workflow/rules/``) of every study, each once, in the registry's order: what
    the ``Snakefile`` includes besides the shared ones."""
    return list(dict.fromkeys(f for study in STUDIES.values() for f in study.rule_files))


def rule_need(rule: str) -> Need:
    """What a job of ``rule`` declares for its input (:mod:`plmfair.resources`): its study's fit
    (:attr:`Study.needs`), else the shared rules' (:func:`plmfair.resources.need`)."""
    for study in STUDIES.values():
        if rule in study.rule_needs:
            return study.rule_needs[rule]
    return need(rule)


def owners(subjects: str) -> list[Study]:
    """The studies whose outputs are made for a kind of subject (none: the data and models)."""
    return [study for study in STUDIES.values() if subjects in study.subjects]


def enabled(config: dict, study: str) -> bool:
    """A study is on unless ``<study>.enabled: false`` (which, unlike an emptied mapping, survives
    Snakemake's merge of a user's --configfile into the defaults)."""
    return bool(config.get(study, {}).get("enabled", True))


def robustness_on(config: dict) -> bool:
    """The run's robustness analysis is on (``robustness.enabled``): each study recomputes its primary verdicts
    under the choices it varies."""
    return bool(config.get("robustness", {}).get("enabled"))


def study_languages(config: dict, study: str) -> list[str]:
    """The data languages a study covers (the models of its languages score it; none: the study
    scores no model)."""
    function = STUDIES[study].languages
    return function(config, study) if function else []
