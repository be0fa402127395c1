"""The table renderers: pandas' Markdown and LaTeX writers with the papers' symbols escaped."""

from __future__ import annotations

import numpy as np
import pandas as pd

from plmfair.rendering.table_format import printed, to_latex, to_markdown


def _table():
    return pd.DataFrame(
        {"": ["σ_gd", "MN†", "a|b"], "P@1 (%)": [10.1234, None, 3.0], "n": [3, 4, 5], "mark": ["‡", "", "x & y"]}
    )


def test_markdown_aligns_formats_and_escapes_pipes():
    md = to_markdown(_table(), digits=1).splitlines()
    assert md[0] == "|      |   P@1 (%) |   n | mark   |"
    assert md[1].split("|")[1:-1] == [":-----", "----------:", "----:", ":-------"]  # text left, numbers right
    assert "10.1" in md[2] and "σ_gd" in md[2]
    assert "a\\|b" in md[4] and len(md) == 5


def test_latex_escapes_specials_and_the_papers_symbols():
    tex = to_latex(_table(), digits=2, caption="MRR (%) of model_x: σ over groups", label="tab:mrr")
    assert r"\caption{MRR (\%) of model\_x: $\sigma$ over groups}" in tex
    assert r"\label{tab:mrr}" in tex and r"\toprule" in tex and r"\bottomrule" in tex
    assert r"P@1 (\%)" in tex
    assert r"$\sigma$\_gd & 10.12 & 3 & \ddag{} \\" in tex
    assert r"MN\dag{} &  & 4 &  \\" in tex
    assert r"x \& y" in tex
    assert r"\begin{tabular}{lrrl}" in tex
    for raw in ("σ", "†", "‡"):
        assert raw not in tex


def test_latex_converts_section_and_degree_marks():
    tex = to_latex(pd.DataFrame({"group": ["FN§"], "EN": ["33.3° (.120)"]}))
    assert r"FN\S{}" in tex and r"33.3$^{\circ}$ (.120)" in tex and "§" not in tex and "°" not in tex


def test_statistical_terms_and_metrics_read_as_contrasts():
    from plmfair.rendering.labels import contrast_label, metric_label
    from plmfair.rendering.table_format import effects_table

    assert contrast_label("group[T.FN]", "MN") == "FN vs MN"
    assert contrast_label("dataset[T.demo_de]", "demo_en") == "demo_de vs demo_en"
    assert contrast_label("Intercept", "MN, de") == "mean at MN, de"
    assert metric_label("rr") == "MRR (reciprocal rank)" and metric_label("hit1") == "P@1 (hit at 1)"
    effects = pd.DataFrame(
        {
            "model": ["m"],
            "lang": ["en"],
            "metric": ["hit1"],
            "term": ["group[T.FNN]"],
            "reference": ["MN"],
            "estimate": [0.1],
            "ci_low": [0.0005],
            "ci_high": [0.2],
            "ci_level": [1 - 0.05 / 3],
            "p_value": [0.0001],
            "p_bonferroni": [0.0003],
            "significant": [True],
            "n_obs": [48],
            "converged": [True],
        }
    )
    table = effects_table(effects)
    assert table.loc[0, "term"] == "FNN vs MN" and table.loc[0, "metric"] == "P@1 (hit at 1)"
    assert "[T." not in to_markdown(table) and "reference" not in table.columns
    # p below 0.001 prints as <0.001, never 0.000; the mark sits on the p of the interval's level, which
    # prints exactly; the interval's low end keeps its side of 0
    cells = printed(table, 3)
    assert cells.loc[0, "p Bonferroni"] == "<0.001*" and cells.loc[0, "level"] == "1 − 0.05/3"
    assert cells.loc[0, "interval"] == "[0.001, 0.200]" and "low" not in cells and "significant" not in cells
    assert table.loc[0, "low"] == 0.0005  # the table itself (its CSV) keeps the number


def test_p_values_print_as_their_size_allows():
    from plmfair.rendering.numbers import p_value

    assert [p_value(p) for p in (0.0, 0.0002, 0.001, 0.0456, 1.0, float("nan"))] == [
        "<0.001",
        "<0.001",
        "0.001",
        "0.046",
        "1.000",
        "",
    ]
    frame = pd.DataFrame({"p_value": [0.00001, 0.5], "estimate": [0.0001, 0.5]})
    cells = to_markdown(frame, digits=3)
    assert "<0.001" in cells and "0.0001" in cells  # neither rounded to 0.000


def test_gaps_and_disparity_tables_say_only_what_their_tests_support():
    from plmfair.cloze.tables import disparity_table, gaps_table

    gaps = pd.DataFrame(
        {
            "model": ["m", "m"],
            "lang": ["en", "all"],
            "metric": ["rr", "rr"],
            "group": ["FN", "FN"],
            "reference": ["MN", "MN"],
            "gap": [0.1, -0.2],
            "ci_low": [-np.inf, -0.3],
            "ci_high": [np.inf, -0.05],
            "ci_level": [1 - 0.05 / 3] * 2,
            "p_permutation": [0.4, 0.002],
            "p_bonferroni": [1.0, 0.006],
            "significant": [False, True],
            "n_sentences": [6, 24],
            "n_annotators": [4, 16],
            "informative": [False, True],
        }
    )
    table = printed(gaps_table(gaps), 3)
    assert table["interval"].tolist() == ["[-inf, inf]", "[-0.300, -0.050]"]
    assert table["test"].tolist() == ["uninformative: the permutations cannot bound the interval", ""]
    assert table["p Bonferroni"].tolist() == ["1.000", "0.006*"] and table.loc[0, "comparison"] == "FN vs MN"
    disparity = pd.DataFrame(
        {
            "model": ["m", "m"],
            "lang": ["en", "fr"],
            "metric": ["p_at_1", "mrr"],
            "sigma_gd": [2.5, 9.0],
            "ci_low": [1.0, 6.0],
            "ci_high": [4.0, 12.0],
            "critical_value": [3.1, 5.0],
            "null_mean": [1.5, 2.0],
            "debiased": [1.9, 8.8],
            "debiased_low": [0.0, 5.5],
            "debiased_high": [3.5, 11.9],
            "p_permutation": [0.3, 0.001],
            "p_bonferroni": [1.0, 0.002],
            "significant": [False, True],
        }
    )
    table = printed(disparity_table(disparity))
    assert table["verdict"].tolist() == ["no group differs significantly", "groups differ"]
    assert table["metric"].tolist() == ["P@1", "MRR"] and table.loc[0, "bootstrap interval"] == "[1.00, 4.00]"


def test_html_prints_the_same_cells_as_markdown(tmp_path):
    from plmfair.rendering.table_format import render_table

    frame = pd.DataFrame({"dataset": ["fr"], "n": [36], "score": [55.123], "missing": [None]})
    render_table(
        {"table": frame},
        builder="plmfair.rendering.table_format:long_table",
        options={},
        caption="c",
        digits=2,
        label="t",
        csv=tmp_path / "t.csv",
        md=tmp_path / "t.md",
        tex=tmp_path / "t.tex",
        html=tmp_path / "t.html",
    )
    html = (tmp_path / "t.html").read_text()
    assert ">36<" in html and ">55.12<" in html and "36.00" not in html and "nan" not in html.lower()


def test_a_row_mean_over_fewer_languages_says_so():
    from plmfair.cloze.tables import paper_table

    rows = [
        {"model": "m", "lang": lang, "group": g, "p_at_1": float(i), "n": 10}
        for i, (lang, g) in enumerate((lang, g) for lang in ("en", "de") for g in ("MN", "FN", "MNN", "FNN", "all"))
        if not (lang == "de" and g == "FN")
    ]
    table = paper_table(pd.DataFrame(rows), metric="p_at_1")
    means = dict(zip(table["group"].str.rstrip("§"), table["mean (σ_gd)"], strict=True))
    assert means["FN"].endswith(", 1 of 2 languages") and "languages" not in means["MN"]
