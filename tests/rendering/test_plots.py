"""What the figures show a reader: every mark drawn exactly where its row's own test is significant,
the interval drawn is the row's, tied groups all marked, an empty panel says so."""

from __future__ import annotations

import matplotlib.colors as mcolors
import pandas as pd
import pytest
from decisions import decided_for

from plmfair.cloze import figures as cloze_figures
from plmfair.cloze.figures import mozart_mrr_figure
from plmfair.cloze.ties import TIE_BREAK
from plmfair.crows_pairs import figures as crows_pairs_figures
from plmfair.crows_pairs.figures import crows_pairs_figure
from plmfair.rendering import plots


@pytest.fixture
def drawn(monkeypatch):
    """The figures a plotting function made, instead of files."""
    figures = []
    for module in (plots, cloze_figures, crows_pairs_figures):
        monkeypatch.setattr(module, "save_figure", lambda fig, png, pdf: figures.append(fig))
    return figures


def _stars(ax) -> int:
    return sum(1 for t in ax.texts if t.get_text() == "*")


def _filled(line) -> bool:
    return mcolors.to_hex(line.get_markerfacecolor()) != "#ffffff"


def test_forest_marks_and_intervals_are_the_rows_own(drawn):
    gaps = pd.DataFrame(
        {
            "model": "m",
            "lang": ["en", "en", "en", "all", "all", "all"],
            "metric": "rr",
            "group": ["FN", "MNN", "FNN"] * 2,
            "reference": "MN",
            "gap": [0.1, -0.3, 0.02, 0.05, -0.2, 0.01],
            "ci_low": [-1.0, -0.5, -0.1, -0.02, -0.35, -0.05],
            "ci_high": [1.0, -0.1, 0.15, 0.12, -0.05, 0.07],
            "ci_level": 0.95,
            "informative": [False, True, True, True, True, True],
        }
    )
    # the third row untestable on its design: drawn hollow, without its interval
    decided, gaps["hypothesis"] = decided_for(
        gaps,
        ["uninformative", "secondary", "untestable", "secondary", "secondary", "secondary"],
        [False, True, False, False, True, False],
    )
    plots.effects_forest_figure(gaps, "x.png", "x.pdf", title="t", hypotheses=decided, alpha=0.05)
    ax = drawn[0].axes[0]
    points = [line for line in ax.lines if line.get_marker() == "o"]
    assert len(points) == 5  # the uninformative row is not drawn, counted in the note
    # filled exactly for the rows the hypotheses find significant (matched by their estimate), a star beside each
    filled = {round(float(line.get_xdata()[0]), 6) for line in points if _filled(line)}
    assert filled == {-0.3, -0.2} and _stars(ax) == 2
    segments = [seg for coll in ax.collections for seg in coll.get_segments()]
    ends = {(round(s[0][0], 6), round(s[1][0], 6)) for s in segments}
    assert {(-0.5, -0.1), (-0.02, 0.12), (-0.35, -0.05), (-0.05, 0.07)} == ends
    # the unit and the level on the axis
    label = drawn[0].get_supxlabel()
    assert "95% interval" in label and "0-1 scale" in label and "untestable" in label
    # the figure names its test and correction itself, and the rows it leaves out
    note = " ".join(t.get_text() for t in drawn[0].texts)
    assert "Permutation test of the two groups compared" in note and "Benjamini-Yekutieli" in note
    assert "1 uninformative row(s) not drawn" in note
    # P@1's tie-break said where P@1 is drawn only
    assert "ties broken by the gap in MRR" not in note
    plots.effects_forest_figure(gaps, "z.png", "z.pdf", title="t", hypotheses=decided, tie_breaks=TIE_BREAK, alpha=0.05)
    assert "ties broken" not in " ".join(t.get_text() for t in drawn[-1].texts)
    plots.effects_forest_figure(
        gaps.assign(metric="hit1"), "y.png", "y.pdf", title="t", hypotheses=decided, tie_breaks=TIE_BREAK, alpha=0.05
    )
    assert "P@1: the test's ties broken by the gap in MRR" in " ".join(t.get_text() for t in drawn[-1].texts)


def test_crows_pairs_figure_draws_the_decisive_share_with_its_test(drawn):
    summary = pd.DataFrame(
        {
            "dataset": "fr",
            "model": "m",
            "subset_kind": ["overall", "bias_type", "bias_type"],
            "subset": ["metric", "gender", "age"],
            "score": [35.2, 40.0, 20.0],
            "decisive_score": [47.1, 60.0, 25.0],
            "ci_low": [44.0, 45.0, 10.0],
            "ci_high": [50.3, 74.0, 45.0],
            "neutral_share": [27.1, 10.0, 0.0],
            "n_neutral": [454, 17, 0],
        }
    )
    decided, summary["hypothesis"] = decided_for(
        summary, ["confirmatory", "secondary", "secondary"], [False, False, True]
    )
    crows_pairs_figure(summary, decided, "x.png", "x.pdf")
    ax, below = drawn[0].axes[0], drawn[0].axes[1]
    # the decisive share is drawn with its interval; Nangia's score apart, unmarked; one star (age)
    segments = [seg for coll in ax.collections for seg in coll.get_segments()]
    assert {(round(s[0][1], 6), round(s[1][1], 6)) for s in segments} == {(44.0, 50.3), (45.0, 74.0), (10.0, 45.0)}
    assert _stars(ax) == 1 and [t.xy[1] for t in ax.texts if t.get_text() == "*"] == [45.0]
    assert [round(p.get_height(), 6) for p in below.patches] == [27.1, 10.0, 0.0]
    assert [t.get_text() for t in below.texts] == ["454", "17"]  # counts beside shares (none on an empty bar)
    assert "neutral" in below.get_ylabel()


def test_an_untestable_crows_pairs_share_is_hollow_and_has_no_interval(drawn):
    summary = pd.DataFrame(
        {
            "dataset": "fr",
            "model": "m",
            "subset_kind": ["overall", "bias_type"],
            "subset": ["metric", "gender"],
            "score": [35.2, 75.0],
            "decisive_score": [47.1, 75.0],
            "ci_low": [44.0, float("nan")],
            "ci_high": [50.3, float("nan")],
            "neutral_share": [27.1, 0.0],
            "n_neutral": [454, 0],
        }
    )
    decided, summary["hypothesis"] = decided_for(summary, ["confirmatory", "untestable"], [False, False])
    crows_pairs_figure(summary, decided, "x.png", "x.pdf")
    ax = drawn[0].axes[0]
    segments = [seg for coll in ax.collections for seg in coll.get_segments()]
    assert {(round(s[0][1], 6), round(s[1][1], 6)) for s in segments} == {(44.0, 50.3)}
    hollow = [line for line in ax.lines if line.get_markerfacecolor() == "white" and len(line.get_ydata())]
    assert [list(line.get_ydata()) for line in hollow] == [[75.0]]
    assert any("untestable" in t.get_text() for t in drawn[0].legends[0].get_texts())


def test_mrr_figure_marks_every_tied_group_and_says_when_nothing_hit(drawn):
    rows = []
    for model, values in (
        ("tied", {"MN": 20.0, "FN": 20.0, "MNN": 5.0, "FNN": 5.0}),
        ("empty", dict.fromkeys(("MN", "FN", "MNN", "FNN"), 0.0)),
    ):
        rows += [{"model": model, "lang": "en", "group": g, "mrr": v} for g, v in values.items()]
    mozart_mrr_figure(pd.DataFrame(rows), "x.png", "x.pdf")
    tied, empty = drawn[0].axes[:2]
    marks = [t.get_text() for t in tied.texts]
    assert marks.count("▲") == 2 and marks.count("▼") == 2
    assert [t.get_text() for t in empty.texts] == ["no hit in the top 5"]
    assert empty.get_ylim()[1] > 20  # the shared scale, not -0.04..0.04
    labels = drawn[0].legends[0].get_texts()
    assert "MN (male native)" in [t.get_text() for t in labels]


def test_a_breakdown_heatmap_prints_each_cells_own_count_in_every_panel(drawn):
    """Two panels, each cell with its value and its own denominator (the count column, not n)."""
    table = pd.DataFrame(
        {
            "model": ["m1", "m1", "m2", "m2"],
            "lang": ["fr", "fr", "fr", "fr"],
            "attribute": ["length"] * 4,
            "bucket": ["1-4", "5-9"] * 2,
            "bucket_order": [0, 1] * 2,
            "n": [10, 12, 9, 11],
            "annotations": [40, 48, 36, 44],
            "score": [20.0, 30.0, 40.0, 50.0],
        }
    )
    plots.breakdown_heatmap(
        table,
        "x.png",
        "x.pdf",
        value="score",
        columns="lang",
        panels="model",
        title="t",
        value_label="v",
        count="annotations",
        count_label="annotations",
    )
    texts = [t.get_text() for ax in drawn[0].axes for t in ax.texts]
    for value, count in ((20, 40), (30, 48), (40, 36), (50, 44)):
        assert f"{value}\nannotations={count}" in texts
