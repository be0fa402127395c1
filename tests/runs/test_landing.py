"""The report's first page (plmfair.runs.landing) and run.html (plmfair.runs.record_page), without a run: the
browser test (tests/test_report_browser.py) reads both on the demo's."""

from plmfair.runs.landing import making_report, report_description
from plmfair.runs.record_page import tree


def test_the_tools_page_is_the_reports_first_page_unless_a_report_of_a_finished_run_is_made(tmp_path):
    static = "workflow/report/workflow.rst"
    assert making_report(["snakemake", "--report", "results/report.html"])
    assert making_report(["snakemake", "--report=results/report.html"])
    assert not making_report(["snakemake", "--cores", "2", "-n"])
    # not making a report, or a run with no record: the tool's page, and nothing written
    assert report_description(static, folder=tmp_path, argv=["snakemake", "-n"]) == static
    assert report_description(static, folder=tmp_path, argv=["snakemake", "--report"]) == static
    assert list(tmp_path.iterdir()) == []


def test_the_record_is_a_tree_of_collapsible_sections_and_flat_rows_are_tables():
    page = tree({"config": {"alpha": 0.05, "models": {"m": {"family": "mlm"}}}, "files": [{"path": "a", "n": 1}]})
    assert page.count("<details>") == 4  # config, models, m, files
    assert '<summary>files<span class="count"> (1 rows)</span></summary>' in page and "<table" in page
    assert "alpha: <code>0.05</code>" in page
    assert tree({"x": "<b>"}) == "<div>x: <code>&quot;&lt;b&gt;&quot;</code></div>"  # escaped


def test_text_on_the_landing_page_is_neither_markup_nor_template():
    """A name or question with reStructuredText markup or Jinja braces prints as written, through both."""
    import html

    from docutils.core import publish_parts
    from jinja2 import Environment

    from plmfair.runs.landing import _escaped

    text = "a *b* `c` d_e {{ f }} {% g %}"
    rendered = Environment().from_string(_escaped(text)).render()
    assert rendered == r"a \*b\* \`c\` d\_e {{ f }} {% g %}"
    assert html.escape(text, quote=False) in publish_parts(rendered, writer="html")["html_body"]


# text a user's config, data file or model folder can bring: directives that would write raw HTML or copy a local
# file into the report, a tag, template braces and inline markup, each after a line break
LOCAL_FILE = "/etc/hostname"
HOSTILE = (
    "x\n\n.. raw:: html\n\n   <script>alert(1)</script>\n\n.. include:: " + LOCAL_FILE + "\n\n"
    "<img src=x onerror=alert(1)>\u2028.. raw:: html\n\n  <b>bold</b>\n\n{{ 1234 * 2 }} `a`_ *b* |c|\r\n= title =\n"
)


def _html(rst: str) -> str:
    from docutils.core import publish_parts

    return publish_parts(rst, writer="html")["body"]  # as Snakemake's report renders a caption


def _inert(page: str) -> None:
    from pathlib import Path

    assert "<script" not in page and "<img" not in page and "<b>" not in page and "2468" not in page
    assert "system-message" not in page  # no directive ran, not even a refused one: the text is one paragraph
    secret = Path(LOCAL_FILE).read_text().strip() if Path(LOCAL_FILE).is_file() else ""
    assert not secret or secret not in page.replace("include:: " + LOCAL_FILE, "")


def test_a_configs_free_text_reaches_a_caption_as_text(monkeypatch, tmp_path):
    """The table caption template, rendered as Snakemake renders it (Jinja, then docutils), with a model's free
    text and a caption carrying every kind of markup: none of it is live, no file is copied in."""
    from types import SimpleNamespace

    from conftest import REPO
    from jinja2 import Environment

    from plmfair.rendering.captions import caption_stub

    monkeypatch.delenv("DOCUTILSCONFIG", raising=False)  # the escaping alone, without the report's settings
    config = {"models": {"m": {"pretraining_data": HOSTILE, "licence": HOSTILE}}}
    # the job's params: each output's entry, its caption and the models whose free text it tells
    entry = {"rendering": {"caption": HOSTILE}, "drawing": {"caption": HOSTILE}, "models": ["m"]}
    snakemake = SimpleNamespace(config=config, params=SimpleNamespace(outputs={"t": entry}))
    env = Environment(trim_blocks=True, lstrip_blocks=True)
    for template in ("table.rst", "figure.rst"):
        stub = caption_stub("t", (REPO / "workflow" / "report" / template).read_text())
        text = env.from_string(stub).render(snakemake=snakemake)
        assert "pretraining data" in text or template == "figure.rst"  # the models' free text is there, as text
        _inert(_html(text))


def test_a_report_is_read_with_raw_html_and_file_inclusion_off(monkeypatch, tmp_path):
    """Where a directive does reach docutils (a caption of the code's own), the settings the report is made with
    refuse raw HTML and inclusion."""
    from conftest import REPO

    from plmfair.runs.landing import REPORT_DOCUTILS

    monkeypatch.setenv("DOCUTILSCONFIG", "")  # restored after the test: report_description sets it for the process
    report_description("workflow.rst", docutils=REPO / REPORT_DOCUTILS, folder=tmp_path, argv=["--report", "r"])
    page = _html("x\n\n.. raw:: html\n\n   <script>alert(1)</script>\n\n.. include:: " + LOCAL_FILE + "\n")
    assert "<script" not in page and "&quot;raw&quot; directive disabled" in page
    assert "&quot;include&quot; directive disabled" in page


def test_landing_text_with_line_breaks_stays_on_its_line():
    from jinja2 import Environment

    from plmfair.runs.landing import _escaped

    _inert(_html("Data file: " + Environment().from_string(_escaped(HOSTILE)).render()))


def test_a_data_file_name_with_a_line_break_stays_a_cell_of_its_row():
    """A data file (or model) name holding a newline and a directive: the landing page's table keeps it in its
    cell, and nothing of it is live."""
    from jinja2 import Environment

    from plmfair.runs.landing import _data

    name = "pairs.csv\n\n.. raw:: html\n\n   <script>alert(1)</script>\n"
    page = _html(Environment().from_string("\n".join(_data([{"file": name, "sha256": "ab" * 32}]))).render())
    _inert(page)
    assert page.count("<tr>") == 2 and "pairs.csv .. raw:: html &lt;script&gt;alert(1)&lt;/script&gt;" in page
