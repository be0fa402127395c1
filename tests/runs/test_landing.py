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
