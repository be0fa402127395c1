"""The report's landing page: what the run found and whether it can be cited, before anything about the tool.

Snakemake renders a workflow's description (its ``report:`` file, reStructuredText through Jinja) as the
report's first page. When a report is made of a finished run, :func:`report_description` writes that page
from the run's record instead: the run's name and status (complete and verified, or what is not:
:func:`plmfair.runs.status.run_status`), a synthetic run's warning, the answers to the hypotheses'
primary questions with their intervals and marks, each linked to the table and figure behind it
(:attr:`plmfair.studies.StudyOutputs.answered_in`), the models with their source and digest, and the data files
with theirs. The page is written to a temporary file (the run folder is not touched: a report changes no
result), and only when Snakemake is making a report.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from plmfair import plan
from plmfair.errors import PlmfairError
from plmfair.studies import STUDIES

# the docutils settings of the report (relative to the workflow): raw HTML and file inclusion off
REPORT_DOCUTILS = "workflow/report/docutils.conf"


def making_report(argv: Sequence[str] | None = None) -> bool:
    """Whether this Snakemake call makes a report (``--report``): the only call whose first page is read."""
    return any(arg == "--report" or arg.startswith("--report=") for arg in (sys.argv if argv is None else argv))


def _escaped(text: str) -> str:
    """Plain text inside reStructuredText and Jinja: on one line (every line break and run of white space one
    space, so that no value can start a block of its own, a directive among them), markup characters escaped,
    each brace a Jinja expression that prints it (Snakemake renders the page as a template before
    reStructuredText reads it)."""
    text = re.sub(r"\s+", " ", text)
    for char in ("\\", "*", "`", "|", "_"):
        text = text.replace(char, "\\" + char)
    return re.sub(r"[{}]", lambda brace: "{{ '" + brace.group() + "' }}", text)


def _grid(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """An RST list-table (cells may hold links)."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        lines.append("   * - " + (row[0] or " "))
        lines += [f"     - {cell or ' '}" for cell in row[1:]]
    return "\n".join(lines) + "\n"


def _answers_in(folder: Path, hypothesis: str, study: str) -> list[str]:
    """The tables and figures behind one primary answer that the run made, as links to them in the report."""
    if study not in STUDIES:
        return []
    parts = hypothesis.split("/")
    subject = parts[1] if len(parts) > 1 else ""
    shown = STUDIES[study].outputs.answered_in
    made = [Path(plan.TABLE_HTML.format(table=n.format(subject=subject))) for n in shown.get("tables", ())]
    made += [Path(plan.FIGURE_PNG.format(figure=n.format(subject=subject))) for n in shown.get("figures", ())]
    return [f"`{path.name}`_" for path in made if (folder / path).is_file()]


def landing_page(folder: Path, *, run_name: str | None = None) -> str:
    """The landing page of the report of the run in ``folder`` (reStructuredText)."""
    # the record's tables (pandas) only when a report is made: the Snakefile imports this module
    from plmfair.rendering.table_format import SYNTHETIC
    from plmfair.runs.record import read_run_record
    from plmfair.runs.status import run_status

    record_path = folder / plan.RUN_RECORD
    status, trusted = run_status(folder)
    name = run_name or folder.resolve().name.lstrip(".")
    title = f"Run {_escaped(name)}: what it found"
    out = [title, "=" * len(title), ""]
    try:
        record = read_run_record(record_path) if record_path.is_file() else None
    except (PlmfairError, ValueError):  # the status says what is wrong with it; the page shows none of it
        record = None
    if record is not None and record["config"].get("synthetic"):
        out += [f".. warning:: {SYNTHETIC}", ""]
    said = status.removeprefix("status: ")
    out += [f"**Status: {_escaped(said)}** (``plmfair verify`` checks it again).", ""]
    if record is None:
        return "\n".join(out + ["No answers are shown: the run has no record that can be read.", ""])
    out += [
        "Cite a number with its run record, ``results/run.json`` (every setting, model digest, data checksum and "
        "software version; read it as a page: `run.html`_).",
        "",
    ]
    out += _answers(folder, record, trusted)
    out += _models(record["models"])
    out += _data(record["data"])
    out += [
        "Every table and figure of the run is under the categories on the left; "
        "``docs/statistics.md`` says how each number is tested.",
        "",
    ]
    return "\n".join(out)


def _answers(folder: Path, record: Mapping, trusted: bool) -> list[str]:
    """The primary answers with their intervals and marks, each linked to its table and figure."""
    # pandas (the record's tables) only when a report is made, as in landing_page
    from plmfair.rendering.table_format import printed
    from plmfair.runs.record import primary_lines

    out = ["Primary answers", "---------------", ""]
    if not trusted:
        return out + ["Not shown: the record cannot be verified (see the status above).", ""]
    primary = record["results"].get("primary", [])
    if not primary:
        return out + ["The run answered no primary question (no model scored a data set with a question).", ""]
    lines = primary_lines(record)
    shown = printed(lines)
    plan_counts = record["results"]["hypotheses"]
    family = plan_counts["families"]["confirmatory"]
    out += [
        f"The hypotheses' primary questions, {family['tests']} in its confirmatory family (Holm; level "
        f"{plan_counts['alpha']}): each estimate with the interval of its test, its p adjusted (* significant: "
        f"{family['significant']} of {family['tests']}), and the table and figure behind it.",
        "",
    ]
    # each answer in words, a line of its own, then the numbers behind them (the words' column left out of the grid)
    out += [f"- {_escaped(entry['answer'])}" for entry in primary] + [""]
    rows = []
    columns = [c for c in shown.columns if c != "answer" and (c != "note" or shown[c].astype(bool).any())]
    for (_, cells), entry in zip(shown.iterrows(), primary, strict=True):
        rows.append(
            [_escaped(str(cells[c])) for c in columns]
            + [", ".join(_answers_in(folder, entry["hypothesis"], entry["study"]))]
        )
    out += [_grid([_escaped(c) for c in columns] + ["shown in"], rows), ""]
    return out


def _models(models: Sequence[Mapping]) -> list[str]:
    """Each model with its source, revision and digest."""
    rows = [
        [
            _escaped(m["name"]),
            _escaped(m.get("family") or ""),
            _escaped(str(m.get("source") or "")),
            _escaped(str(m.get("commit") or m.get("revision_requested") or "not pinned")),
            f"``{(m.get('files_sha256') or '')[:16]}``",
        ]
        for m in models
    ]
    return ["Models", "------", "", _grid(["model", "family", "source", "revision", "SHA-256 of its files"], rows), ""]


def _data(data: Sequence[Mapping]) -> list[str]:
    """Each data file with its checksum and whether the configuration pinned it."""
    rows = [
        [
            _escaped(d["file"]),
            f"``{d['sha256'][:16]}``",
            "pinned" if d.get("sha256_config") == d["sha256"] else "NOT pinned by the configuration",
        ]
        for d in data
    ]
    return ["Data", "----", "", _grid(["file", "SHA-256", "checksum"], rows), ""]


def report_description(
    static: str,
    *,
    docutils: str | os.PathLike | None = None,
    folder: Path | None = None,
    argv: Sequence[str] | None = None,
) -> str:
    """The report's first page: when Snakemake makes a report of a run with a record, a page written from it
    (:func:`landing_page`) to a temporary file, whose absolute path is returned; else ``static``. When a report
    is made, every caption and this page are read with the ``docutils`` settings file (``DOCUTILSCONFIG``:
    workflow/report/docutils.conf switches the raw and include directives off)."""
    folder = Path.cwd() if folder is None else folder
    if not making_report(argv):
        return static
    if docutils is not None:
        os.environ["DOCUTILSCONFIG"] = str(Path(docutils).resolve())
    if not (folder / plan.RUN_RECORD).is_file():
        return static
    page = Path(tempfile.mkdtemp(prefix="plmfair-report-")) / "landing.rst"
    page.write_text(landing_page(folder), encoding="utf-8")
    return str(page)
