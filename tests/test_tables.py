"""The table renderers: pandas' Markdown and LaTeX writers with the papers' symbols escaped."""

from __future__ import annotations

import pandas as pd

from plmfair.tables import to_latex, to_markdown


def _table():
    return pd.DataFrame({"": ["σ_gd", "MN†", "a|b"], "P@1 (%)": [10.1234, None, 3.0], "n": [3, 4, 5],
                         "mark": ["‡", "", "x & y"]})


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
    from plmfair.labels import contrast_label, metric_label
    from plmfair.tables import effects_table

    assert contrast_label("group[T.FN]", "MN") == "FN vs MN"
    assert contrast_label("dataset[T.demo_de]", "demo_en") == "demo_de vs demo_en"
    assert contrast_label("Intercept", "MN, de") == "mean at MN, de"
    assert metric_label("rr") == "MRR (reciprocal rank)" and metric_label("hit1") == "P@1 (hit at 1)"
    effects = pd.DataFrame({"model": ["m"], "lang": ["en"], "metric": ["hit1"], "term": ["group[T.FNN]"],
                            "reference": ["MN"], "estimate": [0.1], "ci_low": [0.0], "ci_high": [0.2],
                            "p_value": [0.04], "n_obs": [48], "converged": [True]})
    table = effects_table(effects)
    assert table.loc[0, "term"] == "FNN vs MN" and table.loc[0, "metric"] == "P@1 (hit at 1)"
    assert "[T." not in to_markdown(table) and "reference" not in table.columns


def test_html_prints_the_same_cells_as_markdown(tmp_path):
    from plmfair.tables import render_table

    frame = pd.DataFrame({"dataset": ["fr"], "n": [36], "score": [55.123], "missing": [None]})
    render_table({"table": frame}, builder="long_table", options={}, caption="c", digits=2, label="t",
                 csv=tmp_path / "t.csv", md=tmp_path / "t.md", tex=tmp_path / "t.tex", html=tmp_path / "t.html")
    html = (tmp_path / "t.html").read_text()
    assert ">36<" in html and ">55.12<" in html and "36.00" not in html and "nan" not in html.lower()


def test_a_row_mean_over_fewer_languages_says_so():
    from plmfair.tables import paper_table

    rows = [{"model": "m", "lang": lang, "group": g, "p_at_1": float(i), "n": 10}
            for i, (lang, g) in enumerate((lang, g) for lang in ("en", "de") for g in ("MN", "FN", "MNN", "FNN", "all"))
            if not (lang == "de" and g == "FN")]
    table = paper_table(pd.DataFrame(rows), metric="p_at_1")
    means = dict(zip(table["group"].str.rstrip("§"), table["mean (σ_gd)"], strict=True))
    assert means["FN"].endswith(", 1 of 2 languages") and "languages" not in means["MN"]
