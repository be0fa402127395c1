"""Tables, figures and the report: which subjects each output of :mod:`plmfair.rendering.table_spec` is made for,
their report categories, and each table's job."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from plmfair.errors import ConfigError
from plmfair.plan.model_runs import model_run_files
from plmfair.registry import Registry
from plmfair.rendering.table_spec import FIGURE_FORMATS, TABLE_FORMATS, FigureSpec, TableSpec
from plmfair.studies import CLOZE_TASK, HYPOTHESES, PAIRS_TASK, STUDIES, Study, owners

Spec = TypeVar("Spec", TableSpec, FigureSpec)

# The run's own files (not a study's): what its data sets hold, the models that ran, and its record
# (the workflow's target: its inputs are every file the run publishes, plmfair.plan.published_files)
DATA_SUMMARY = "results/data/summary.parquet"
MODELS_TABLE = "results/models.parquet"
RUN_RECORD = "results/run.json"
# the record as a page of the report, and the report (snakemake --report) itself
RUN_RECORD_HTML = "results/run.html"
REPORT = "results/report.html"
# the report's stylesheet (Snakemake's --report-stylesheet), in the checkout beside the workflow's captions
REPORT_STYLESHEET = "workflow/report/report.css"
# a table's files and a figure's, by suffix, and each one's page in the report
TABLE_FILES = {suffix: f"results/tables/{{table}}.{suffix}" for suffix in TABLE_FORMATS}
FIGURE_FILES = {suffix: f"results/figures/{{figure}}.{suffix}" for suffix in FIGURE_FORMATS}
TABLE_HTML, FIGURE_PNG = TABLE_FILES["html"], FIGURE_FILES["png"]
# each one's caption in the report, written by the job that makes it (plmfair.rendering.captions)
REPORT_CAPTIONS = "results/report/"
CAPTIONS = {kind: f"{REPORT_CAPTIONS}{kind}s/{{name}}.rst" for kind in ("table", "figure")}
# the owner of the run's own tables (the data, the models, the hypotheses): one job makes them
RUN_OUTPUTS = "run"

SHARED_TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        "hypotheses",
        "hypotheses",
        "plmfair.rendering.table_format:hypotheses_table",
        {"hypotheses": HYPOTHESES},
        "The run's hypotheses (docs/statistics.md, 'Hypotheses and their families'): first its confirmatory "
        "family, the "
        "studies' primary questions, one per model and data set (CrowS-Pairs: does the model prefer the more "
        "stereotyping sentence, the exact sign test of the decisive pairs; a cloze set: does the model serve "
        "the annotator groups differently, the permutation test of sigma_gd of MRR with the languages pooled), "
        "with each test's p and its p adjusted by Holm over the family (* significant at {alpha}); then every "
        "other marked test, the secondary family, adjusted once by Benjamini-Yekutieli's false discovery rate "
        "over the whole report, in counts per result file: tests, significant, and those outside the family "
        "(untestable: the smallest p the test can give cannot reach the family's threshold; uninformative: a "
        "degenerate null distribution). The estimates and intervals that answer the primary questions are in "
        "the run record and `plmfair show`; every test is in results/hypotheses.parquet.",
        settings={"alpha": "analysis.alpha"},
        builder_settings=("alpha",),
        digits=3,
        title="Hypotheses: every marked test and its adjustment",
    ),
    TableSpec(
        "data_summary",
        "data",
        "plmfair.rendering.table_format:long_table",
        {"table": DATA_SUMMARY},
        "What is in the data: per language of each ready-made cloze test (MozArt's) and per CrowS-Pairs "
        "data set, sentences, annotations, annotators "
        "and pairs by bias type, direction and origin (pairs missing a sentence, unlabelled or duplicated are "
        "skipped by the scoring).",
        digits=0,
        title="What the data sets hold",
    ),
    TableSpec(
        "models",
        "models",
        "plmfair.rendering.table_format:models_table",
        {"models": MODELS_TABLE},
        "Models: family, size, tokenizer, and where the weights come from (read off the loaded model by its "
        "first scoring job).",
        title="Models: family, size, tokenizer and source",
    ),
)


def _owned(shared: tuple[Spec, ...], of: Callable[[Study], Sequence[Spec]]) -> dict[str, tuple[str, Spec]]:
    """Every output of a kind a run can make, by name, with its owner: the ``shared`` ones (:data:`RUN_OUTPUTS`),
    then each study's (``of`` it: one two studies share, once, the first's)."""
    specs = {spec.name: (RUN_OUTPUTS, spec) for spec in shared}
    for name, study in STUDIES.items():
        for spec in of(study):
            specs.setdefault(spec.name, (name, spec))
    return specs


def _owned_tables() -> dict[str, tuple[str, TableSpec]]:
    return _owned(SHARED_TABLES, lambda study: study.outputs.tables)


def _owned_figures() -> dict[str, tuple[str, FigureSpec]]:
    return _owned((), lambda study: study.outputs.figures)


def all_tables() -> Registry[TableSpec]:
    """Every table a run can make, by name: the shared ones, then each study's (a table two studies
    share, once)."""
    return Registry("table", {name: spec for name, (_, spec) in _owned_tables().items()}, error=ConfigError)


def all_figures() -> Registry[FigureSpec]:
    """Every figure a run can make, by name (each study's :attr:`~plmfair.studies.StudyOutputs.figures`)."""
    return Registry("figure", {name: spec for name, (_, spec) in _owned_figures().items()}, error=ConfigError)


def ingesting() -> list[tuple[str, Study]]:
    """The studies that ingest data sets holding text, in the order their data is read: ready-made data
    sets first, answers before minimal pairs, then the constructed sets' answers (the order the demo's tiny
    models were first trained in: their weights, and every number of the demo, depend on it)."""
    studies = [(name, study) for name, study in STUDIES.items() if study.data.ingested]
    return sorted(studies, key=lambda item: (item[1].data.constructs, item[1].task == PAIRS_TASK))


def ingested(study: Study, config: dict) -> dict[str, str]:
    """The data sets a study ingests that hold text, by name (none for a study that ingests none)."""
    return study.data.ingested(config) if study.data.ingested else {}


def data_summary_inputs(config: dict) -> dict[str, dict[str, str]]:
    """Per study whose data the run's data summary counts (its ``counts``), its ingested data sets by name."""
    return {name: ingested(study, config) for name, study in ingesting() if study.data.counts}


def output_subjects(config: dict, subjects: str) -> list[str]:
    """The subjects of a kind (``data``, ``models`` or a study's :attr:`~plmfair.studies.StudyOutputs.subjects`)
    the configuration has: the names of the data sets, or ``[""]`` for a study-wide output that is
    made, ``[]`` when it is not. The data and models are every study's; any other kind is listed by
    the plan function its study's record names."""
    if subjects == "data":  # the data summary, of the data sets the studies count
        return [""] if any(data_summary_inputs(config).values()) else []
    if subjects == "models":
        return [""] if model_run_files(config) else []
    if subjects == "hypotheses":
        return [""] if any(s.hypotheses and s.hypotheses.files(config) for s in STUDIES.values()) else []
    return list(owners(subjects)[0].outputs.subjects[subjects](config))


def report_category(subjects: str, subject: str = "") -> str:
    """The report category (the study) of a table or figure: the data and models, a cloze set (its
    outputs go under the set; a ready-made test named after its study, MozArt's, under the study), or
    the study that owns the kind of subject."""
    if subjects == "hypotheses":
        return "Hypotheses"
    studies = owners(subjects)
    if not studies:
        return "Data and models"
    if not (subject and studies[0].task == CLOZE_TASK):
        return studies[0].title
    ready_made = subject in STUDIES and not STUDIES[subject].data.constructs
    return STUDIES[subject].title if ready_made else f"Cloze set {subject}"


def subject_category(config: dict, subject: str, *, subjects: str) -> str:
    """The report category of the outputs made for one subject of a kind (a cloze set's figures: its
    rules' ``from_plan(plan.subject_category, "cloze_set", subjects="answered_sets")``)."""
    return report_category(subjects, subject)


@dataclass(frozen=True)
class Output:
    """A table or figure to make: its registry entry made for one subject, with the paths of its inputs, the
    keyword arguments of its builder or drawer (options and settings), its caption filled in, its report
    category and its ``job`` (:func:`output_jobs`: the name of the job that makes its owner's outputs for its
    subject)."""

    name: str
    subject: str
    job: str
    inputs: dict[str, str]
    options: dict
    caption: str
    category: str


@dataclass(frozen=True)
class Table(Output):
    """One table to render (its builder, the decimals it prints)."""

    builder: str
    digits: int
    title: str
    synthetic: bool  # a run on synthetic data (the demo): its page says so

    def rendering(self) -> dict:
        """The table job's parameter: everything the rendering reads but its inputs."""
        return {
            "builder": self.builder,
            "options": self.options,
            "caption": self.caption,
            "digits": self.digits,
            "label": f"tab:{self.name}",
            "title": self.title,
            "synthetic": self.synthetic,
        }

    def labels(self) -> dict:
        """What the report's list of tables calls it."""
        return {"table": self.title}

    def files(self) -> dict[str, str]:
        """Its files by kind (:data:`TABLE_FILES`)."""
        return {kind: path.format(table=self.name) for kind, path in TABLE_FILES.items()}


def setting(config: dict, dotted: str) -> Any:
    """The config value at a dotted key (``"cloze.sample"``): a rule's param that is one setting, as
    pypsa-eur's ``config_provider`` hands a rule exactly the keys it reads."""
    node = config
    for key in dotted.split("."):
        node = node[key]
    return node


def tables(config: dict) -> dict[str, Table]:
    """Every table of the configuration, by name (:func:`all_tables` made for each of
    its subjects)."""
    out: dict[str, Table] = {}
    for owner, spec in _owned_tables().values():
        settings = {key: setting(config, dotted) for key, dotted in spec.settings.items()}
        for subject in output_subjects(config, spec.subjects):
            name = spec.name.format(subject=subject)
            if name in out:
                subjects = sorted({s for s in (subject, out[name].subject) if s})
                raise ConfigError(
                    f"config error: two tables would be written to results/tables/{name}; rename the "
                    f"data set or corpus {' or '.join(map(repr, subjects))}"
                )
            out[name] = Table(
                name=name,
                subject=subject,
                job=_job_name(owner, subject),
                inputs={role: path.format(subject=subject) for role, path in spec.inputs.items()},
                options={**spec.options, **{key: settings[key] for key in spec.builder_settings}},
                caption=spec.caption.format(subject=subject, **settings),
                category=report_category(spec.subjects, subject),
                builder=spec.builder,
                digits=spec.digits,
                title=spec.title.format(subject=subject),
                synthetic=bool(config.get("synthetic")),
            )
    return out


@dataclass(frozen=True)
class Figure(Output):
    """One figure to draw (its drawer, the label the report's list of figures gives it)."""

    drawer: str
    label: str

    def drawing(self) -> dict:
        """The figure job's parameter: everything the drawing reads but its inputs."""
        return {"drawer": self.drawer, "options": self.options, "caption": self.caption}

    def labels(self) -> dict:
        """What the report's list of figures calls it."""
        return {"figure": self.label}

    def files(self) -> dict[str, str]:
        """Its files by kind (:data:`FIGURE_FILES`)."""
        return {kind: path.format(figure=self.name) for kind, path in FIGURE_FILES.items()}


def _figures(config: dict) -> dict[str, Figure]:
    """Every figure of the configuration, by name (:func:`all_figures` made for each of its subjects)."""
    out: dict[str, Figure] = {}
    for owner, spec in _owned_figures().values():
        settings = {key: setting(config, dotted) for key, dotted in spec.settings.items()}
        for subject in output_subjects(config, spec.subjects):
            out[spec.name.format(subject=subject)] = Figure(
                name=spec.name.format(subject=subject),
                subject=subject,
                job=_job_name(owner, subject),
                inputs={role: path.format(subject=subject) for role, path in spec.inputs.items()},
                options={
                    **{k: v.format(subject=subject) if isinstance(v, str) else v for k, v in spec.options.items()},
                    **settings,
                },
                caption=spec.caption.format(subject=subject),
                category=report_category(spec.subjects, subject),
                drawer=spec.drawer,
                label=spec.label,
            )
    return out


def figures(config: dict) -> list[str]:
    """The names of every figure of the configuration (:func:`all_figures`)."""
    return list(_figures(config))


def drawn_figures(config: dict) -> dict[str, Figure]:
    """The figures of the configuration the generic ``figure`` rule draws (those with a drawer), by name."""
    return {name: figure for name, figure in _figures(config).items() if figure.drawer}


def _job_name(owner: str, subject: str) -> str:
    """The job that makes an owner's outputs for one subject: the subject (a data set, a cloze set) or, for
    a study-wide output, its owner; a subject named like another owner keeps its owner's name in front."""
    if not subject:
        return owner
    return f"{owner}_{subject}" if subject in (*STUDIES, RUN_OUTPUTS) and subject != owner else subject


def output_jobs(outputs: dict[str, Output]) -> dict[str, dict[str, Output]]:
    """The outputs (:func:`tables` or :func:`drawn_figures`) by the job that makes them: one job per owner
    (a study, or the run's own) and subject."""
    jobs: dict[str, dict[str, Output]] = {}
    for name, output in outputs.items():
        jobs.setdefault(output.job, {})[name] = output
    return jobs


def caption_models(config: dict, table: str) -> list[str]:
    """The models whose config free text the report's caption of ``table`` tells: those that ran,
    for the models table; none for the others."""
    return list(model_run_files(config)) if table == "models" else []
