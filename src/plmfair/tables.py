"""Tables for people: the builders of :data:`plmfair.outputs.TABLES` and their rendering
as CSV (full precision), Markdown, LaTeX and HTML (:func:`render_table`).

A builder takes the table's input frames as keyword arguments named by their roles in the
registry, and its options and settings, and returns the table as a DataFrame:

- CrowS-Pairs: Table 4 (:func:`table4`) and Table 5 (:func:`table5`) of Névéol et al. (2022);
- CrowS-Pairs tests: the decisive-pair share with its interval and exact test (:func:`crows_pairs_tests_table`);
- MozArt (and every cloze set with answers): Tables 1-5 (:func:`table1`, :func:`paper_table`)
  of Cabello Piqueras & Søgaard (2022), and sigma_gd with its tests (:func:`disparity_table`);
- the tests: win/loss (:func:`winloss_table`), group gaps (:func:`gaps_table`), mixed-model
  effects (:func:`effects_table`), group tests (:func:`group_tests_table`);

Every p-value prints with three decimals, ``<0.001`` below (:func:`plmfair.labels.format_p`), and a
mark is printed only beside the interval and p-value of the test that sets it.
- cloze construction (:func:`construction_table`) and alignment quality
  (:func:`alignment_quality_table`); the models that ran (:func:`models_table`); long tables as
  they are (:func:`long_table`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping

# pandas renders Markdown through tabulate and LaTeX and HTML through jinja2 (Styler): imported here
# so that an environment without them fails at once, not after a table is built
import jinja2  # noqa: F401
import pandas as pd
import tabulate  # noqa: F401

from plmfair.atomic import write_text
from plmfair.core import GROUPS
from plmfair.coverage import distinct
from plmfair.crows_pairs_data import BIAS_TYPES
from plmfair.io import write_csv
from plmfair.labels import PAPER_METRIC_LABELS, contrast_label, format_p, metric_label
from plmfair.metrics import sigma_gd


def _fmt(value, digits: int, *, p_value: bool = False) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return format_p(value) if p_value else f"{value:.{digits}f}"
    return str(value)


def _is_p_column(name) -> bool:
    """A column of p-values (``p``, ``p_value``, ``p (Wald)``, ``p_adjusted``): printed by format_p."""
    return bool(re.match(r"^p(?:[_ ]|$)", str(name)))


def _formatted(df: pd.DataFrame, digits: int) -> pd.DataFrame:
    """Every cell as the text the tables print (floats with ``digits`` decimals, p-values by
    :func:`plmfair.labels.format_p`, missing as '')."""
    return pd.DataFrame({str(c): [_fmt(v, digits, p_value=_is_p_column(c)) for v in df[c]] for c in df.columns},
                        index=range(len(df)))


def _is_number(text: str) -> bool:
    """A printed cell that is a number, with the tables' marks (``33.3†``, ``0.01*``, ``[0.1, 0.2]``,
    ``<0.001``, ``[-inf, 0.2]``)."""
    return bool(re.match(r"^[\[(]?(?:[-−+<]?\.?\d|-?inf\b)", text))


def _alignments(cells: pd.DataFrame) -> list[str]:
    """Numbers right-aligned, text left-aligned: a column is numeric when every non-empty cell is."""
    return ["right" if (filled := [v for v in cells[c] if v]) and all(map(_is_number, filled)) else "left"
            for c in cells.columns]


def to_markdown(df: pd.DataFrame, *, digits: int = 2) -> str:
    """A GitHub-flavoured Markdown table (text left-aligned, numbers right-aligned), rendered by
    pandas (``DataFrame.to_markdown``, i.e. tabulate's pipe format)."""
    cells = _formatted(df, digits).map(lambda v: v.replace("|", "\\|"))
    align = _alignments(cells) if len(cells.columns) else ()
    return cells.to_markdown(index=False, tablefmt="pipe", colalign=align, disable_numparse=True) + "\n"


# Characters the tables use that pdfLaTeX does not know as text, after Styler's own escaping
# of the special characters (& % $ # _ { } ~ ^ \).
_LATEX_SYMBOLS = {"σ": r"$\sigma$", "†": r"\dag{}", "‡": r"\ddag{}", "▲": r"$\blacktriangle$",
                  "▼": r"$\blacktriangledown$", "≤": r"$\leq$", "≥": r"$\geq$", "–": "--", "∩": r"$\cap$",
                  "§": r"\S{}", "°": r"$^{\circ}$", "−": "--"}


def _escape_caption(text: str) -> str:
    """LaTeX-escape a caption (Styler escapes cells and headers, not the caption it is given)."""
    specials = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(specials.get(ch, ch) for ch in text)


def to_latex(df: pd.DataFrame, *, digits: int = 2, caption: str = "", label: str = "") -> str:
    """A booktabs LaTeX table rendered by pandas (``Styler.to_latex``), cells and headers escaped."""
    cells = _formatted(df, digits)
    styler = cells.style.hide(axis="index").format(escape="latex").format_index(escape="latex", axis=1)
    tex = styler.to_latex(column_format="".join(a[0] for a in _alignments(cells)), hrules=True, position="t",
                          position_float="centering", environment="table",
                          caption=_escape_caption(caption) if caption else None, label=label or None)
    for symbol, command in _LATEX_SYMBOLS.items():
        tex = tex.replace(symbol, command)
    return tex


def write_table(df: pd.DataFrame, *, csv: str | os.PathLike, md: str | os.PathLike, tex: str | os.PathLike,
                caption: str, label: str, digits: int = 2) -> None:
    """Write one table as CSV (full precision), Markdown and LaTeX (``digits`` decimals)."""
    write_csv(df, csv)
    write_text(f"{caption}\n\n" + to_markdown(df, digits=digits), md)
    write_text(to_latex(df, digits=digits, caption=caption, label=label), tex)


ROW_LABELS = {"metric": "Metric score", "stereo": "Stereo score", "antistereo": "Anti-stereo score"}


def _cell(row) -> str:
    """Nangia et al.'s score as the paper prints it: no mark (the test is about the decisive pairs,
    :func:`crows_pairs_tests_table`)."""
    return "" if pd.isna(row["score"]) else f"{row['score']:.2f}"


def _neutral(row) -> str:
    """Neutral pairs, count and share of the scored pairs: ``454 (27.1%)``."""
    return "" if pd.isna(row["neutral_share"]) else f"{int(row['n_neutral'])} ({row['neutral_share']:.1f}%)"


def _warned(table: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """``table`` carrying the coverage warnings of the rows it is built from (``coverage_warning``,
    :mod:`plmfair.coverage`), which :func:`render_table` prints under its caption."""
    table.attrs["warnings"] = distinct(frame["coverage_warning"]) if "coverage_warning" in frame else []
    return table


def mm_ss(seconds: float) -> str:
    """A duration as the paper prints run times: minutes and seconds, ``13:05``."""
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes:02d}:{secs:02d}"


def table4(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 4 of Névéol et al. (2022): rows metric/stereo/anti-stereo score, run time (mm:ss),
    pairs skipped, then each bias type; per data set an ``n`` column (the pairs actually scored) and
    a ``%`` column (that n as a share of every pair of the data set), as the paper counts them
    (French stereo: 1,462, 87.2% of 1,677), then per model its score and, beside it, the row's
    neutral pairs (count and share of the scored pairs; a direction score leaves them out). Scores
    carry no mark: the tests are in :func:`crows_pairs_tests_table`, beside the interval they agree
    with. The paper's ``DCF`` row is not defined in its text and is left out."""
    datasets = list(dict.fromkeys(summary["dataset"]))
    row_keys = [("overall", "metric"), ("direction", "stereo"), ("direction", "antistereo"), ("runtime", ""),
                ("skipped", ""), ("unknown", "")]
    present = set(summary.loc[summary["subset_kind"] == "bias_type", "subset"])
    row_keys += [("bias_type", bt) for bt in BIAS_TYPES if bt in present]
    labels = {"runtime": "Run time (mm:ss)", "skipped": "Pairs skipped", "unknown": "Unknown pieces (%)"}
    table: dict[str, list] = {"": [labels.get(k, ROW_LABELS.get(s, s)) for k, s in row_keys]}
    for ds in datasets:
        sub = summary[summary["dataset"] == ds]
        first = sub[sub["model"] == sub["model"].iloc[0]].set_index(["subset_kind", "subset"])
        total = first.loc[("overall", "metric"), "n_pairs"]
        sizes = [None if k in labels or (k, s) not in first.index else int(first.loc[(k, s), "n_scored"])
                 for k, s in row_keys]
        table[f"{ds} n"] = ["" if n is None else n for n in sizes]
        table[f"{ds} %"] = ["" if n is None else f"{100 * n / total:.1f}" for n in sizes]
        for model in dict.fromkeys(sub["model"]):
            m = sub[sub["model"] == model].set_index(["subset_kind", "subset"])
            col, neutral = [], []
            for k, s in row_keys:
                if k == "runtime":
                    col.append(mm_ss(m["wall_time_s"].iloc[0]))
                elif k == "skipped":
                    col.append(str(int(m.loc[("overall", "metric"), "n_skipped"])))
                elif k == "unknown":
                    col.append(_unknown(m.iloc[0]))
                else:
                    col.append(_cell(m.loc[(k, s)]) if (k, s) in m.index else "")
                neutral.append(_neutral(m.loc[(k, s)]) if (k, s) in m.index else "")
            table[f"{ds} {model}"] = col
            table[f"{ds} {model} neutral"] = neutral
    return _warned(pd.DataFrame(table), summary)


def _unknown(row) -> str:
    """A run's share of unknown pieces, ``0.4``, with ``(!)`` when it carries a coverage warning."""
    share = row.get("unknown_share")
    if share is None or pd.isna(share):
        return ""
    return f"{100 * share:.1f}" + (" (!)" if row.get("coverage_warning") else "")


def table5(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 5 of Névéol et al. (2022): metric score on native vs translated pairs, per data set and
    model (unmarked, as Table 4), each with its neutral pairs beside it."""
    sub = summary[summary["subset_kind"] == "origin"]
    rows = []
    for (ds, origin), g in sub.groupby(["dataset", "subset"], sort=False):
        row = {"dataset": ds, "pairs": origin, "n": int(g["n_scored"].iloc[0])}
        for _, r in g.iterrows():
            row[r["model"]] = _cell(r)
            row[f"{r['model']} neutral"] = _neutral(r)
        rows.append(row)
    return _warned(pd.DataFrame(rows).fillna(""), sub)


def crows_pairs_tests_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per data set, model and subset: pairs scored, neutral pairs, Nangia et al.'s score, and the
    decisive-pair share with the interval and exact binomial test that belong to it (``*`` on the
    adjusted p exactly when the interval excludes 50%)."""
    out = summary[["dataset", "model", "subset_kind", "subset", "n_scored"]].rename(columns={
        "subset_kind": "kind", "n_scored": "scored"}).copy()
    out["neutral"] = [_neutral(r) for _, r in summary.iterrows()]
    out["score (Nangia)"] = summary["score"]
    out["decisive share"] = summary["decisive_score"]
    out["interval"] = _interval(summary["ci_low"], summary["ci_high"], digits=1)
    out["level"] = _level(summary["ci_level"])
    out["p"] = summary["p_value"]
    out["p adjusted"] = _marked(summary["p_adjusted"], summary["significant"])
    out["unknown pieces"] = [_unknown(r) for _, r in summary.iterrows()]
    return _warned(out.reset_index(drop=True), summary)


LANG_ORDER = ("en", "es", "de", "fr")


CORRELATION_P = {"spearman_rho": "spearman_p", "kendall_tau": "kendall_p"}


def _most_disparate(sigmas: Mapping[str, float]) -> set[str]:
    """The keys with the highest sigma_gd (ties all kept); none when every sigma is the same."""
    values = {k: v for k, v in sigmas.items() if not pd.isna(v)}
    if len(set(values.values())) < 2:
        return set()
    top = max(values.values())
    return {k for k, v in values.items() if v == top}


def _lang_order(langs) -> list[str]:
    langs = set(langs)
    return [lang for lang in LANG_ORDER if lang in langs] + sorted(langs - set(LANG_ORDER))


def _model_block(m: pd.DataFrame, langs: list[str], metric: str, alpha: float) -> list[dict]:
    """The rows of one model in a paper table (see :func:`paper_table`)."""
    scale = 1.0 if metric in ("p_at_1", "p_at_5", "mrr") else 100.0
    grid = m.pivot(index="group", columns="lang", values=metric).reindex(index=[*GROUPS, "all"], columns=langs) * scale
    p_col = CORRELATION_P.get(metric)
    pvals = m.pivot(index="group", columns="lang", values=p_col).reindex(index=grid.index, columns=langs) if p_col else None
    groups = grid.loc[list(GROUPS)]
    col_sigma = {lang: sigma_gd(groups[lang].to_numpy()) for lang in langs}
    row_sigma = {g: sigma_gd(groups.loc[g].to_numpy()) for g in GROUPS}
    most_lang, red_rows = _most_disparate(col_sigma), _most_disparate(row_sigma)

    def cell(group, lang):
        v = grid.at[group, lang]
        if pd.isna(v):
            return ""
        text = f"{v:.1f}"
        if pvals is not None:
            p = pvals.at[group, lang]
            text += ("°" if pd.isna(p) or p >= alpha else "") + ("" if pd.isna(p) else f" ({format_p(p)})".replace("0.", "."))
        if group in GROUPS and v == groups[lang].min():
            text += "†"
        return text

    def mean_sigma(values: pd.Series, sigma: float) -> str:
        # a row with a blank cell averages fewer languages: said, not hidden
        covered = int(values.notna().sum())
        return f"{values.mean():.1f} ({sigma:.1f})" + (f", {covered} of {len(values)} languages"
                                                       if covered < len(values) else "")

    rows = []
    for group in GROUPS:
        row = {"group": group + ("§" if group in red_rows else "")}
        row.update({lang.upper(): cell(group, lang) for lang in langs})
        row["mean (σ_gd)"] = mean_sigma(groups.loc[group], row_sigma[group])
        rows.append(row)
    pooled = {"group": "All"}
    pooled.update({lang.upper(): cell("all", lang) + f" ({col_sigma[lang]:.1f})" + ("‡" if lang in most_lang else "")
                   for lang in langs})
    pooled["mean (σ_gd)"] = mean_sigma(grid.loc["all"], sigma_gd(grid.loc["all"].to_numpy()))
    rows.append(pooled)
    return rows


def paper_table(metrics: pd.DataFrame, *, metric: str, alpha: float = 0.05) -> pd.DataFrame:
    """One of Tables 2-5 of the MozArt paper: a block of rows per model (in the metrics' order).

    Rows MN, FN, MNN, FNN and All; one column per language, then each row's mean with its
    sigma_gd across languages. A group's cell is the metric over that group's annotations; the
    All row is the metric over every annotation of the language pooled (the paper's language
    average: mBERT's German P@1 10.8 = 65/600, not the mean of the four groups), with the
    sigma_gd of the four groups in parentheses. Correlations are x 100 and carry their
    p-value, ``34.5 (.012)``, ``°`` when p >= alpha. Marks: † the worst-off group of a
    language, ‡ (on the All row) the language with the highest sigma_gd across groups, § the
    group with the highest sigma_gd across languages (the paper's red row); ties are all
    marked, and nothing is marked when every sigma_gd is the same (a single language)."""
    langs = _lang_order(metrics["lang"])
    rows = []
    for model in dict.fromkeys(metrics["model"]):
        rows += [{"model": model, **row} for row in _model_block(metrics[metrics["model"] == model], langs, metric,
                                                                 alpha)]
    return _warned(pd.DataFrame(rows), metrics)


def table1(overview: pd.DataFrame) -> pd.DataFrame:
    """Table 1 of the MozArt paper from a cloze set's overview (:data:`plmfair.cloze_scoring.OVERVIEW_SCHEMA`):
    per language, sentences, annotations and annotators, and the mean number of tokens per sentence
    in each model's tokenizer (WordPiece, SentencePiece, BPE)."""
    langs = _lang_order(overview["lang"])
    rows = []
    for (statistic, model), g in overview.groupby(["statistic", "model"], sort=False, dropna=False):
        values = dict(zip(g["lang"], g["value"], strict=True))
        if pd.isna(model):
            rows.append({"": statistic.capitalize(), **{lang.upper(): str(int(values[lang])) for lang in langs}})
        elif statistic == "too_long":
            rows.append({"": f"Skipped, longer than {model} accepts (sentences and answers)",
                         **{lang.upper(): str(int(values.get(lang, 0))) for lang in langs}})
        else:
            rows.append({"": f"Tokens per sentence ({model})",
                         **{lang.upper(): f"{values[lang]:.1f}" if lang in values else "" for lang in langs}})
    return pd.DataFrame(rows)


def construction_table(counts: pd.DataFrame) -> pd.DataFrame:
    """What each construction step of a corpus leaves: one row per step, one column per language and 'all'."""
    order = list(dict.fromkeys(counts["lang"]))
    wide = counts.pivot_table(index=["step", "unit", "description"], columns="lang", values="count",
                              aggfunc="first", sort=False)
    wide = wide.reindex(columns=[c for c in order if c in wide.columns])
    wide.columns.name = None
    return wide.reset_index()


def alignment_quality_table(quality: pd.DataFrame) -> pd.DataFrame:
    """One row per gold set, extra text and symmetrisation: links, precision, recall, AER, and the gold
    links left out because they fall outside their sentence."""
    out = quality[["gold", "lang", "extra", "extra_lines", "symmetrisation", "sentences", "predicted", "sure",
                   "possible", "precision", "recall", "aer", "dropped_gold_links"]].rename(columns={
        "extra_lines": "extra lines", "predicted": "|A|", "sure": "|S|", "possible": "|P|", "aer": "AER",
        "dropped_gold_links": "gold links left out"})
    return out.reset_index(drop=True)


def _marked(p_values, significant) -> list[str]:
    """p-values as text with ``*`` where the row is significant."""
    return [format_p(p) + ("*" if sig else "") for p, sig in zip(p_values, significant, strict=True)]


def _interval(low, high, digits: int = 3) -> list[str]:
    """Intervals as text, ``[-0.120, 0.045]``; an end the permutations cannot bound is -inf or inf."""
    def end(v):
        return "inf" if v == math.inf else "-inf" if v == -math.inf else f"{v:.{digits}f}"
    return ["" if pd.isna(lo) else f"[{end(lo)}, {end(hi)}]" for lo, hi in zip(low, high, strict=True)]


def _keys(frame: pd.DataFrame) -> list[str]:
    return [c for c in ("model", "lang", "metric") if c in frame.columns]


def winloss_table(winloss: pd.DataFrame, *, a: str, b: str, n: str, p: str, p_one: str, p_adjusted: str,
                  adjusted: str) -> pd.DataFrame:
    """Win/loss comparisons for people: who is compared with whom on how many shared examples,
    wins-losses-ties, the test's p-values and ``*`` where the adjusted p < alpha."""
    out = winloss[_keys(winloss)].copy()
    out["comparison"] = winloss[a] + " vs " + winloss[b]
    out["n"] = winloss[n]
    out["wins-losses-ties"] = [f"{w}-{lo}-{t}" for w, lo, t in zip(winloss["wins_a"], winloss["wins_b"],
                                                                      winloss["ties"], strict=True)]
    out["p"] = winloss[p]
    out["p (first wins more)"] = winloss[p_one]
    out[f"p {adjusted}"] = _marked(winloss[p_adjusted], winloss["significant"])
    return out.reset_index(drop=True)


def _level(levels) -> list[str]:
    return [f"{100 * level:.1f}%" for level in levels]


def _with_its_test(out: pd.DataFrame, frame: pd.DataFrame, *, estimate: str, p: str, test: str) -> None:
    """Add to ``out`` an estimate with the interval of its own test and that interval's level, the test's
    p and the Bonferroni-adjusted p, ``*`` where significant (exactly when the interval excludes 0)."""
    out[estimate] = frame[estimate]
    out["interval"] = _interval(frame["ci_low"], frame["ci_high"])
    out["level"] = _level(frame["ci_level"])
    out[f"p ({test})"] = frame[p]
    out["p Bonferroni"] = _marked(frame["p_bonferroni"], frame["significant"])


def effects_table(effects: pd.DataFrame) -> pd.DataFrame:
    """Mixed-model fixed effects for people: estimate with its Wald interval (at the Bonferroni level
    of the compared terms), Wald p and ``*`` on the Bonferroni-adjusted p exactly when the interval
    excludes 0; fits that did not converge are marked rather than dropped."""
    out = effects[_keys(effects)].copy()
    if "metric" in out.columns:
        out["metric"] = out["metric"].map(metric_label)
    out["term"] = [contrast_label(t, r) for t, r in zip(effects["term"], effects["reference"], strict=True)]
    _with_its_test(out, effects, estimate="estimate", p="p_value", test="Wald")
    out["n"] = effects["n_obs"]
    out["converged"] = ["yes" if c else "no" for c in effects["converged"]]
    return out.reset_index(drop=True)


def gaps_table(gaps: pd.DataFrame) -> pd.DataFrame:
    """Each group's sentence-adjusted gap to the reference for people: the gap, the interval that
    inverts its permutation test (Bonferroni level), the p-values, ``*`` exactly when the interval
    excludes 0."""
    out = gaps[_keys(gaps)].copy()
    out["metric"] = out["metric"].map(metric_label)
    out["comparison"] = gaps["group"] + " vs " + gaps["reference"]
    _with_its_test(out, gaps, estimate="gap", p="p_permutation", test="permutation")
    out["sentences"] = gaps["n_sentences"]
    out["annotators"] = gaps["n_annotators"]
    return out.reset_index(drop=True)


def disparity_table(disparity: pd.DataFrame) -> pd.DataFrame:
    """sigma_gd across the four groups per model, language (and all pooled) and metric for people:
    its bootstrap interval, the chance level it must exceed, the permutation p and a verdict that
    says only what the test supports."""
    out = disparity[["model", "lang"]].copy()
    out["metric"] = disparity["metric"].map(PAPER_METRIC_LABELS)
    out["σ_gd"] = disparity["sigma_gd"]
    out["bootstrap interval"] = _interval(disparity["ci_low"], disparity["ci_high"], digits=2)
    out["chance level"] = disparity["chance_level"]
    out["p (permutation)"] = disparity["p_permutation"]
    out["p Bonferroni"] = _marked(disparity["p_bonferroni"], disparity["significant"])
    out["verdict"] = ["groups differ" if sig else "no group differs significantly" for sig in disparity["significant"]]
    return out.reset_index(drop=True)


def group_tests_table(tests: pd.DataFrame) -> pd.DataFrame:
    """The omnibus, 2 x 2 and group x language permutation tests for people, each with its null
    (``*``: Holm-adjusted p < alpha)."""
    out = tests[[*_keys(tests), "test"]].copy()
    out["metric"] = out["metric"].map(metric_label)
    out["statistic"] = tests["statistic"]
    out["p (permutation)"] = tests["p_permutation"]
    out["p Holm"] = _marked(tests["p_holm"], tests["significant"])
    out["annotators"] = tests["n_annotators"]
    out["null (what is permuted)"] = tests["null"]
    return out.reset_index(drop=True)


MODEL_TABLE_COLUMNS = {
    "model": "Model", "model_family": "Family", "model_parameters": "Parameters", "model_layers": "Layers",
    "model_hidden_size": "Hidden", "model_vocab_size": "Vocabulary", "model_tokenizer": "Tokenizer",
    "model_max_length": "Max. length", "model_uncased": "Uncased", "model_languages": "Languages",
    "model_source": "Source", "model_revision": "Revision", "model_commit": "Commit",
}


def _parameter_count(n) -> str:
    """110.1M, 1.2B as papers print sizes; an exact count below a million (the demo's tiny models)."""
    if pd.isna(n):
        return ""
    n = int(n)
    if n >= 1_000_000_000:
        return f"{n / 1e9:,.1f}B"
    return f"{n / 1e6:,.1f}M" if n >= 1_000_000 else f"{n:,}"


def models_table(models: pd.DataFrame) -> pd.DataFrame:
    """The models that ran, one row each, for people: parameters in millions or billions, commits shortened."""
    out = models[list(MODEL_TABLE_COLUMNS)].copy()
    out["model_parameters"] = [_parameter_count(n) for n in out["model_parameters"]]
    out["model_commit"] = [str(c)[:12] if pd.notna(c) and c else "" for c in out["model_commit"]]
    out["model_languages"] = [v or "all" for v in out["model_languages"].fillna("")]
    out["model_uncased"] = out["model_uncased"].map({True: "yes", False: "no"})
    return out.rename(columns=MODEL_TABLE_COLUMNS)


def long_table(table: pd.DataFrame) -> pd.DataFrame:
    """A long Parquet table as it is (data summary, McNemar comparisons)."""
    return table


def render_table(frames: Mapping[str, pd.DataFrame], *, builder: str, options: Mapping, caption: str, digits: int,
                 label: str, csv: str | os.PathLike, md: str | os.PathLike, tex: str | os.PathLike,
                 html: str | os.PathLike) -> pd.DataFrame:
    """Build one table of :data:`plmfair.outputs.TABLES` (``builder``, a name of :data:`BUILDERS`,
    given the input ``frames`` by role and the ``options``) and write it as CSV, Markdown and LaTeX
    (:func:`write_table`) and as the HTML of the report."""
    table = BUILDERS[builder](**frames, **options)
    warnings = table.attrs.get("warnings")
    if warnings:  # a model that cannot read its input (plmfair.coverage): said under every copy of the table
        caption += " WARNING: " + "; ".join(warnings) + "."
    write_table(table, csv=csv, md=md, tex=tex, caption=caption, label=label, digits=digits)
    # the same printed cells as the Markdown and LaTeX (counts as integers, blanks for missing values)
    write_text(_formatted(table, digits).style.hide(axis="index").set_caption(caption)
               .set_table_attributes('class="table table-sm"').to_html(), html)
    return table


# The builders a TableSpec names (plmfair.outputs.TABLES), by name; a test keeps the two in step.
BUILDERS = {f.__name__: f for f in (
    long_table, models_table, table1, table4, table5, crows_pairs_tests_table, paper_table, construction_table,
    alignment_quality_table, winloss_table, effects_table, gaps_table, disparity_table, group_tests_table,
)}
