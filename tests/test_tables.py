"""The table renderers: pandas' Markdown and LaTeX writers with the papers' symbols escaped."""

from __future__ import annotations

import pandas as pd

from plmfair.tables import to_latex, to_markdown


def _table():
    return pd.DataFrame({"": ["σ_gd", "MN†", "a|b"], "P@1 (%)": [10.1234, None, 3.0], "n": [3, 4, 5],
                         "mark": ["‡", "", "x & y"]})


def test_markdown_aligns_formats_and_escapes_pipes():
    md = to_markdown(_table(), digits=1).splitlines()
    assert md[0] == "|      |   P@1 (%) |   n |   mark |"
    assert md[1].startswith("|:") and md[1].endswith(":|")  # first column left, the rest right
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
    for raw in ("σ", "†", "‡"):
        assert raw not in tex
