"""The studies a run can make: the :class:`Study` record, the contracts of its record and compare parts
(:class:`RecordPartModule`, :class:`ComparePart`), and the study registry, :data:`STUDIES`.

Each study package defines its record (``plmfair.crows_pairs:STUDY``, ``plmfair.cloze:MOZART`` and
``plmfair.cloze:CLOZE``) with its own plan functions, and names it in its part of the configuration's schema
(:func:`study_packages`); the registry finds them there and loads them lazily, so this module imports no
study. The plan, the model families, the command line and the report ask the registry
rather than compare study names (a test refuses a comparison with a study name elsewhere).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
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


# -- the contracts of a study's two module-sized parts, which mypy checks where a study package returns them


@dataclass
class RecordPart:
    """A study's rows in the record, by its keys of ``results`` (``rows``), and the frames whose rows answer
    its primary questions: (frame, the column of the estimate, the estimand in words) (``primary``), each
    frame with a column ``answer``, the answer in words (:func:`plmfair.rendering.record_rows.answer`)."""

    rows: dict[str, list[dict]] = field(default_factory=dict)
    primary: list[tuple[pd.DataFrame, str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Headline:
    """One of a study's headline tables of a run record: its name in ``plmfair compare`` (``key``), the
    caption ``plmfair show`` and the end of a run print above it, compare's ``title``, and the function
    making its lines, printed by the display rule, from a record (``lines``; none when the run has no
    such numbers). A study's record module lists its own as ``HEADLINES``."""

    key: str
    caption: str
    title: str
    lines: Callable[[Mapping], pd.DataFrame]


class RecordPartModule(Protocol):
    """A study's part of the run record, ``plmfair show`` and the end of a run: its lists under the record's
    ``results`` (``SCHEMA``: key -> the JSON schema of its list, :func:`plmfair.rendering.record_rows.schema_part`),
    ``record_part(files, hypotheses)`` making them from the result files the study records and the run's
    hypotheses, and the headline tables that show them (``HEADLINES``)."""

    @property
    def SCHEMA(self) -> dict: ...  # noqa: N802 (a module constant)

    @property
    def HEADLINES(self) -> tuple[Headline, ...]: ...  # noqa: N802

    def record_part(self, files: Sequence[str], hypotheses: pd.DataFrame | None) -> RecordPart: ...


class ComparePart(Protocol):
    """A study's part of ``plmfair compare``, named ``KEY`` and titled ``TITLE``. ``changes`` compares every two
    runs' results (``folders`` and ``records`` by run name), its tests named for the hypotheses of ``source``;
    ``tests`` gives the comparison its hypotheses (:data:`plmfair.multiplicity.HYPOTHESIS_SCHEMA`); ``decided``
    adds their decisions to the changes; ``sections`` names the configuration sections a run's numbers depend
    on."""

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


class ReadableComparePart(ComparePart, ForPeople, Protocol):
    """A compare part with its view for people (what a study's compare function returns when it has one)."""


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


@dataclass(frozen=True, kw_only=True)
class StudyData:
    """What a study reads: its data sets, where they come from and what is summarised of them."""

    described: str
    """What it reads, in words (``plmfair run --help`` and the docs say it)."""
    constructs: bool = False
    """Whether it builds its cloze sets from parallel text (cloze construction) rather than reading them."""
    downloads: Mapping[str, Subjects] = field(default_factory=dict)
    """Its downloads: the configuration section that declares them -> the plan function listing those in use."""
    choices: tuple[DataChoice, ...] = ()
    """The kinds of its data sets that ``plmfair run --datasets`` can name (:class:`DataChoice`)."""
    ingested: Callable[[dict], dict[str, str]] | None = None
    """The data sets it ingests that hold text, by name -> their ingested file (the demo's tiny models learn
    their vocabulary from them)."""
    counts: Callable[[Mapping[str, pd.DataFrame]], list[tuple[str, str, str, int]]] | None = None
    """What is in the ingested data sets for the run's data summary: their frames by name -> rows of
    :data:`plmfair.runs.data_summary.DATA_SUMMARY_SCHEMA` (none: not summarised)."""
    pipelines: Callable[[dict], dict[str, str]] | None = None
    """The spaCy pipelines it needs installed before a run, by language (its section's ``spacy.<lang>``), which
    ``plmfair run`` installs or names (:func:`plmfair.preflight.missing_pipelines`)."""


@dataclass(frozen=True, kw_only=True)
class StudyWorkflow:
    """A study's own jobs: its rules, the files that define them and what the heavy ones declare."""

    rules: tuple[str, ...]
    """Its rules (the cloze task's shared chain is added: :attr:`Study.jobs`)."""
    files: tuple[str, ...]
    """Its rule files under ``workflow/rules/`` (the cloze task's shared ones are added:
    :attr:`Study.rule_files`)."""
    needs: Mapping[str, Need] = field(default_factory=dict)
    """The memory and run time its heavy rules declare for their input: rule -> :class:`plmfair.resources.Need`
    (a rule without one declares a light job's)."""


@dataclass(frozen=True, kw_only=True)
class StudyScoring:
    """What a study's models score (no instance: no model scores it)."""

    languages: Callable[[dict, str], list[str]]
    """The languages of its data (the models of those languages score it)."""
    scored: Callable[[dict], list[tuple[str, str]]]
    """The models it scores as (model, the scoring output whose run metadata describes that run), in its jobs'
    order: the models table, the run record and the models' manifests ask it."""
    passes: Callable[[dict], list[str]] | None = None
    """The extra scoring passes its robustness analysis adds, each as a line (counted and printed before a run
    starts; each a pass of its model's one load)."""


@dataclass(frozen=True, kw_only=True)
class StudyOutputs:
    """What a study outputs: its folders, tables and figures and the files a run publishes."""

    folders: tuple[str, ...]
    """Its result folders under ``results/``."""
    subjects: Mapping[str, Subjects]
    """The kinds of subject of its tables and figures: kind -> the plan function listing a configuration's."""
    published: Callable[[dict], list[str]]
    """The files a run of it publishes: its targets and the record's file list."""
    tables: tuple = ()
    """Its tables (:class:`plmfair.rendering.table_spec.TableSpec`)."""
    figures: tuple = ()
    """Its figures (:class:`plmfair.rendering.table_spec.FigureSpec`)."""
    labels: Callable[[], Mapping[str, str]] | None = None
    """The names its tables and figures give its per-item scores: score -> the measure its mean is
    (:func:`plmfair.rendering.labels.metric_label`)."""
    answered_in: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The tables and figures that show the test behind each of its primary answers: ``"tables"`` and
    ``"figures"`` -> their names, ``{subject}`` the second part of the hypothesis's id (a cloze set's name):
    the report's landing page links each answer to them."""


@dataclass(frozen=True, kw_only=True)
class StudyHypotheses:
    """A study's part of the run's hypotheses (:mod:`plmfair.runs.hypotheses`), adjusted once for the run."""

    files: Callable[[dict], list[str]]
    """The result files whose tests they are."""
    questions: Callable[[Mapping[str, pd.DataFrame]], pd.DataFrame]
    """Those files' frames, by path -> its hypotheses (:data:`plmfair.multiplicity.HYPOTHESIS_SCHEMA`), its
    primary question among them."""


@dataclass(frozen=True, kw_only=True)
class StudyRecord:
    """A study's part of the run record."""

    recorded: Callable[[dict], list[str]]
    """The files its part of the run record summarises."""
    part: Callable[[], RecordPartModule]
    """Its module of the run record, ``plmfair show`` and the end of a run."""


@dataclass(frozen=True, kw_only=True)
class StudyConfig:
    """A study's configuration beyond its schema (its package's ``config.schema.yaml``)."""

    check: Callable[[dict], None] | None = None
    """Its checks beyond the schema, raising :class:`plmfair.errors.ConfigError` naming the key."""
    moved: Mapping[str, str] = field(default_factory=dict)
    """The keys of its section an earlier version had: key path -> what to do instead."""


@dataclass(frozen=True, kw_only=True)
class Study:
    """One study, its fields grouped by concern: what it is, what it reads (:class:`StudyData`), its jobs
    (:class:`StudyWorkflow`), what its models score (:class:`StudyScoring`), what it outputs
    (:class:`StudyOutputs`), its hypotheses (:class:`StudyHypotheses`), its part of the run record
    (:class:`StudyRecord`), its part of ``plmfair compare`` and its configuration (:class:`StudyConfig`).

    Every hook is a function of the study's package. A plan function (``config -> ...``) is light: the DAG is
    planned with it. A hook that needs pandas or more (``counts``, ``questions``, ``labels``, the record and
    compare parts) imports what it needs in its body, so that the registry, which every job reads, stays
    light; the record and compare parts return their module, typed by its contract
    (:class:`RecordPartModule`, :class:`ComparePart`)."""

    name: str
    """Its configuration section and registry name (``crows_pairs``)."""
    title: str
    """Its name for people: the report's category of its tables and figures."""
    task: str
    """What its models do: :data:`PAIRS_TASK` (score both sentences of minimal pairs) or :data:`CLOZE_TASK`
    (fill the gap of cloze sentences: its sets go through the shared cloze chain, :data:`CLOZE_SET_JOBS`)."""
    data: StudyData
    """What it reads."""
    workflow: StudyWorkflow
    """Its own jobs."""
    scoring: StudyScoring | None = None
    """What its models score (none: no model scores it)."""
    outputs: StudyOutputs
    """What it outputs."""
    hypotheses: StudyHypotheses | None = None
    """Its part of the run's hypotheses (none: its tables mark no test)."""
    record: StudyRecord | None = None
    """Its part of the run record (none: it has none)."""
    compare: Callable[[], ComparePart] | None = None
    """Its module of ``plmfair compare`` (optionally also :class:`plmfair.studies.ForPeople`)."""
    config: StudyConfig = field(default_factory=StudyConfig)
    """Its configuration beyond its schema."""

    @property
    def jobs(self) -> tuple[str, ...]:
        """Its rules, with the shared cloze chain's for a study of the cloze task."""
        return self.workflow.rules + (CLOZE_SET_JOBS if self.task == CLOZE_TASK else ())

    @property
    def rule_needs(self) -> dict[str, Need]:
        """The memory and run time its rules declare, fitted per rule (the others' are light)."""
        return {**self.workflow.needs, **(CLOZE_SET_NEEDS if self.task == CLOZE_TASK else {})}

    @property
    def rule_files(self) -> tuple[str, ...]:
        """Its rule files, with the shared cloze chain's for a study of the cloze task."""
        return self.workflow.files + (CLOZE_SET_RULES if self.task == CLOZE_TASK else ())


# A study package is a package of plmfair with its part of the configuration's schema beside its code
# (STUDY_SCHEMA): its x-studies names the studies the package defines (name -> the package's attribute that
# holds each Study), its x-order where they come among the studies (the record's, tables' and report's order).
# A new study is a new package: no shared file names it.
STUDY_SCHEMA = "config.schema.yaml"
# ... its two registration lines, read without YAML (every job reads the registry; the schema is parsed only where
# a configuration is validated): ``x-studies: {name: ATTRIBUTE, ...}`` and ``x-order: N``, each on one line
_STUDIES_LINE = re.compile(r"^x-studies: \{(.+)\}[ \t]*$", re.M)
_ORDER_LINE = re.compile(r"^x-order: (\d+)[ \t]*$", re.M)
_NAMED = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*:\s*([A-Za-z_][A-Za-z0-9_]*)\s*$")


@dataclass(frozen=True)
class StudyPackage:
    """A study package found by its part of the configuration's schema: its name, that file, its studies (name
    -> the package's attribute holding its :class:`Study`) and its place among the packages (``order``)."""

    name: str
    schema: Path
    studies: dict[str, str]
    order: int


def _package(path: Path) -> StudyPackage:
    text = path.read_text(encoding="utf-8")
    studies, order = _STUDIES_LINE.search(text), _ORDER_LINE.search(text)
    named = [_NAMED.match(item) for item in studies.group(1).split(",")] if studies else []
    if not named or not all(named) or order is None:
        raise ConfigError(
            f"{path}: a study package's schema names its studies and their place on two lines of their own: "
            "x-studies: {name: ATTRIBUTE} and x-order: N"
        )
    return StudyPackage(path.parent.name, path, {m.group(1): m.group(2) for m in named if m}, int(order.group(1)))


@functools.cache
def study_packages() -> tuple[StudyPackage, ...]:
    """Each study package (one with a :data:`STUDY_SCHEMA` beside its code), in their ``x-order`` (then by
    name), found once."""
    found = [_package(path) for path in Path(__file__).parent.glob(f"*/{STUDY_SCHEMA}")]
    return tuple(sorted(found, key=lambda package: (package.order, package.name)))


STUDIES: Registry[Study] = Registry(
    "study",
    {
        name: f"plmfair.{package.name}:{attribute}"
        for package in study_packages()
        for name, attribute in package.studies.items()
    },
    error=ConfigError,
)


def record_parts() -> list[RecordPartModule]:
    """Each distinct module the studies make their part of the run record with, in the registry's order."""
    return list(dict.fromkeys(study.record.part() for study in STUDIES.values() if study.record))


def study_record(study: str) -> StudyRecord:
    """A study's part of the run record (a study without one has no files to record)."""
    record = STUDIES[study].record
    if record is None:
        raise ConfigError(f"the study {study} has no part of the run record (its Study's record)")
    return record


def study_hypotheses(study: str) -> StudyHypotheses:
    """A study's part of the run's hypotheses (a study without one has no result files to adjust)."""
    hypotheses = STUDIES[study].hypotheses
    if hypotheses is None:
        raise ConfigError(f"the study {study} has no part of the run's hypotheses (its Study's hypotheses)")
    return hypotheses


def compare_parts() -> list[ComparePart]:
    """Each distinct module the studies make their part of ``plmfair compare`` with, in the registry's order."""
    return list(dict.fromkeys(study.compare() for study in STUDIES.values() if study.compare))


def rule_files() -> list[str]:
    """The rule files (``workflow/rules/``) of every study, each once, in the registry's order: what
    the ``Snakefile`` includes besides the shared ones."""
    return list(dict.fromkeys(f for study in STUDIES.values() for f in study.rule_files))


def rule_need(rule: str) -> Need:
    """What a job of ``rule`` declares for its input (:mod:`plmfair.resources`): its study's fit
    (:attr:`StudyWorkflow.needs`), else the shared rules' (:func:`plmfair.resources.need`)."""
    for study in STUDIES.values():
        if rule in study.rule_needs:
            return study.rule_needs[rule]
    return need(rule)


def owners(subjects: str) -> list[Study]:
    """The studies whose outputs are made for a kind of subject (none: the data and models)."""
    return [study for study in STUDIES.values() if subjects in study.outputs.subjects]


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
    scoring = STUDIES[study].scoring
    return scoring.languages(config, study) if scoring else []
