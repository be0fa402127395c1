"""The workflow itself: lint, and the offline demo end to end through Snakemake's command line.

Every test reads the session's one demo run (``demo_run``) or works on a copy of it
(``demo_copy``); none starts a demo from scratch.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import BIN, DEMO_CONFIGS, DEMO_DATA, REPO, dry_run_jobs, planned, snakemake
from display_rule import MINUS_ZERO, check_tables, markdown_rows

from plmfair.diff import diff_results, parquet_files
from plmfair.io.parquet import read_parquet, read_parquet_meta

pytestmark = pytest.mark.e2e

MODELS = {"tiny_bert", "tiny_mt5", "tiny_gpt2"}


def planned_jobs(jobs: list[tuple[str, str]]) -> dict[str, set[str]]:
    """Rule -> the wildcards of every job of a dry run (:func:`conftest.planned`, :func:`conftest.dry_run_jobs`)."""
    out: dict[str, set[str]] = {}
    for rule, wildcards in jobs:
        out.setdefault(rule, set()).add(wildcards)
    return out


def test_the_workflow_is_linted_by_make_lint_on_the_demo_and_the_default_configuration():
    """Snakemake's linter runs in `make lint` (so in CI), not in a test: each of its runs is a Snakemake
    start of seconds."""
    proc = subprocess.run(["make", "--no-print-directory", "-n", "lint"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lints = [line for line in proc.stdout.splitlines() if "snakemake --lint" in line]
    assert any(".test/config/config.yaml" in line for line in lints), lints
    assert any("config/config.yaml" in line and ".test/" not in line for line in lints), lints


def test_demo_rerun_is_a_noop(demo_copy):
    assert planned(demo_copy) == []


def test_bad_config_value_stops_with_one_line(tmp_path):
    proc = snakemake(tmp_path, "--dry-run", "--config", "crows_pairs={'datasets': ['nope']}", mirror=None, check=False)
    assert proc.returncode != 0
    assert "config error at crows_pairs.datasets.0: data set 'nope' is not declared" in proc.stdout + proc.stderr


def test_demo_ingestion_outputs(demo_run):
    ann = read_parquet(demo_run / "results/data/mozart/annotations.parquet")
    assert len(ann) == 4 * 48
    fr = read_parquet(demo_run / "results/data/crows_pairs/demo_fr.parquet")
    assert fr["sent_less"].isna().sum() == 1
    summary = pd.read_csv(demo_run / "results/tables/data_summary.csv")
    assert set(summary["dataset"]) == {"mozart", "crows_pairs/demo_en", "crows_pairs/demo_fr", "crows_pairs/demo_de"}


def test_demo_crows_pairs_outputs(demo_run):
    scores = read_parquet(demo_run / "results/crows_pairs/demo_fr/tiny_bert.parquet")
    assert set(scores["status"]) >= {"ok", "skipped_missing", "skipped_identical"}
    # Table 4 laid out as the paper does for people; its CSV holds the numbers, a row per data set, model, subset
    table = markdown_rows(demo_run / "results/tables/crows_pairs.md")
    assert [row[""] for row in table[:6]] == [
        "Metric score",
        "Stereo score",
        "Anti-stereo score",
        "Run time (mm:ss)",
        "Pairs skipped",
        "Unknown pieces (%)",
    ]
    numbers = pd.read_csv(demo_run / "results/tables/crows_pairs.csv")
    assert {"dataset", "model", "subset", "score (Nangia)", "neutral (Nangia)"} <= set(numbers.columns)
    for ext in ("md", "tex"):
        assert (demo_run / f"results/tables/crows_pairs.{ext}").stat().st_size > 0
        assert (demo_run / f"results/tables/crows_pairs_origin.{ext}").stat().st_size > 0
    assert (demo_run / "results/figures/crows_pairs.pdf").exists()


def test_mozart_chain_all_three_families(demo_run):
    metrics = read_parquet(demo_run / "results/cloze/mozart/metrics.parquet")
    assert set(metrics["model"]) == MODELS and set(metrics["lang"]) == {"en", "es", "de", "fr"}
    assert set(metrics["group"]) == {"MN", "FN", "MNN", "FNN", "all"}
    assert metrics.loc[(metrics["lang"] == "de") & (metrics["group"] == "all"), "n_empty"].eq(1).all()
    preds = read_parquet(demo_run / "results/cloze/mozart/predictions/tiny_mt5.parquet")
    assert set(preds["lang"]) == {"en", "es", "de", "fr"} and preds.groupby(["lang", "s_id"])["rank"].max().max() <= 20
    meta = read_parquet_meta(demo_run / "results/cloze/mozart/predictions/tiny_mt5.parquet")
    assert set(meta["mean_tokens_per_sentence"]) == {"en", "es", "de", "fr"}
    for name in ("table1", "table2_p_at_1", "table3_spearman", "table4_p_at_5", "table5_kendall"):
        table = pd.read_csv(demo_run / f"results/tables/mozart_{name}.csv")
        assert (demo_run / f"results/tables/mozart_{name}.tex").exists()
        if name != "table1":
            assert list(dict.fromkeys(table["model"])) == ["tiny_bert", "tiny_mt5", "tiny_gpt2"]
    assert (demo_run / "results/figures/mozart_mrr.png").exists()


def test_demo_cloze_construction_feeds_scoring(demo_run):
    sentences = read_parquet(demo_run / "results/cloze/demo/sentences.parquet")
    assert len(sentences) == 8 * 4 and sentences["text"].str.count(r"\[MASK\]").eq(1).all()
    tokens = {
        lang: read_parquet(demo_run / f"results/cloze/demo/tokens/{lang}.parquet") for lang in ("en", "de", "es", "fr")
    }
    for _, row in sentences.iterrows():
        tok = tokens[row["lang"]]
        word = tok[(tok["line"] == row["line"]) & (tok["token"] == row["token"])]
        assert word["text"].item() == row["true_mask"] and row["tag"] in {"NOUN", "VERB", "ADJ", "ADV"}
    # the demo corpus is aligned by its gold files (eflomal runs in the alignment-quality step)
    for lang in ("de", "es", "fr"):
        meta = read_parquet_meta(demo_run / f"results/cloze/demo/alignments/{lang}.parquet")
        assert meta["alignment_source"].endswith(f"cloze_demo.en-{lang}.align")
    demo = pd.read_csv(demo_run / "results/tables/demo_construction.csv")
    assert demo.loc[demo["step"] == "sampled", ["en", "de", "es", "fr", "all"]].eq(8).all(axis=None)
    assert demo.loc[demo["step"] == "examined_lines", "all"].item() <= demo.loc[demo["step"] == "length", "all"].item()
    assert sorted(p.name for p in (demo_run / "results/cloze/demo/sheets/es").glob("*.csv")) == [
        "batch_001.csv",
        "batch_002.csv",
        "batch_003.csv",
    ]
    for model in ("tiny_bert", "tiny_mt5"):
        preds = read_parquet(demo_run / f"results/cloze/demo/predictions/{model}.parquet")
        assert set(preds["s_id"]) == set(sentences["s_id"]) and preds["rank"].max() <= 10


def test_demo_alignment_quality_recomputed_from_its_links(demo_run):
    """The AER table of the demo's eflomal step, recomputed here from the links it wrote and the
    demo's gold French alignments (Pharaoh, every link sure)."""
    quality = read_parquet(demo_run / "results/cloze/demo/alignment_quality.parquet")
    links = read_parquet(demo_run / "results/cloze/demo/gold_alignment_links.parquet")
    gold = set()
    for n, line in enumerate((DEMO_DATA / "cloze" / "cloze_demo.en-fr.align").read_text().splitlines(), start=1):
        gold |= {(n, int(i), int(j)) for i, j in (item.split("-") for item in line.split())}
    assert len(quality) == 8 and set(quality["extra"]) == {"none", "corpus"}
    assert set(quality["symmetrisation"]) == {"intersection", "union", "grow-diag-final", "grow-diag-final-and"}
    for row in quality.itertuples():
        mine = links[(links["extra"] == row.extra) & (links["symmetrisation"] == row.symmetrisation)]
        a = set(zip(mine["sentence"], mine["pivot_token"], mine["token"], strict=True))
        hits = len(a & gold)
        assert (row.predicted, row.sure, row.hit_sure) == (len(a), len(gold), hits)
        assert row.aer == pytest.approx(1 - 2 * hits / (len(a) + len(gold)))
        assert row.precision == pytest.approx(hits / len(a)) and row.recall == pytest.approx(hits / len(gold))
    table = pd.read_csv(demo_run / "results/tables/demo_alignment_quality.csv")
    assert len(table) == 8 and "AER" in table.columns


def test_bitext_corpus_is_joined_and_sampled_back_to_its_lines(demo_run):
    """The demo corpus given as three X-English bitexts (fr-en in reverse order, a German line whose
    English is nowhere else, a repeated English line in es-en) is joined, tokenized and sampled;
    every sampled sentence traces back to its line in each bitext."""
    data = DEMO_DATA / "cloze"
    bitexts = {
        lang: (
            (data / f"bi.{lang}-en.en").read_text(encoding="utf-8").splitlines(),
            (data / f"bi.{lang}-en.{lang}").read_text(encoding="utf-8").splitlines(),
        )
        for lang in ("de", "es", "fr")
    }
    joined = read_parquet(demo_run / "results/cloze/bitext/joined.parquet")
    distinct = len(dict.fromkeys((data / "cloze_demo.en").read_text(encoding="utf-8").splitlines()))
    assert joined["line"].max() == distinct and "An English line only here ." not in set(joined["text"])
    sentences = read_parquet(demo_run / "results/cloze/bitext/sentences.parquet")
    assert len(sentences) == 8 * 4
    for row in sentences.itertuples():
        src = joined[(joined["line"] == row.line) & (joined["lang"] == row.lang)].iloc[0]
        original = bitexts[row.lang][1] if row.lang != "en" else bitexts["de"][0]
        assert original[src["source_line"] - 1] == src["text"]
        assert src["text"].split()[row.token] == row.true_mask
    counts = read_parquet(demo_run / "results/cloze/bitext/construction.parquet").set_index(["step", "lang"])["count"]
    assert counts[("bitext_repeats", "es")] >= 1 and counts[("joined", "all")] == distinct
    assert counts[("lines", "all")] == distinct
    assert set(read_parquet(demo_run / "results/cloze/bitext/predictions/tiny_gpt2.parquet")["lang"]) == {
        "en",
        "de",
        "es",
        "fr",
    }


def test_constructed_set_with_answers_goes_through_mozarts_chain(demo_run):
    """Answers in MozArt's JSONL format to the constructed sentences: ingested and checked, then
    the same metrics, tables, figures, group tests and breakdowns as MozArt's."""
    sentences = read_parquet(demo_run / "results/cloze/demo/sentences.parquet")
    ann = read_parquet(demo_run / "results/data/demo/annotations.parquet")
    assert len(ann) == 8 * len(sentences) and set(ann["group"]) == {"MN", "FN", "MNN", "FNN"}
    merged = ann.merge(sentences[["lang", "s_id", "true_mask"]], on=["lang", "s_id"], suffixes=("", "_sentence"))
    assert (merged["true_mask"] == merged["true_mask_sentence"]).all()
    metrics = read_parquet(demo_run / "results/cloze/demo/metrics.parquet")
    assert set(metrics["model"]) == MODELS and set(metrics["lang"]) == {"en", "de", "es", "fr"}
    by_group = metrics[(metrics["model"] == "tiny_bert") & (metrics["lang"] == "es")].set_index("group")["n"]
    assert by_group["all"] == 8 * 8 and by_group[["MN", "FN", "MNN", "FNN"]].sum() == by_group["all"]
    wl = read_parquet(demo_run / "results/cloze/demo/group_winloss.parquet")
    assert set(wl["model"]) == MODELS
    bd = read_parquet(demo_run / "results/cloze/demo/breakdowns.parquet")
    pos = bd[(bd["attribute"] == "pos") & (bd["group"] == "all") & (bd["lang"] == "es") & (bd["model"] == "tiny_bert")]
    es = sentences[sentences["lang"] == "es"]
    assert pos.set_index("bucket")["n"].to_dict() == (8 * es["tag"].value_counts()).to_dict()
    for name in ("demo_table1.csv", "demo_table2_p_at_1.md", "demo_group_effects.tex", "demo_disparity.csv"):
        assert (demo_run / "results/tables" / name).stat().st_size > 0
    for name in ("demo_mrr.pdf", "demo_group_effects.pdf", "demo_breakdowns.pdf"):
        assert (demo_run / "results/figures" / name).stat().st_size > 0


def test_demo_scores_causal_models_in_every_study(demo_run):
    summary = read_parquet(demo_run / "results/crows_pairs/summary.parquet")
    metric = summary[summary["subset"] == "metric"].set_index(["dataset", "model"])
    assert metric.loc[("demo_fr", "tiny_gpt2"), "protocol"] == "sentence_log_likelihood"
    assert metric.loc[("demo_fr", "tiny_bert"), "protocol"] == "nangia"
    # the German file, read through its config entry: one dropped translation, counted as skipped
    assert metric.loc[("demo_de", "tiny_gpt2"), "n_skipped"] == 1
    de = read_parquet(demo_run / "results/data/crows_pairs/demo_de.parquet")
    assert de["pair_id"].str.startswith("LA").sum() == 8 and de["bias_type"].notna().all()
    path = demo_run / "results/cloze/demo/predictions/tiny_gpt2.parquet"
    assert read_parquet_meta(path)["model_family"] == "causal"
    preds = read_parquet(path)
    assert preds.groupby(["lang", "s_id"])["logprob"].apply(lambda s: s.is_monotonic_decreasing).all()


def test_params_rerun_exactly_what_they_change(demo_copy, tmp_path):
    beams = tmp_path / "beams.yaml"
    beams.write_text("mozart:\n  num_beams: 3\ncloze:\n  num_beams: 5\n")
    jobs = planned_jobs(planned(demo_copy, configfiles=(*DEMO_CONFIGS, beams)))
    # beam settings rerun the beam-search families' jobs only, never a masked LM's
    scored = {re.search(r"model=(\w+)", w).group(1) for w in jobs["cloze_score"]}
    assert scored == {"tiny_mt5", "tiny_gpt2"}
    assert {re.search(r"cloze_set=(\w+)", w).group(1) for w in jobs["cloze_score"]} == {"mozart", "demo", "bitext"}
    assert "crows_pairs_score" not in jobs and "download" not in jobs
    # the mirror is where files are looked up, not what they are: moving it reruns nothing
    moved = tmp_path / "moved_mirror"
    shutil.copytree(DEMO_DATA, moved)
    assert planned(demo_copy, mirror=moved) == []
    # free text about a model, and a CrowS-Pairs data set declared but not scored, change no result
    unscored = tmp_path / "free_text_and_unscored_set.yaml"
    unscored.write_text(
        "models:\n  tiny_bert: {licence: MIT, pretraining_data: a few demo sentences}\n"
        "datasets:\n  crows_pairs:\n    unscored_fr: {file: unscored_fr.csv, format: inria, lang: fr}\n"
    )
    jobs = planned(demo_copy, configfiles=(*DEMO_CONFIGS, unscored))
    # (the run record echoes the configuration, so it alone is rewritten: a local job of a second)
    assert set(planned_jobs(jobs)) == {"run_record"}, jobs


def test_one_load_per_model_and_a_data_set_added_later_scored_alone(demo_run, demo_copy, tmp_path):
    """A model's CrowS-Pairs jobs load it once in all; a data set added to the configuration later is
    one new job (one load), and the other data sets' files are not touched. (The demo's tiny models
    are trained on every data set's sentences, so adding a set rebuilds them: a local model folder,
    whose weights depend on no data set, as a real model's do not, stands in for one here.)"""
    logs = demo_run / "results/logs/crows_pairs"
    for model in ("tiny_bert", "tiny_gpt2"):
        texts = [(logs / ds / f"{model}.log").read_text() for ds in ("demo_en", "demo_fr", "demo_de")]
        # the robustness analysis's other protocols (masked LMs only) are passes of the same load: one job per
        # data set makes the model's passes on it
        passes = sorted(logs.glob(f"*/passes/{model}.log"))
        assert len(passes) == (3 if model == "tiny_bert" else 0), passes
        texts += [p.read_text() for p in passes]
        assert sum(text.count(f"loaded {model} (") for text in texts) == 1, texts
        # every task but the one whose job loaded the model: the 3 data sets and, for tiny_bert, 3 passes of each
        tasks = 3 + 3 * len(passes)
        assert sum(text.count("taken from the scoring cache") for text in texts) == tasks - 1, texts
    folder = tmp_path / "local_bert"
    shutil.copytree(demo_run / "results/models/tiny_bert", folder)

    def configure(datasets: list[str]) -> tuple[Path, ...]:
        extra = tmp_path / f"{len(datasets)}_sets.yaml"
        extra.write_text(
            f"models:\n  local_bert: {{path: {folder}, family: mlm, uncased: true}}\n"
            f"crows_pairs:\n  models: [local_bert]\n  datasets: [{', '.join(datasets)}]\n"
            # the data sets' own scoring is the subject here (the robustness passes are the demo's, above)
            "robustness:\n  enabled: false\n"
        )
        return (*DEMO_CONFIGS, extra)

    def scores(datasets) -> list[str]:
        return [f"results/crows_pairs/{ds}/local_bert.parquet" for ds in datasets]

    snakemake(demo_copy, *scores(["demo_en", "demo_fr"]), configfiles=configure(["demo_en", "demo_fr"]))
    texts = [(demo_copy / f"results/logs/crows_pairs/{ds}/local_bert.log").read_text() for ds in ("demo_en", "demo_fr")]
    assert sum(text.count("loaded local_bert (") for text in texts) == 1, texts
    three = ["demo_en", "demo_fr", "demo_de"]
    jobs = planned(demo_copy, *scores(three), configfiles=configure(three))
    assert planned_jobs(jobs)["crows_pairs_score"] == {"dataset=demo_de, model=local_bert"}
    before = {path: (demo_copy / path).stat().st_mtime_ns for path in scores(["demo_en", "demo_fr"])}
    snakemake(demo_copy, *scores(three), configfiles=configure(three))
    text = (demo_copy / "results/logs/crows_pairs/demo_de/local_bert.log").read_text()
    assert (
        text.count("loaded local_bert (") == 1
        and "one load for 1 task(s) (data sets and extra passes): demo_de" in text
    )
    assert {path: (demo_copy / path).stat().st_mtime_ns for path in before} == before


def test_dag_is_built_without_torch(tmp_path):
    """`snakemake -n` on the default configuration with torch and transformers unimportable (`make lint` lints
    it)."""
    blocked = tmp_path / "blocked"
    for name in ("torch", "transformers"):
        (blocked / name).mkdir(parents=True)
        (blocked / name / "__init__.py").write_text(f"raise ImportError('{name} is blocked for this test')\n")
    env = {**os.environ, "PYTHONPATH": str(blocked)}
    default = (REPO / "config" / "config.yaml",)
    jobs = planned_jobs(dry_run_jobs(snakemake(tmp_path / "work", "--dry-run", configfiles=default, env=env).stdout))
    assert {"crows_pairs_score", "cloze_score"} <= set(jobs)
    assert any("model=gpt2" in w for w in jobs["crows_pairs_score"])


def test_demo_breakdowns_partition_the_scores(demo_run):
    scores = read_parquet(demo_run / "results/cloze/mozart/annotation_scores.parquet")
    bd = read_parquet(demo_run / "results/cloze/mozart/breakdowns.parquet")
    assert set(bd["attribute"]) == {"pos", "length", "agreement", "answer_pieces", "multiword"}
    # every attribute's buckets hold each (model, language)'s annotations once
    sums = bd[(bd["group"] == "all") & (bd["lang"] != "all")].groupby(["model", "lang", "attribute"])["n"].sum()
    sizes = scores.groupby(["model", "lang"]).size()
    for (model, lang, _), n in sums.items():
        assert n == sizes[(model, lang)]
    cp = read_parquet(demo_run / "results/crows_pairs/breakdowns.parquet")
    assert set(cp["attribute"]) == {"length", "differing_tokens", "origin", "bias_type"}
    scored = cp[cp["n"] > 0]  # a bucket of skipped pairs only (identical sentences) has no score
    assert ((scored["ci_low"] <= scored["score"]) & (scored["score"] <= scored["ci_high"])).all()
    assert cp.loc[cp["n"] == 0, "score"].isna().all()
    for name in ("mozart_breakdowns", "crows_pairs_breakdowns"):
        assert (demo_run / f"results/figures/{name}.png").stat().st_size > 0


def test_demo_report_holds_its_figures_and_tables_by_study(demo_copy, tmp_path):
    """The report renders the declared outputs, each table with its own caption under its study; a
    leftover CSV in results/tables is not a declared output and stays out; what the config says of
    a model is read when the report is built."""
    (demo_copy / "results" / "tables" / "leftover_from_another_run.csv").write_text("a,b\n1,2\n")
    notes = tmp_path / "notes.yaml"
    notes.write_text("models:\n  tiny_bert: {licence: Apache-2.0 (demo note)}\n")
    snakemake(demo_copy, "--report", "results/report.html", configfiles=(*DEMO_CONFIGS, notes))
    html = (demo_copy / "results" / "report.html").read_text(encoding="utf-8")
    summary = snakemake(demo_copy, "--summary").stdout.splitlines()
    outputs = [line.split("\t")[0] for line in summary if line.startswith("results/")]
    figures = [Path(o).name for o in outputs if o.startswith("results/figures/") and o.endswith(".png")]
    tables = [Path(o).stem for o in outputs if o.startswith("results/tables/") and o.endswith(".html")]
    assert len(figures) >= 10 and len(tables) >= 28
    for name in figures:
        assert name in html, name
    for name in tables:
        assert f"{name}.html" in html, name
    assert "leftover_from_another_run" not in html
    for category in ("MozArt", "CrowS-Pairs", "Cloze set demo", "Cloze set bitext", "Data and models"):
        assert f'"{category}"' in html, category
    assert "Apache-2.0 (demo note)" in html and "McNemar" in html
    models = (demo_copy / "results" / "tables" / "models.html").read_text(encoding="utf-8")
    assert "<table" in models and "tiny_bert" in models and "WordPiece" in models


def test_demo_models_table_and_tsne(demo_run):
    models = read_parquet(demo_run / "results/models.parquet").set_index("model")
    assert models["model_parameters"].gt(0).all() and set(models["model_family"]) == {"mlm", "seq2seq", "causal"}
    summary = read_parquet(demo_run / "results/crows_pairs/summary.parquet")
    metrics = read_parquet(demo_run / "results/cloze/mozart/metrics.parquet")
    for frame in (summary, metrics):  # model metadata next to every score
        for model, n in frame.groupby("model")["model_parameters"].first().items():
            assert n == models.loc[model, "model_parameters"]
    coords = read_parquet(demo_run / "results/cloze/mozart/tsne.parquet")
    assert set(coords["s_id"]) == {"1", "5"} and set(coords["lang"]) == {"en", "es", "de", "fr"}
    assert coords.groupby(["model", "s_id", "lang"]).size().le(40).all() and coords[["x", "y"]].notna().all().all()
    assert (demo_run / "results/figures/mozart_tsne.png").stat().st_size > 0


def test_demo_group_and_language_tests(demo_run):
    scores = read_parquet(demo_run / "results/cloze/mozart/annotation_scores.parquet")
    metrics = read_parquet(demo_run / "results/cloze/mozart/metrics.parquet").set_index(["model", "lang", "group"])
    # the metrics are the means of the annotation scores
    for (model, lang), g in scores.groupby(["model", "lang"]):
        assert metrics.loc[(model, lang, "all"), "mrr"] == pytest.approx(100 * g["rr"].mean())
        assert metrics.loc[(model, lang, "all"), "n"] == len(g)
    wl = read_parquet(demo_run / "results/cloze/mozart/group_winloss.parquet")
    # 6 pairs of groups x (4 languages + pooled) x 2 metrics per model
    assert wl.groupby("model").size().eq(6 * 5 * 2).all()
    effects = read_parquet(demo_run / "results/cloze/mozart/group_effects.parquet")
    assert {"Intercept", "group[T.FN]", "group[T.MNN]", "group[T.FNN]", "lang[T.es]"} <= set(effects["term"])
    table1 = markdown_rows(demo_run / "results/tables/mozart_table1.md")
    assert [row[""] for row in table1[:3]] == ["Sentences", "Annotations", "Annotators"] and table1[1]["EN"] == "48"
    assert "Tokens per sentence (tiny_gpt2)" in {row[""] for row in table1}
    lw = read_parquet(demo_run / "results/crows_pairs/language_winloss.parquet")
    assert set(lw["model"]) == {"tiny_bert", "tiny_gpt2"} and len(lw) == 2 * 3
    le = read_parquet(demo_run / "results/crows_pairs/language_effects.parquet")
    assert set(le.loc[le["term"] != "Intercept", "term"]) == {"dataset[T.demo_fr]", "dataset[T.demo_de]"}
    for name in ("mozart_group_winloss.md", "mozart_group_effects.tex", "crows_pairs_language_winloss.md"):
        assert (demo_run / "results/tables" / name).stat().st_size > 0


# Forced to run again on a copy of the demo: scoring jobs of every family, and the seeded and
# aggregating jobs (the t-SNE maps, the permutation tests, metrics and summary).
FORCED = (
    "results/cloze/mozart/predictions/tiny_bert.parquet",
    "results/cloze/demo/predictions/tiny_mt5.parquet",
    "results/crows_pairs/demo_fr/tiny_gpt2.parquet",
    "results/cloze/mozart/tsne/tiny_gpt2.parquet",
    "results/cloze/mozart/tsne.parquet",
    "results/cloze/mozart/group_winloss.parquet",
    "results/cloze/mozart/metrics.parquet",
    "results/crows_pairs/summary.parquet",
)
# The seeded cloze sample, forced on its own: everything downstream of it (the demo's answers and
# the tiny models that learn them) would run again with it, and is not what this test is about.
SAMPLE = "results/cloze/demo/sentences.parquet"


def test_scoring_and_aggregation_are_deterministic(demo_run, demo_copy):
    """Scoring jobs of every family, the seeded and aggregating jobs, and the seeded cloze sample,
    run again on a copy of the demo (exactly those jobs: they are the targets), give every Parquet
    file as it was, every column and metadata key but wall times (plmfair.diff)."""
    proc = snakemake(demo_copy, *FORCED, "--forcerun", *FORCED)
    ran = {rule for rule, _ in dry_run_jobs(proc.stdout + proc.stderr)}
    assert ran == {
        "cloze_score",
        "crows_pairs_score",
        "tsne_vectors",
        "tsne",
        "group_analysis",
        "cloze_metrics",
        "crows_pairs_summary",
    }, ran
    proc = snakemake(demo_copy, SAMPLE, "--forcerun", SAMPLE)
    assert {rule for rule, _ in dry_run_jobs(proc.stdout + proc.stderr)} == {"cloze_select"}
    assert len(parquet_files(demo_run)) >= 60
    assert diff_results(demo_run, demo_copy) == []


def test_every_mark_is_the_run_hypotheses_and_agrees_with_the_interval_beside_it(demo_run):
    """The demo's hypotheses: one primary question per model and data set (CrowS-Pairs: each data set's
    overall row; each cloze set: MRR with the languages pooled) in the confirmatory family, every other marked
    test secondary, untestable or uninformative; every result file's test is in it, adjusted once. Against
    every row of the result files: a test the hypotheses test has its interval, at its own level, excluding the
    null value whenever the hypotheses mark it (a mark the P@1 tie-break alone makes is the one exception, and the
    table says so); an untested row has no mark. Every source the hypotheses draw on is a test bench-stats
    shows the level of."""
    from plmfair.multiplicity import DECIDED_SCHEMA

    results = demo_run / "results"
    hypotheses = read_parquet(results / "hypotheses.parquet").set_index("hypothesis")
    assert list(hypotheses.columns) == list(DECIDED_SCHEMA)[1:] and hypotheses.index.is_unique
    primary = hypotheses[hypotheses["primary"]]
    assert set(primary["family"]) <= {"confirmatory", "untestable", "uninformative"} and len(primary) == 12
    assert set(hypotheses.loc[~hypotheses["primary"], "family"]) <= {"secondary", "untestable", "uninformative"}
    assert (hypotheses["procedure"][hypotheses["family"] == "confirmatory"] == "Holm").all()
    assert (hypotheses["procedure"][hypotheses["family"] == "secondary"] == "Benjamini-Yekutieli").all()
    # the per-language tests of two annotators a group can never reach their threshold: untestable
    tests = read_parquet(results / "cloze/demo/group_tests.parquet").set_index("hypothesis")
    gender = tests[(tests["test"] == "gender") & (tests["lang"] != "all")]
    untested = hypotheses.loc[gender.index, "family"]
    assert (gender["p_min"] >= 2 / 36).all() and untested.isin(["untestable", "uninformative"]).all()
    assert (untested == "untestable").any()
    checked = 0
    intervals = {
        "crows_pairs/summary.parquet": ("ci_low", "ci_high", 50.0),
        "crows_pairs/language_winloss.parquet": ("ci_low", "ci_high", 0.0),
        **{str(p.relative_to(results)): ("ci_low", "ci_high", 0.0) for p in results.glob("cloze/*/group_gaps.parquet")},
        **{
            str(p.relative_to(results)): ("ci_low", "ci_high", 0.0)
            for p in results.glob("cloze/*/group_disparity.parquet")
        },
    }
    for path, (low, high, null) in intervals.items():
        frame = read_parquet(results / path).set_index("hypothesis")
        decided = hypotheses.loc[frame.index]
        assert (decided["source"] == f"results/{path}").all()
        for hypothesis, row in frame.iterrows():
            d = decided.loc[hypothesis]
            assert not d["significant"] or d["family"] in ("confirmatory", "secondary")
            holds = row[low] <= null <= row[high]
            if d["significant"] and holds:
                assert row.get("p_untied", 0) >= 0.05 or not row.get("interval_connected", True), (path, row.to_dict())
            if d["family"] in ("confirmatory", "secondary") and row[low] == row[low]:
                # the interval is its test's own at 1 - alpha: it excludes the null exactly when p < alpha
                p = row.get("p_untied", row.get("p_permutation", row.get("p_value")))
                if "interval_connected" not in row or row["interval_connected"]:
                    assert (p < 0.05) == (not holds), (path, row.to_dict())
            checked += 1
    for path in results.glob("cloze/*/group_disparity.parquet"):
        for _, row in read_parquet(path).iterrows():
            assert (row["p_permutation"] < 0.05) == (row["sigma_gd"] > row["critical_value"] + 1e-12)
    # every source of the hypotheses is a test whose level make bench-stats shows (benchmarks/bench_stats.py)
    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_stats import LEVEL_SHOWN

    assert {Path(s).name for s in hypotheses["source"]} <= LEVEL_SHOWN
    assert checked > 300


def test_every_printed_row_keeps_its_side_of_the_null_the_threshold_and_alpha(demo_run):
    """The display rule (tests/display_rule.py) on every printed table of the demo and its `show`."""
    checked = check_tables(demo_run / "results" / "tables")
    shown = subprocess.run(
        [sys.executable, "-m", "plmfair.cli", "show", demo_run.name, "--runs", str(demo_run.parent)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert not MINUS_ZERO.search(shown)
    assert checked > 100


def test_the_demos_robustness_analysis_reaches_its_table_figure_record_and_show(demo_run):
    """The demo runs its robustness analysis: every specification of every model and data set, the verdicts'
    table (K and what it counts, k, robust at the level of the primary question's family, the choices short of
    it and those that differ beyond noise, as numbers), the specification curve, the record's rows (its numbers)
    and one line per verdict in plmfair show."""
    from plmfair.runs.record import read_run_record

    results = demo_run / "results"
    specs = read_parquet(results / "crows_pairs/specifications.parquet")
    verdicts = read_parquet(results / "crows_pairs/robustness.parquet")
    # tiny_bert: 4 protocols x 3 tie rules x 2 pair sets; tiny_gpt2 (causal): 1 x 3 x 2; demo_fr has native and
    # translated pairs, 3 data choices: tiny_bert's 72 combinations pass max_grid (32), one axis at a time instead
    sizes = specs.groupby(["dataset", "model"]).size().to_dict()
    assert sizes == {
        **{(ds, "tiny_bert"): 24 for ds in ("demo_en", "demo_de")},
        **{(ds, "tiny_gpt2"): 6 for ds in ("demo_en", "demo_de")},
        ("demo_fr", "tiny_bert"): 1 + 3 + 2 + 1 + 2,
        ("demo_fr", "tiny_gpt2"): 3 * 2 * 3,
    }
    assert verdicts.set_index(["dataset", "model"]).loc[("demo_fr", "tiny_bert"), "design"] == "one axis at a time"
    assert set(specs.loc[specs["dataset"] == "demo_fr", "data"]) == {"as given", "native pairs", "translated pairs"}
    assert set(specs["precision"]) == {"fp32"}  # the demo's models run in fp32: no precision choice
    assert set(specs["pairs"]) == {"all pairs", "without crows_pairs_demo_audit.csv"}
    own = specs[specs["default"]].set_index(["dataset", "model"])
    summary = read_parquet(results / "crows_pairs/summary.parquet").query("subset_kind == 'overall'")
    for _, row in summary.iterrows():  # the run's own specification is the primary estimate
        assert own.loc[(row["dataset"], row["model"]), "estimate"] == pytest.approx(row["decisive_score"])
    record = read_run_record(results / "run.json")["results"]["crows_pairs_robustness"]
    assert [(r["dataset"], r["model"], r["holding"], r["robust"]) for r in record] == list(
        zip(verdicts["dataset"], verdicts["model"], verdicts["holding"], verdicts["robust"], strict=True)
    )
    # the level of a robust claim is the primary question's in the run's confirmatory family (Bonferroni)
    decided = read_parquet(results / "hypotheses.parquet").set_index("hypothesis")
    for r in record:
        row = decided.loc[f"crows_pairs/summary/{r['dataset']}/{r['model']}/overall/metric"]
        size = row["family_size"] if row["family"] == "confirmatory" else 0
        assert r["family_size"] == size and r["level"] == pytest.approx(0.05 / size if size else 0.0)
        assert r["robust"] == (r["verdict"] != "no preference" and size > 0 and r["p_all"] < r["level"])
        assert r["robust"] <= (r["holding"] == r["specifications"])
    # counts as numbers in the CSV, K explained per row, and no "fragile" claim anywhere
    table = pd.read_csv(results / "tables/crows_pairs_verdicts.csv")
    assert table["K"].tolist() == [r["specifications"] for r in record]
    assert table["k showing it"].tolist() == [r["holding"] for r in record]
    assert table["differ beyond noise"].tolist() == [r["differing"] for r in record]
    assert table["K counts"].str.len().min() > 0
    assert set(table["robust"]) <= {"robust", "not shown robust", "no claim to test"}
    assert "fragile" not in (results / "tables/crows_pairs_verdicts.md").read_text()
    assert (results / "figures/crows_pairs_specification_curve.png").stat().st_size > 10_000
    shown = subprocess.run(
        [str(BIN / "plmfair"), "show", str(demo_run)], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert "CrowS-Pairs robustness" in shown and "Cloze robustness" in shown
    # each cloze set's verdicts: every other metric and each annotator left out, beside the run's own
    cloze = read_run_record(results / "run.json")["results"]["cloze_robustness"]
    annotators = read_parquet(results / "cloze/demo/annotation_scores.parquet").groupby("lang")["u_id"].nunique().sum()
    assert {(r["set"], r["model"]) for r in cloze} == {(s, m) for s in ("mozart", "demo") for m in MODELS}
    assert {r["specifications"] for r in cloze if r["set"] == "demo"} == {1 + 2 + annotators}
    counted = f"1 + 2 other metrics + {annotators} annotators left out"
    assert {r["counted"] for r in cloze if r["set"] == "demo"} == {counted}
    assert all(r["robust"] <= (r["holding"] == r["specifications"]) for r in cloze)
    assert all(r["most_influential"] for r in cloze) and (results / "tables/demo_verdicts.md").is_file()
    for r in record:
        assert any(
            f"| {r['dataset']} " in x and f"| {r['model']} " in x and r["verdict"] in x for x in shown.splitlines()
        )


def test_the_run_record_holds_what_the_tables_print(demo_run):
    """results/run.json validates against its schema and its numbers are the tables' (every CrowS-Pairs
    overall row, every cloze metric, every disparity row), with provenance for every model and file."""
    import json

    from plmfair.runs.record import read_run_record

    record = read_run_record(demo_run / "results" / "run.json")
    summary = read_parquet(demo_run / "results/crows_pairs/summary.parquet")
    overall = summary[summary["subset_kind"] == "overall"].set_index(["dataset", "model"])
    assert len(record["results"]["crows_pairs"]) == len(overall)
    for row in record["results"]["crows_pairs"]:
        expected = overall.loc[(row["dataset"], row["model"])]
        for key in ("score", "decisive_score", "ci_low", "ci_high", "p_value", "n_neutral"):
            assert row[key] == pytest.approx(expected[key], nan_ok=True)
    for name in ("mozart", "demo"):
        metrics = read_parquet(demo_run / f"results/cloze/{name}/metrics.parquet").set_index(["model", "lang", "group"])
        rows = [r for r in record["results"]["cloze"] if r["set"] == name]
        assert len(rows) == len(metrics)
        for r in rows:
            assert r["mrr"] == pytest.approx(metrics.loc[(r["model"], r["lang"], r["group"]), "mrr"])
        disparity = read_parquet(demo_run / f"results/cloze/{name}/group_disparity.parquet")
        assert len([d for d in record["results"]["disparity"] if d["set"] == name]) == len(disparity)
    assert {m["name"] for m in record["models"]} == MODELS
    assert all(m["files_sha256"] and m["precision"] == "fp32" for m in record["models"])
    assert all(len(d["sha256"]) == 64 for d in record["data"]) and record["software"]["git_commit"]
    assert record["config"]["analysis"]["permutations"] == 999  # the demo's setting, defaults resolved around it
    html = (demo_run / "results" / "run.html").read_text()
    assert "Answers to the primary questions" in html and json.loads(json.dumps(record)) == record
    # the demo's models read their demo text (tokenizers trained on it): counted, nothing to warn about
    counted = record["results"]["crows_pairs"] + record["results"]["cloze"]
    assert all(r["unknown_share"] == 0 and r["coverage_warning"] == "" for r in counted)
    assert record["results"]["warnings"] == [] and "WARNING" not in html


def test_the_record_lists_every_file_the_demo_publishes_and_verify_holds_them(demo_run):
    """decided.published_files is every file of the demo's results/ but its logs, benchmarks, built models
    and the record itself (a new output of a rule that is not listed fails here), and plmfair verify
    finds each as the record lists it."""
    import subprocess
    import sys

    from plmfair.runs.integrity import verify

    check = verify(demo_run)
    assert check.ok and check.checked > 200, (check.changed, check.missing, check.unexpected)
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "plmfair"), "verify", str(demo_run)], capture_output=True, text=True
    )
    models, verdict = proc.stdout.splitlines()
    assert proc.returncode == 0 and verdict.startswith(f"run {demo_run.name}: verified: the {check.checked} files")
    assert models.startswith("models: 3 folder(s), ") and models.endswith("(--no-models skips this)")


def test_a_ready_made_cloze_test_is_a_config_entry(demo_copy, tmp_path):
    """A cloze test with annotator groups in MozArt's archive format, under another name, costs no
    code: one entry under datasets.cloze_tests (here a copy of the demo's MozArt archive). It is
    ingested, scored by the mozart study's models and settings and measured as MozArt's set is, with
    the same numbers on the same data, and its tables are planned."""
    import yaml

    mirror = tmp_path / "mirror"
    shutil.copytree(DEMO_DATA, mirror)
    shutil.copy(DEMO_DATA / "MozArt.zip", mirror / "MozArtCopy.zip")
    with open(DEMO_CONFIGS[0]) as fh:
        sha256 = yaml.safe_load(fh)["datasets"]["cloze_tests"]["mozart"]["sha256"]
    extra = tmp_path / "copy.yaml"
    extra.write_text(
        yaml.safe_dump(
            {
                "datasets": {
                    "cloze_tests": {
                        "mozart_copy": {
                            "file": "MozArtCopy.zip",
                            "sha256": sha256,
                            "languages": ["en", "es", "de", "fr"],
                        }
                    }
                },
                # one model of each set is enough to show the two are measured alike
                "mozart": {"models": ["tiny_bert"]},
            }
        )
    )
    configs = (*DEMO_CONFIGS, extra)
    jobs = planned(demo_copy, configfiles=configs, mirror=mirror)
    assert ("mozart_copy_tables", "") in jobs
    assert ("group_analysis", "cloze_set=mozart_copy") in jobs
    # the demo's tiny models learn every ingested test's answers: with the copy's the model is rebuilt,
    # and both sets are scored by the same new model
    snakemake(
        demo_copy,
        "results/cloze/mozart_copy/metrics.parquet",
        "results/cloze/mozart/metrics.parquet",
        configfiles=configs,
        mirror=mirror,
    )
    original, copy = (
        read_parquet(demo_copy / f"results/cloze/{name}/metrics.parquet") for name in ("mozart", "mozart_copy")
    )
    assert len(copy) == len(original) > 0
    pd.testing.assert_frame_equal(copy, original)
