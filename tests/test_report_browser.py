"""The demo's report as a reader sees it: opened in a real browser (Debian's headless chromium, driven by
Playwright) at a common laptop size, 1400 x 900. The landing page holds the run's name, its status and the
answers to its primary questions; no console error is logged; every figure fits its pane at a scale its text
can be read at; every table is titled and scrolls inside its page; run.html is a page. Screenshots are kept in
test-artefacts/report/ (CI keeps them)."""

import json
import shutil
from pathlib import Path

import pytest
from conftest import DEMO_CONFIGS, snakemake

from plmfair.plan.targets import REPORT_STYLESHEET

REPO = Path(__file__).resolve().parents[1]
ARTEFACTS = REPO / "test-artefacts" / "report"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
VIEWPORT = {"width": 1400, "height": 900}
# a figure shown smaller than this share of its pixels has text below about 8 px (8 pt at 150 dpi)
READABLE_SCALE = 0.5

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (make setup)")
pytestmark = [
    pytest.mark.e2e,  # the report is made by Snakemake from the demo's run
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="no chromium on this machine (.ci/run installs Debian's as root: apt-get install chromium)",
    ),
]


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory, demo_run) -> Path:
    """The demo's report, made as `make demo-report` makes it, in a copy of the demo run named ``demo``."""
    copy = tmp_path_factory.mktemp("report") / "demo"
    shutil.copytree(demo_run, copy, symlinks=True, copy_function=shutil.copy2)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    stylesheet = str(REPO / REPORT_STYLESHEET)
    snakemake(copy, "--report", "results/report.html", "--report-stylesheet", stylesheet, configfiles=DEMO_CONFIGS)
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    return copy


def _open(browser, url: str, *, settle_ms: int = 1000):
    """A page at the laptop size with every console error and uncaught exception it logs (``settle_ms``: time
    for the report's scripts to draw it; a static page needs none)."""
    page = browser.new_page(viewport=VIEWPORT)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url)
    page.wait_for_timeout(settle_ms)
    return page, errors


PANE = "document.querySelector('div.grow.justify-center.h-screen.overflow-auto')"  # Snakemake's content pane


def test_the_landing_page_answers_what_the_run_found_and_whether_it_can_be_cited(browser, report):
    page, errors = _open(browser, (report / "results/report.html").as_uri())
    page.screenshot(path=str(ARTEFACTS / "landing.png"))
    text = page.inner_text("body")
    record = json.loads((report / "results/run.json").read_text(encoding="utf-8"))
    assert "Run demo: what it found" in text
    assert "Status: complete, verified" in text
    assert "Synthetic data, tiny models" in text
    assert record["results"]["primary"], "the demo answers primary questions"
    for answer in record["results"]["primary"]:
        assert answer["question"] in text and answer["answer"] in text, answer["question"]  # in words, and asked
    assert "crows_pairs_tests.html" in text and "mozart_mrr.png" in text  # each answer links to what shows it
    for model in record["models"]:
        assert model["files_sha256"][:16] in text
    # the answers come before the tool: the title is at the top of the pane, the first answer, in words, on the
    # first screen
    title = page.get_by_text("Run demo: what it found").bounding_box()
    first = page.get_by_text(record["results"]["primary"][0]["answer"]).first.bounding_box()
    assert title["y"] >= 0 and first["y"] + first["height"] <= VIEWPORT["height"], (title, first)
    assert errors == [], errors


def test_every_figure_fits_its_pane_at_a_readable_scale(browser, report):
    page, errors = _open(browser, (report / "results/report.html").as_uri())
    figures = page.evaluate("Object.keys(results).filter(path => path.endsWith('.png'))")
    assert len(figures) >= 10
    for path in figures:
        page.evaluate(
            "path => app.setView({content: 'img', contentPath: results[path].data_uri, resultPath: path})", path
        )
        page.wait_for_function(
            f"path => {{ const img = {PANE}.querySelector('img'); "
            "return img && img.src === results[path].data_uri && img.complete; }",
            arg=path,
        )
        box = page.evaluate(
            f"""() => {{ const pane = {PANE}.getBoundingClientRect(); const img = {PANE}.querySelector('img');
            const r = img.getBoundingClientRect();
            return {{pane: [pane.left, pane.top, pane.right], img: [r.left, r.top, r.right], width: r.width,
                     natural: img.naturalWidth}}; }}"""
        )
        page.screenshot(path=str(ARTEFACTS / Path(path).name))
        (left, top, right), (pane_left, pane_top, pane_right) = box["img"], box["pane"]
        assert left >= pane_left - 0.5 and right <= pane_right + 0.5 and top >= pane_top - 0.5, (path, box)
        assert box["width"] / box["natural"] >= READABLE_SCALE, (path, box)
    assert errors == [], errors


def test_every_table_is_titled_and_scrolls_inside_its_page(browser, report):
    tables = sorted((report / "results/tables").glob("*.html"))
    assert len(tables) >= 28
    for path in tables:
        page, errors = _open(browser, path.as_uri(), settle_ms=0)
        assert page.title() and page.inner_text("h1") == page.title(), path.name
        box = page.evaluate("() => [document.querySelector('.scroll').getBoundingClientRect().right, innerWidth]")
        assert box[0] <= box[1], (path.name, box)
        assert errors == [], (path.name, errors)
        page.close()
    page, _ = _open(browser, (report / "results/tables/crows_pairs_tests.html").as_uri(), settle_ms=0)
    page.screenshot(path=str(ARTEFACTS / "table_crows_pairs_tests.png"))


def test_the_run_record_is_a_page_with_its_headline_tables_and_a_tree(browser, report):
    page, errors = _open(browser, (report / "results/run.html").as_uri(), settle_ms=0)
    page.screenshot(path=str(ARTEFACTS / "run.png"))
    assert page.title() == "Run record"
    assert page.evaluate("document.characterSet") == "UTF-8"
    assert "Synthetic data, tiny models" in page.inner_text("body")
    assert page.locator("h2", has_text="Answers to the primary questions").count() == 1
    assert page.locator("table").count() >= 3  # the answers, the headline tables, the record's rows
    sections = page.locator("details > summary")
    assert sections.count() >= 8 and page.locator("details[open]").count() == 0  # collapsed until opened
    sections.first.click()
    assert page.locator("details[open]").count() == 1
    assert errors == [], errors
