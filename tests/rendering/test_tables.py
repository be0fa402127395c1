"""The table renderers: pandas' Markdown and LaTeX writers with the papers' symbols escaped."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from decisions import decided_for

from plmfair.rendering.table_format import held_to, printed, to_latex, to_markdown, verdict_cells


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
            "estimate": [-6.938893903907228e-18],
            "std_err": [0.2],
            "ci_low": [-0.39],
            "ci_high": [0.39],
            "p_value": [1.0],
            "n_obs": [48],
            "converged": [True],
        }
    )
    table = effects_table(effects)
    assert table.loc[0, "term"] == "FNN vs MN" and table.loc[0, "metric"] == "P@1 (hit at 1)"
    assert "[T." not in to_markdown(table) and "reference" not in table.columns
    # an effect size and its standard error: no test, no interval, no mark; noise prints as 0
    cells = printed(table, 3)
    assert list(cells.columns) == ["model", "lang", "metric", "term", "estimate", "standard error", "n", "converged"]
    assert cells.loc[0, "estimate"] == "0.000" and "*" not in to_markdown(table)


def test_p_values_print_as_their_size_allows():
    from plmfair.rendering.numbers import p_value

    assert [p_value(p, alpha=0.05) for p in (0.0, 0.0002, 0.001, 0.0456, 1.0, float("nan"))] == [
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
            "model": ["m", "m", "m", "m"],
            "lang": ["en", "all", "fr", "de"],
            "metric": ["rr", "rr", "hit1", "hit1"],
            "group": ["FN", "FN", "MNN", "FNN"],
            "reference": ["MN", "MN", "MN", "MN"],
            "gap": [0.1, -0.2, -0.1, -0.1],
            "ci_low": [-1.0, -0.3, -0.2, -0.208],
            "ci_high": [1.0, -0.05, 0.00001, 0.0],
            "ci_level": [0.95] * 4,
            "interval_connected": [True] * 4,
            "p_permutation": [0.4, 0.002, 0.003, 0.03],
            "p_untied": [0.4, 0.002, 0.08, 0.09],
            "n_sentences": [6, 24, 24, 24],
            "n_annotators": [4, 16, 16, 16],
            "informative": [True] * 4,
        }
    )
    decided, gaps["hypothesis"] = decided_for(
        gaps, ["untestable", "secondary", "secondary", "secondary"], [False, True, True, False]
    )
    decided.loc[3, "nominal"] = True  # p below alpha before the adjustment only
    table = printed(gaps_table(gaps, decided, alpha=0.05), 3)
    # untestable: no interval, no adjusted p, said; a mark the tie-break alone makes is said beside its interval
    assert table["interval (95%)"].tolist()[:3] == ["", "[-0.300, -0.050]", "[-0.200, 0.00001]"]
    assert table.loc[0, "note"].startswith("untestable (smallest attainable p 0.200")
    assert table["p adjusted"].tolist()[:3] == ["", "0.004*", "0.004*"] and table.loc[0, "comparison"] == "FN vs MN"
    assert table.loc[2, "note"] == "decided by the tie-break: the gap alone's test does not reject"
    assert table.loc[2, "p (gap alone)"] == "0.080"
    # nominal only, by the tie-break alone: both said (a referee read "nominal only" beside [-0.208, 0.000])
    assert table.loc[3, "note"] == (
        "nominal only (not after the run's adjustment); decided by the tie-break: the gap alone's test does not reject"
    )
    disparity = pd.DataFrame(
        {
            "model": ["m", "m", "m"],
            "lang": ["en", "fr", "de"],
            "metric": ["p_at_1", "mrr", "mrr"],
            "sigma_gd": [2.5, 9.0, 0.0],
            "ci_low": [0.0, 6.0, float("nan")],
            "ci_high": [4.0, 12.0, float("nan")],
            "critical_value": [3.1, 5.0, 0.0],
            "null_mean": [1.5, 2.0, 0.0],
            "debiased": [1.9, 8.8, 0.0],
            "p_permutation": [0.3, 0.001, 1.0],
        }
    )
    decided, disparity["hypothesis"] = decided_for(
        disparity, ["secondary", "confirmatory", "uninformative"], [False, True, False]
    )
    table = printed(disparity_table(disparity, decided, alpha=0.05))
    assert table["verdict"].tolist() == ["no group differs significantly", "groups differ", ""]
    assert table["metric"].tolist() == ["P@1", "MRR", "MRR"]
    assert table.loc[1, "interval of the true σ_gd (95%)"] == "[6.00, 12.00]"
    # every score 0: no critical value, no test, said (not "critical value 0.00 ... p 1.000")
    assert (table.loc[2, "critical value"], table.loc[2, "p adjusted"]) == ("", "")
    assert table.loc[2, "note"].startswith("uninformative")


def test_the_display_rule_check_fails_on_what_it_forbids(tmp_path):
    """tests/display_rule.py fails on each thing a referee must not find: a mark on an untestable row, a
    mark on a test outside the hypotheses, a CSV cell that is a number with something around it, and
    floating-point noise printed as a signed number."""
    from display_rule import check_tables

    def table(md_rows: list[str], csv: str) -> Path:
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        folder.mkdir()
        (folder / "t_group_tests.md").write_text("caption\n\n" + "\n".join(md_rows) + "\n")
        (folder / "t_group_tests.csv").write_text(csv)
        return folder

    header = ["| test | family | p adjusted | note |", "|:--|:--|--:|:--|"]
    good = table([*header, "| omnibus | secondary | 0.004* | |"], "test,family,p adjusted\nomnibus,secondary,0.004\n")
    assert check_tables(good) == 1
    cases = {
        "untestable": ([*header, "| omnibus | untestable | 0.004* | |"], "test,p\nomnibus,0.004\n"),
        "outside the hypotheses": (["| term | p (Wald) |", "|:--|--:|", "| FN | 0.001* |"], "term,p\nFN,0.001\n"),
        "decorated": ([*header, "| omnibus | secondary | 0.500 | |"], "test,neutral\nomnibus,2 (5.6%)\n"),
        "noise": ([*header, "| -6.939e-18 | secondary | 0.500 | |"], "test,p\nx,0.5\n"),
    }
    for what, (md_rows, csv) in cases.items():
        with pytest.raises(AssertionError):
            check_tables(table(md_rows, csv))
        print("refused:", what)


def _rendered(frame: pd.DataFrame, folder: Path, **rendering) -> None:
    """A frame as the table job renders it (its builder the identity), into ``folder``'s t.csv, t.md, ..."""
    from plmfair.rendering.table_format import render_table

    render_table(
        {"table": frame},
        builder="plmfair.rendering.table_format:long_table",
        options={},
        digits=2,
        label="t",
        **{suffix: folder / f"t.{suffix}" for suffix in ("csv", "md", "tex", "html")},
        **{"caption": "c", **rendering},
    )


def test_html_prints_the_same_cells_as_markdown(tmp_path):
    frame = pd.DataFrame({"dataset": ["fr"], "n": [36], "score": [55.123], "missing": [None]})
    _rendered(frame, tmp_path)
    html = (tmp_path / "t.html").read_text()
    assert ">36<" in html and ">55.12<" in html and "36.00" not in html and "nan" not in html.lower()


def test_a_row_mean_over_fewer_languages_says_so():
    from plmfair.cloze.tables import paper_table

    rows = [
        {"model": "m", "lang": lang, "group": g, "p_at_1": float(i), "n": 10}
        for i, (lang, g) in enumerate((lang, g) for lang in ("en", "de") for g in ("MN", "FN", "MNN", "FNN", "all"))
        if not (lang == "de" and g == "FN")
    ]
    table = printed(paper_table(pd.DataFrame(rows), metric="p_at_1", alpha=0.05))
    means = dict(zip(table["group"].str.rstrip("§"), table["mean (σ_gd)"], strict=True))
    assert means["FN"].endswith(", 1 of 2 languages") and "languages" not in means["MN"]


def test_every_cell_header_and_caption_is_escaped_on_the_html_and_latex_pages(tmp_path):
    """A model folder, data set or alias from the config that holds markup prints as text: no tag is live on the
    table's page (nor in the report's copy of it), no LaTeX command runs."""
    tag = "<img src=x onerror=alert(document.domain)>"
    frame = pd.DataFrame({"model": [tag], tag: ["\\input{/etc/passwd} & $x$"], "n": [3]})
    _rendered(frame, tmp_path, caption=f"caption {tag}", title=tag)
    page = (tmp_path / "t.html").read_text()
    assert "<img" not in page and page.count("&lt;img src=x onerror=alert(document.domain)&gt;") == 5
    tex = (tmp_path / "t.tex").read_text()
    assert "\\input{" not in tex and "\\textbackslash input" in tex


def test_the_ranking_agreement_table_prints_the_interval_of_w_not_its_point():
    """The W of the measured shares is no estimate of the population's (make bench-stats, part ranking): the
    table prints its interval only, under a name that says whose interval it is; the point stays in the file."""
    from plmfair.crows_pairs.tables import ranking_table

    ranking = pd.DataFrame(
        {
            "dataset": ["en", "fr"],
            "models": ["a, b, c", ""],
            "protocols": ["nangia, aul", ""],
            "n_pairs": [300, 0],
            "w": [0.4123, float("nan")],
            "ci_low": [0.0, float("nan")],
            "ci_high": [1.0, float("nan")],
            "note": ["", "fewer than 3 models"],
        }
    )
    shown = printed(ranking_table(ranking, alpha=0.05))
    assert "Kendall's W, interval (95%)" in shown.columns and "Kendall's W" not in shown.columns
    assert shown["Kendall's W, interval (95%)"].tolist() == ["[0.00, 1.00]", ""]
    assert not shown.astype(str).apply(lambda column: column.str.contains("0.41")).any(axis=None)


def test_a_robustness_row_prints_its_counts_its_claim_and_its_level_and_an_earlier_versions_row_too():
    """K and k as numbers, what K counts, the claim (robust, not shown robust, or none for a verdict that finds
    nothing) and the level it is held to; a record written before the intersection-union rule keeps its own
    word for it, said to be that rule's."""
    row = {"specifications": 12, "counted": "4 protocols x 3 tie rules", "holding": 6, "p_all": 0.149, "robust": False}
    cells = verdict_cells({**row, "short_of": "protocol=aul | tie=0.01 | protocol=all_tokens"})
    assert cells == {
        "K": 12,
        "K counts": "4 protocols x 3 tie rules",
        "k showing it": 6,
        "robust": "not shown robust",
        "short of it": "protocol=aul | tie=0.01 (+1 more)",
    }
    assert verdict_cells({**row, "p_all": None, "short_of": ""})["robust"] == "no claim to test"
    earlier = verdict_cells({"specifications": 6, "holding": 6, "robust": True, "flipped_by": ""})
    assert earlier["robust"] == "robust (unadjusted: an earlier version's rule)" and earlier["K counts"] == ""
    assert (held_to(0.05, 12), held_to(0.05, 1), held_to(0.05, 0)) == ("0.05 / 12", "0.05", "untestable: no claim")
