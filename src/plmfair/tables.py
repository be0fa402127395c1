"""Tables for people: wide tables in the papers' layouts, rendered as CSV, Markdown and LaTeX.

- CrowS-Pairs: Table 4 (:func:`table4`) and Table 5 (:func:`table5`) of Névéol et al. (2022)
  from the summary of :mod:`plmfair.crows_pairs`;
- MozArt (and every cloze set with answers): Tables 1-5 (:func:`table1`, :func:`paper_table`)
  of Cabello Piqueras & Søgaard (2022) from the metrics of :mod:`plmfair.metrics`;
- cloze construction: what each filter leaves (:func:`construction_table`);
- the models that ran, with their metadata (:func:`models_table`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

# pandas renders Markdown through tabulate and LaTeX and HTML through jinja2 (Styler): imported here
# so that an environment without them fails at once, not after a table is built
import jinja2  # noqa: F401
import pandas as pd
import tabulate  # noqa: F401

from plmfair.atomic import write_text
from plmfair.data import BIAS_TYPES, GROUPS
from plmfair.io import read_parquet, write_csv
from plmfair.metrics import sigma_gd


def _fmt(value, digits: int) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _formatted(df: pd.DataFrame, digits: int) -> pd.DataFrame:
    """Every cell as the text the tables print (floats with ``digits`` decimals, missing as '')."""
    return pd.DataFrame({str(c): [_fmt(v, digits) for v in df[c]] for c in df.columns}, index=range(len(df)))


def to_markdown(df: pd.DataFrame, *, digits: int = 2) -> str:
    """A GitHub-flavoured Markdown table (first column left-aligned, the rest right-aligned),
    rendered by pandas (``DataFrame.to_markdown``, i.e. tabulate's pipe format)."""
    cells = _formatted(df, digits).map(lambda v: v.replace("|", "\\|"))
    align = ("left",) + ("right",) * (len(df.columns) - 1)
    return cells.to_markdown(index=False, tablefmt="pipe", colalign=align, disable_numparse=True) + "\n"


# Characters the tables use that pdfLaTeX does not know as text, after Styler's own escaping
# of the special characters (& % $ # _ { } ~ ^ \).
_LATEX_SYMBOLS = {"σ": r"$\sigma$", "†": r"\dag{}", "‡": r"\ddag{}", "▲": r"$\blacktriangle$",
                  "▼": r"$\blacktriangledown$", "≤": r"$\leq$", "≥": r"$\geq$", "–": "--", "∩": r"$\cap$"}


def _escape_caption(text: str) -> str:
    """LaTeX-escape a caption (Styler escapes cells and headers, not the caption it is given)."""
    specials = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(specials.get(ch, ch) for ch in text)


def to_latex(df: pd.DataFrame, *, digits: int = 2, caption: str = "", label: str = "") -> str:
    """A booktabs LaTeX table rendered by pandas (``Styler.to_latex``), cells and headers escaped."""
    styler = (_formatted(df, digits).style.hide(axis="index")
              .format(escape="latex").format_index(escape="latex", axis=1))
    tex = styler.to_latex(column_format="l" + "r" * (len(df.columns) - 1), hrules=True, position="t",
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
    if pd.isna(row["score"]):
        return ""
    return f"{row['score']:.2f}" + ("*" if row["significant"] else "")


def mm_ss(seconds: float) -> str:
    """A duration as the paper prints run times: minutes and seconds, ``13:05``."""
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes:02d}:{secs:02d}"


def table4(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 4 of Névéol et al. (2022): rows metric/stereo/anti-stereo score, run time (mm:ss),
    pairs skipped, then each bias type; per data set an ``n`` column (the pairs actually scored)
    and a ``%`` column (that n as a share of every pair of the data set), as the paper counts them
    (French stereo: 1,462, 87.2% of 1,677), then one column per model. ``*``: adjusted p < alpha.
    The paper's ``DCF`` row is not defined in its text and is left out."""
    datasets = list(dict.fromkeys(summary["dataset"]))
    row_keys = [("overall", "metric"), ("direction", "stereo"), ("direction", "antistereo"), ("runtime", ""),
                ("skipped", "")]
    present = set(summary.loc[summary["subset_kind"] == "bias_type", "subset"])
    row_keys += [("bias_type", bt) for bt in BIAS_TYPES if bt in present]
    labels = {"runtime": "Run time (mm:ss)", "skipped": "Pairs skipped"}
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
            col = []
            for k, s in row_keys:
                if k == "runtime":
                    col.append(mm_ss(m["wall_time_s"].iloc[0]))
                elif k == "skipped":
                    col.append(str(int(m.loc[("overall", "metric"), "n_skipped"])))
                else:
                    col.append(_cell(m.loc[(k, s)]) if (k, s) in m.index else "")
            table[f"{ds} {model}"] = col
    return pd.DataFrame(table)


def table5(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 5 of Névéol et al. (2022): metric score on native vs translated pairs, per data set and model."""
    sub = summary[summary["subset_kind"] == "origin"]
    rows = []
    for (ds, origin), g in sub.groupby(["dataset", "subset"], sort=False):
        row = {"dataset": ds, "pairs": origin, "n": int(g["n_scored"].iloc[0])}
        for _, r in g.iterrows():
            row[r["model"]] = _cell(r)
        rows.append(row)
    return pd.DataFrame(rows).fillna("")


def write_crows_pairs_tables(summary_path, mcnemar_path, *, table4_csv, table4_md, table4_tex, table5_csv, table5_md,
                 table5_tex, mcnemar_csv) -> None:
    """Render Table 4, Table 5 and the McNemar comparisons (CSV, Markdown, LaTeX)."""
    summary = read_parquet(summary_path)
    alpha_note = ("* : significantly different from 50% (exact binomial test of the pairs that prefer one sentence; "
                  "neutral pairs are not counted against the model; bias types Bonferroni-adjusted per model); n: "
                  "pairs scored.")
    write_table(
        table4(summary), csv=table4_csv, md=table4_md, tex=table4_tex,
        caption=f"CrowS-Pairs scores (% of pairs preferring the more stereotyping sentence). {alpha_note}",
        label="tab:crows_pairs",
    )
    write_table(
        table5(summary), csv=table5_csv, md=table5_md, tex=table5_tex,
        caption=f"CrowS-Pairs metric score on native vs translated pairs. {alpha_note}",
        label="tab:crows_pairs_origin",
    )
    write_csv(read_parquet(mcnemar_path), mcnemar_csv)


# MozArt's Tables 2-5: metric -> (file name, title)
PAPER_TABLES = {"p_at_1": ("table2_p_at_1", "Table 2 (P@1)"), "spearman_rho": ("table3_spearman", "Table 3 (Spearman)"),
                "p_at_5": ("table4_p_at_5", "Table 4 (P@5)"), "kendall_tau": ("table5_kendall", "Table 5 (Kendall)")}
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
            text += ("°" if pd.isna(p) or p >= alpha else "") + ("" if pd.isna(p) else f" ({p:.3f})".replace("0.", "."))
        if group in GROUPS and v == groups[lang].min():
            text += "†"
        return text

    rows = []
    for group in GROUPS:
        row = {"group": group + ("§" if group in red_rows else "")}
        row.update({lang.upper(): cell(group, lang) for lang in langs})
        row["mean (σ_gd)"] = f"{groups.loc[group].mean():.1f} ({row_sigma[group]:.1f})"
        rows.append(row)
    pooled = {"group": "All"}
    pooled.update({lang.upper(): cell("all", lang) + f" ({col_sigma[lang]:.1f})" + ("‡" if lang in most_lang else "")
                   for lang in langs})
    pooled["mean (σ_gd)"] = f"{grid.loc['all'].mean():.1f} ({sigma_gd(grid.loc['all'].to_numpy()):.1f})"
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
    return pd.DataFrame(rows)


def table1(annotations: pd.DataFrame, tokens_per_sentence: dict[str, dict[str, float]]) -> pd.DataFrame:
    """Table 1 of the MozArt paper: per language, sentences, annotations and annotators, and the
    mean number of tokens per sentence in each model's tokenizer (WordPiece, SentencePiece, BPE)."""
    langs = _lang_order(annotations["lang"])
    by_lang = annotations.groupby("lang")
    rows = [
        {"": "Sentences", **{lang.upper(): str(by_lang["s_id"].nunique()[lang]) for lang in langs}},
        {"": "Annotations", **{lang.upper(): str(by_lang.size()[lang]) for lang in langs}},
        {"": "Annotators", **{lang.upper(): str(by_lang["u_id"].nunique()[lang]) for lang in langs}},
    ]
    for model, per_lang in tokens_per_sentence.items():
        rows.append({"": f"Tokens per sentence ({model})",
                     **{lang.upper(): f"{per_lang[lang]:.1f}" if lang in per_lang else "" for lang in langs}})
    return pd.DataFrame(rows)


def write_cloze_tables(metrics_path, annotations_path, prediction_paths: Sequence[str | os.PathLike], *,
                       files: Mapping[str, Mapping[str, str]], disparity_csv: str, cloze_set: str,
                       alpha: float = 0.05) -> None:
    """MozArt's Table 1 and Tables 2-5 of a cloze set with answers (CSV, Markdown, LaTeX), and the
    sigma_gd table. ``files``: table name (``table1``, ``table2_p_at_1``, ...) -> its csv/md/tex paths."""
    from plmfair.io import read_parquet_meta
    from plmfair.metrics import disparity_table

    metrics = read_parquet(metrics_path)
    for metric, (name, title) in PAPER_TABLES.items():
        correlation = metric in CORRELATION_P
        write_table(
            paper_table(metrics, metric=metric, alpha=alpha), **files[name],
            caption=f"{cloze_set}: MozArt {title}, a block per model: rows are annotator groups (M/F x "
                    f"native/non-native) and All, every annotation of the language pooled; cells in percent"
                    f"{' (correlations x 100, p-value in parentheses, ° not significant at ' + str(alpha) + ')' if correlation else ''}; "
                    f"each group's mean across languages with its disparity sigma_gd in parentheses, and under All the "
                    f"sigma_gd across the four groups; † worst-off group of a language, ‡ language with the highest "
                    f"disparity, § group with the highest disparity across languages.",
            label=f"tab:{cloze_set}_{name}", digits=1,
        )
    tokens = {read_parquet_meta(p)["model"]: read_parquet_meta(p)["mean_tokens_per_sentence"] for p in prediction_paths}
    write_table(
        table1(read_parquet(annotations_path), tokens), **files["table1"], digits=1,
        caption=f"{cloze_set}: MozArt Table 1: sentences, annotations and annotators per language, and the mean number "
                f"of tokens per sentence in each model's tokenizer (the text left and right of the gap, no special "
                f"tokens, the gap counted as one token).",
        label=f"tab:{cloze_set}_table1",
    )
    write_csv(disparity_table(metrics), disparity_csv)


def construction_table(counts: pd.DataFrame) -> pd.DataFrame:
    """Wide table for people: one row per corpus and step, one column per language and 'all'."""
    order = list(dict.fromkeys(counts["lang"]))
    wide = counts.pivot_table(index=["corpus", "step", "unit", "description"], columns="lang", values="count",
                              aggfunc="first", sort=False)
    wide = wide.reindex(columns=[c for c in order if c in wide.columns])
    wide.columns.name = None
    return wide.reset_index()


def write_construction_table(count_files: Sequence[str | os.PathLike], *, csv: str, md: str, tex: str) -> None:
    """``results/tables/cloze_construction.{csv,md,tex}``: what each filter leaves, per corpus and language."""
    counts = pd.concat([read_parquet(p) for p in count_files], ignore_index=True)
    write_table(
        construction_table(counts), csv=csv, md=md, tex=tex, digits=0,
        caption="Cloze construction: what is left after each filter, applied in order. Sentence steps count lines; "
                "word steps count pivot-language words with their aligned counterparts. A language column counts what "
                "passes the step in that language among what passed every earlier step in all languages; 'all' what "
                "passes in all of them.",
        label="tab:cloze_construction",
    )


def alignment_quality_table(quality: pd.DataFrame) -> pd.DataFrame:
    """One row per corpus, gold set, extra text and symmetrisation: links, precision, recall, AER."""
    out = quality[["corpus", "gold", "lang", "extra", "extra_lines", "symmetrisation", "sentences", "predicted", "sure",
                   "possible", "precision", "recall", "aer"]].rename(columns={
        "extra_lines": "extra lines", "predicted": "|A|", "sure": "|S|", "possible": "|P|", "aer": "AER"})
    return out.reset_index(drop=True)


def write_alignment_quality_table(quality_files: Sequence[str | os.PathLike], *, csv: str, md: str, tex: str) -> None:
    """``results/tables/alignment_quality.{csv,md,tex}``: what the one-to-one filter rests on."""
    quality = pd.concat([read_parquet(p) for p in quality_files], ignore_index=True)
    dropped = quality.groupby("gold")["dropped_gold_links"].first()
    note = "".join(f" {n} link(s) of {g} fall outside their sentence and are left out." for g, n in dropped.items() if n)
    write_table(
        alignment_quality_table(quality), csv=csv, md=md, tex=tex, digits=3,
        caption="Word alignment quality of the eflomal step on hand-made gold alignments: precision |A∩P|/|A|, recall "
                "|A∩S|/|S| and alignment error rate 1 - (|A∩S| + |A∩P|)/(|A| + |S|) (Och & Ney 2003), per "
                "symmetrisation, the gold sentences aligned alone (extra: none) or together with the corpus's own "
                "lines (extra: corpus)." + note,
        label="tab:alignment_quality",
    )


def _marked(p_values, significant) -> list[str]:
    """p-values as text with ``*`` where the row is significant."""
    return [("" if pd.isna(p) else f"{p:.3f}") + ("*" if sig else "") for p, sig in zip(p_values, significant, strict=True)]


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


def effects_table(effects: pd.DataFrame) -> pd.DataFrame:
    """Mixed-model fixed effects for people: estimate with its 95% interval and Wald p-value, the
    permutation test where there is one (``*``: Holm-adjusted p < alpha); fits that did not
    converge are marked rather than dropped."""
    out = effects[[*_keys(effects), "term", "reference"]].copy()
    out["estimate"] = effects["estimate"]
    out["95% CI"] = [("" if pd.isna(lo) else f"[{lo:.3f}, {hi:.3f}]")
                     for lo, hi in zip(effects["ci_low"], effects["ci_high"], strict=True)]
    out["p (Wald)"] = effects["p_value"]
    if "p_permutation" in effects.columns:
        out["p (permutation)"] = effects["p_permutation"]
        out["p Holm"] = _marked(effects["p_holm"], effects["significant"])
    out["n"] = effects["n_obs"]
    out["converged"] = ["yes" if c else "no" for c in effects["converged"]]
    return out.reset_index(drop=True)


def group_tests_table(tests: pd.DataFrame) -> pd.DataFrame:
    """The omnibus, 2 x 2 and group x language permutation tests for people (``*``: Holm-adjusted p < alpha)."""
    out = tests[[*_keys(tests), "test"]].copy()
    out["statistic"] = tests["statistic"]
    out["p (permutation)"] = tests["p_permutation"]
    out["p Holm"] = _marked(tests["p_holm"], tests["significant"])
    out["annotators"] = tests["n_annotators"]
    return out.reset_index(drop=True)


def write_group_tables(winloss_path, effects_path, tests_path, *, files: Mapping[str, Mapping[str, str]],
                       cloze_set: str, alpha: float = 0.05) -> None:
    """The group win/loss, effects and tests tables of a cloze set (CSV, Markdown, LaTeX);
    ``files``: ``winloss``, ``effects``, ``tests`` -> their csv/md/tex paths."""
    permutation = ("permutation test: group labels shuffled among the annotators of each batch, every annotator "
                   "keeping their answers")
    write_table(
        winloss_table(read_parquet(winloss_path), a="group_a", b="group_b", n="n_sentences", p="p_permutation",
                      p_one="p_one_sided", p_adjusted="p_holm", adjusted="Holm"), **files["winloss"], digits=3,
        caption=f"{cloze_set}: win/loss of every two annotator groups on the sentences both answered (each group's "
                f"mean score per sentence, compared exactly); p: {permutation}, of the net wins (two-sided, and "
                f"one-sided for the first group winning more); * Holm-adjusted p < {alpha} over the comparisons of a "
                f"model and metric.",
        label=f"tab:{cloze_set}_group_winloss",
    )
    write_table(
        effects_table(read_parquet(effects_path)), **files["effects"], digits=3,
        caption=f"{cloze_set}: linear mixed model of each annotation's score with the annotator group as a fixed "
                f"effect (treatment coding against the reference) and random intercepts for sentence and annotator "
                f"(REML; lme4's lmer), estimates with 95% Wald intervals and Wald p (reported, not marked: the scores "
                f"are binary or discrete); p (permutation): the group's gap to the reference, {permutation}; * "
                f"Holm-adjusted permutation p < {alpha} over the three groups of a model, language and metric; fits "
                f"that did not reach the REML optimum are kept and marked.",
        label=f"tab:{cloze_set}_group_effects",
    )
    write_table(
        group_tests_table(read_parquet(tests_path)), **files["tests"], digits=3,
        caption=f"{cloze_set}: does any group differ (omnibus), do gender and nativeness (2 x 2 contrasts of the "
                f"four groups' means, and their interaction), and, languages pooled, does a group's gap depend on the "
                f"language (group x language); {permutation}; * Holm-adjusted p < {alpha} over gender, nativeness "
                f"and their interaction; the omnibus and group x language tests stand alone.",
        label=f"tab:{cloze_set}_group_tests",
    )


def write_language_tables(winloss_path, effects_path, *, files: Mapping[str, Mapping[str, str]],
                          alpha: float = 0.05) -> None:
    """The CrowS-Pairs language win/loss and effects tables (CSV, Markdown, LaTeX)."""
    write_table(
        winloss_table(read_parquet(winloss_path), a="dataset_a", b="dataset_b", n="n_pairs", p="p_two_sided",
                      p_one="p_one_sided", p_adjusted="p_bonferroni", adjusted="Bonferroni"), **files["winloss"],
        digits=3,
        caption=f"CrowS-Pairs: every two data sets (languages) a model was scored on, compared on the pairs both "
                f"have: pairs where the more stereotyping sentence is preferred in one data set only; p: exact "
                f"McNemar test (two-sided, and one-sided for the first data set preferring it more often); * "
                f"Bonferroni-adjusted p < {alpha} over the comparisons of a model.",
        label="tab:crows_pairs_language_winloss",
    )
    write_table(
        effects_table(read_parquet(effects_path)), **files["effects"], digits=3,
        caption="CrowS-Pairs: linear mixed model of the score margin (sent_more_score - sent_less_score) with the "
                "data set as a fixed effect (treatment coding against the first) and a random intercept per pair "
                "(REML); estimates with 95% intervals and Wald p-values; fits that did not reach the optimum are "
                "kept and marked.",
        label="tab:crows_pairs_language_effects",
    )


MODEL_TABLE_COLUMNS = {
    "model": "Model", "model_family": "Family", "model_parameters": "Parameters", "model_layers": "Layers",
    "model_hidden_size": "Hidden", "model_vocab_size": "Vocabulary", "model_tokenizer": "Tokenizer",
    "model_max_length": "Max. length", "model_uncased": "Uncased", "model_languages": "Languages",
    "model_source": "Source", "model_revision": "Revision", "model_commit": "Commit",
    "model_pretraining_data": "Pretraining data", "model_licence": "Licence",
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


def write_models_table(run_files: Sequence[str | os.PathLike], *, parquet: str, csv: str, md: str, tex: str) -> None:
    """``results/models.parquet`` (:data:`plmfair.models.MODEL_METADATA_SCHEMA` per model) and its table,
    from the run metadata of one scoring output per model."""
    from plmfair.io import read_parquet_meta, write_parquet
    from plmfair.models import MODEL_METADATA_SCHEMA, model_metadata

    rows = []
    for path in run_files:
        meta = read_parquet_meta(path)
        rows.append({"model": meta.get("model"), **model_metadata(meta)})
    models = pd.DataFrame(rows, columns=["model", *MODEL_METADATA_SCHEMA]).sort_values("model").reset_index(drop=True)
    models = models.astype({"model_parameters": "Int64", "model_layers": "Int64", "model_hidden_size": "Int64",
                            "model_vocab_size": "Int64", "model_max_length": "Int64"})
    write_parquet(models, parquet, schema_doc={"model": "model short name", **MODEL_METADATA_SCHEMA})
    write_table(models_table(models), csv=csv, md=md, tex=tex, label="tab:models",
                caption="Models: family, size, tokenizer, where the weights come from, and what the config says of them.")


def table_study(name: str) -> str:
    """The study a table belongs to, from its file name: crows_pairs, mozart, cloze_<corpus>, models or data."""
    for prefix in ("crows_pairs", "mozart", "models", "data"):
        if name.startswith(prefix):
            return prefix
    if name.startswith("cloze_construction"):
        return "cloze_construction"
    if name.startswith("cloze_"):
        return "_".join(name.split("_")[:2])
    return "other"


def write_report_tables(table_dir: str | os.PathLike, out_dir: str | os.PathLike) -> list[Path]:
    """Every table of ``table_dir`` (its CSV, captioned by the first line of its Markdown twin) as an
    HTML table in ``out_dir/<study>/<name>.html`` for the Snakemake report, rendered by pandas' Styler."""
    from plmfair.atomic import atomic_dir

    written = []
    with atomic_dir(out_dir) as tmp:
        for csv in sorted(Path(table_dir).glob("*.csv")):
            df = pd.read_csv(csv, keep_default_na=False, na_values=[""])
            md = csv.with_suffix(".md")
            caption = md.read_text(encoding="utf-8").split("\n", 1)[0] if md.exists() else csv.stem
            caption = "" if caption.startswith("|") else caption  # a table written without a caption
            html = (df.style.hide(axis="index").format(precision=2, na_rep="").set_caption(caption or csv.stem)
                    .set_table_attributes('class="table table-sm"').to_html())
            target = Path(tmp) / table_study(csv.stem) / f"{csv.stem}.html"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(html, encoding="utf-8")
            written.append(Path(out_dir) / target.relative_to(tmp))
    return written
