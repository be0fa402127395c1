"""What a table and a figure are, for the generic ``table`` and ``figure`` rules: :class:`TableSpec`,
:class:`FigureSpec`.

Each study lists its tables and figures in its own ``outputs.py`` (the run's shared ones, data and models, are in
:mod:`plmfair.plan.targets`); the ``table`` and ``figure`` rules (``workflow/rules/outputs.smk``) render each for each
of its subjects as ``results/tables/<name>.{csv,md,tex,html}``. Names and input paths hold
``{subject}``; captions are ``str.format`` templates of ``subject`` and the ``settings`` (config
values by dotted key). Light (no pandas): the plan reads it to build the DAG.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# the files a table is written as, and a figure drawn as, by suffix: results/tables/<name>.<suffix>,
# results/figures/<name>.<suffix>
TABLE_FORMATS = ("csv", "md", "tex", "html")
FIGURE_FORMATS = ("png", "pdf")

# what the captions say of the marks, once for every table
POLICY = (
    "* : significant after the run's adjustment for multiple testing (docs/statistics.md, 'Hypotheses and their "
    "families'): "
    "the studies' primary questions by Holm over the run's confirmatory family, every other marked test by "
    "Benjamini-Yekutieli's false discovery rate over the whole report; p adjusted is that adjustment's, the "
    "interval the test's own at 1 - {alpha}, so a marked row's interval excludes its null value and one that "
    "excludes it unmarked is significant before the adjustment only (nominal). Untestable: the smallest p the "
    "test can give on this design cannot reach its family's threshold (no mark, no interval); uninformative: "
    "every assignment gives the same statistic."
)


@dataclass(frozen=True)
class TableSpec:
    """One table: ``name``, the kind of ``subjects`` it is made for, its ``builder``
    (``"module:function"``, imported when the table is rendered), its Parquet ``inputs`` by role,
    its ``caption``; the builder also gets ``options`` and the ``builder_settings`` among ``settings``; its
    ``title`` heads its page and names it in the report's list of tables (as a figure's ``label`` does)."""

    name: str
    subjects: str
    builder: str
    inputs: dict[str, str]
    caption: str
    options: dict = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    builder_settings: tuple[str, ...] = ()
    digits: int = 2
    title: str = ""


@dataclass(frozen=True)
class FigureSpec:
    """One figure, written as ``results/figures/<name>.{png,pdf}``: ``name`` and the kind of ``subjects`` as a
    table's; its ``drawer`` (``"module:function"``, imported when the figure is drawn, called with its
    Parquet ``inputs`` read as frames by role, ``png`` and ``pdf`` paths, its ``options`` (strings formatted
    with ``subject``) and the config values ``settings`` names (option -> dotted key)), or ``""`` for a
    figure a job of its own draws from what it computes first (the t-SNE map); the report's ``caption`` and
    the ``label`` its list of figures gives it."""

    name: str
    subjects: str
    drawer: str
    inputs: dict[str, str]
    caption: str
    label: str
    options: dict = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
