"""The workflow itself: lint, and the offline demo end to end through Snakemake's command line."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import dry_run_jobs

from plmfair.io import read_parquet, read_parquet_meta

BIN = Path(sys.executable).parent


def snakemake(repo: Path, workdir: Path, *args: str, check: bool = True, configfile: Path | None = None,
              extra_configfiles: tuple[Path, ...] = (), mirror: Path | None = None,
              env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [
        str(BIN / "snakemake"),
        "--snakefile", str(repo / "Snakefile"),
        "--directory", str(workdir),
        "--configfile", str(configfile or repo / ".test" / "config" / "config.yaml"), *map(str, extra_configfiles),
        "--config", f"mirror={mirror or repo / '.test' / 'data'}",
        "--cores", "2",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}")
    return proc


@pytest.fixture(scope="module")
def demo_run(repo, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("demo")
    snakemake(repo, workdir)
    return workdir


def test_lint(repo, tmp_path):
    proc = snakemake(repo, tmp_path, "--lint", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_demo_ingestion_outputs(demo_run):
    ann = read_parquet(demo_run / "results/data/mozart/annotations.parquet")
    assert len(ann) == 4 * 48
    fr = read_parquet(demo_run / "results/data/crows_pairs/demo_fr.parquet")
    assert fr["sent_less"].isna().sum() == 1
    summary = pd.read_csv(demo_run / "results/tables/data_summary.csv")
    assert set(summary["dataset"]) == {"mozart", "crows_pairs/demo_en", "crows_pairs/demo_fr", "crows_pairs/demo_de"}


def test_demo_rerun_is_a_noop(repo, demo_run):
    proc = snakemake(repo, demo_run, "--dry-run")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_bad_config_value_stops_with_one_line(repo, tmp_path):
    proc = snakemake(repo, tmp_path, "--config", "mirror=x", "crows_pairs={'datasets': ['nope']}", "--dry-run", check=False)
    assert proc.returncode != 0
    assert "config error at crows_pairs.datasets.0: data set 'nope' is not declared" in proc.stdout + proc.stderr


def test_demo_crows_pairs_outputs(demo_run):
    scores = read_parquet(demo_run / "results/crows_pairs/demo_fr/tiny_bert.parquet")
    assert set(scores["status"]) >= {"ok", "skipped_missing", "skipped_identical"}
    table = pd.read_csv(demo_run / "results/tables/crows_pairs.csv")
    assert table.iloc[:5, 0].tolist() == ["Metric score", "Stereo score", "Anti-stereo score", "Run time (mm:ss)",
                                         "Pairs skipped"]
    for ext in ("md", "tex"):
        assert (demo_run / f"results/tables/crows_pairs.{ext}").stat().st_size > 0
        assert (demo_run / f"results/tables/crows_pairs_origin.{ext}").stat().st_size > 0
    assert (demo_run / "results/figures/crows_pairs.pdf").exists()


def test_demo_mozart_chain_all_three_families(demo_run):
    metrics = read_parquet(demo_run / "results/mozart/metrics.parquet")
    assert set(metrics["model"]) == {"tiny_bert", "tiny_xlmr", "tiny_mt5", "tiny_gpt2", "tiny_llama"}
    assert set(metrics["group"]) == {"MN", "FN", "MNN", "FNN", "all"}
    assert metrics.loc[(metrics["lang"] == "de") & (metrics["group"] == "all"), "n_empty"].eq(1).all()
    preds = read_parquet(demo_run / "results/mozart/predictions/tiny_mt5/fr.parquet")
    assert preds.groupby("s_id")["rank"].max().max() <= 20
    for name in ("table2_p_at_1", "table3_spearman", "table4_p_at_5", "table5_kendall"):
        assert (demo_run / f"results/tables/mozart_{name}_tiny_xlmr.tex").exists()
    assert (demo_run / "results/figures/mozart_mrr.png").exists()


def test_demo_cloze_construction_feeds_scoring(demo_run):
    sentences = read_parquet(demo_run / "results/cloze/demo/sentences.parquet")
    assert len(sentences) == 8 * 4 and sentences["text"].str.count(r"\[MASK\]").eq(1).all()
    tokens = {lang: read_parquet(demo_run / f"results/cloze/demo/tokens/{lang}.parquet") for lang in ("en", "de", "es", "fr")}
    for _, row in sentences.iterrows():
        tok = tokens[row["lang"]]
        word = tok[(tok["line"] == row["line"]) & (tok["token"] == row["token"])]
        assert word["text"].item() == row["true_mask"] and row["tag"] in {"NOUN", "VERB", "ADJ", "ADV"}
    # the demo corpus is aligned by its gold files (eflomal runs in the unit tests)
    for lang in ("de", "es", "fr"):
        meta = read_parquet_meta(demo_run / f"results/cloze/demo/alignments/{lang}.parquet")
        assert meta["alignment_source"].endswith(f"cloze_demo.en-{lang}.align")
    table = pd.read_csv(demo_run / "results/tables/cloze_construction.csv")
    assert table.loc[table["step"] == "sampled", ["en", "de", "es", "fr", "all"]].eq(8).all(axis=None)
    assert table.loc[table["step"] == "examined_lines", "all"].item() <= table.loc[table["step"] == "length", "all"].item()
    assert sorted(p.name for p in (demo_run / "results/cloze/demo/sheets/es").glob("*.csv")) == [
        "batch_001.csv", "batch_002.csv", "batch_003.csv"]
    for model in ("tiny_bert", "tiny_mt5"):
        preds = read_parquet(demo_run / f"results/cloze/demo/predictions/{model}/de.parquet")
        assert set(preds["s_id"]) == set(sentences["s_id"]) and preds["rank"].max() <= 10


def test_demo_alignment_quality_recomputed_from_its_links(demo_run, demo_data):
    """The AER table of the demo's eflomal step, recomputed here from the links it wrote and the
    demo's gold French alignments (Pharaoh, every link sure)."""
    quality = read_parquet(demo_run / "results/cloze/demo/alignment_quality.parquet")
    links = read_parquet(demo_run / "results/cloze/demo/gold_alignment_links.parquet")
    gold = set()
    for n, line in enumerate((demo_data / "cloze" / "cloze_demo.en-fr.align").read_text().splitlines(), start=1):
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
    table = pd.read_csv(demo_run / "results/tables/alignment_quality.csv")
    assert len(table) == 8 and "AER" in table.columns


def test_bitext_corpus_is_joined_aligned_and_sampled_by_the_workflow(repo, demo_run, tmp_path):
    """The demo corpus given as three X-English bitexts (fr-en in reverse order, a German line whose
    English is nowhere else, a repeated English line in es-en) goes through join, tokens, eflomal
    and the sample; every sampled sentence traces back to its line in each bitext."""
    import shutil

    import yaml

    data = repo / ".test" / "data" / "cloze"
    mirror = tmp_path / "mirror"
    shutil.copytree(repo / ".test" / "data", mirror)
    side = {lang: (data / f"cloze_demo.{lang}").read_text(encoding="utf-8").splitlines() for lang in ("en", "de", "es", "fr")}
    bitexts = {
        "de": (side["en"] + ["An English line only here ."], side["de"] + ["Eine Zeile ."]),
        "es": (side["en"] + [side["en"][0]], side["es"] + ["Otra traducción ."]),
        "fr": (side["en"][::-1], side["fr"][::-1]),
    }
    for lang, (pivot, other) in bitexts.items():
        (mirror / f"bi.{lang}-en.en").write_text("\n".join(pivot) + "\n", encoding="utf-8")
        (mirror / f"bi.{lang}-en.{lang}").write_text("\n".join(other) + "\n", encoding="utf-8")
    with open(repo / ".test" / "config" / "config.yaml") as fh:
        cfg = yaml.safe_load(fh)
    cfg["cloze"]["corpora"]["bitext"] = {
        "pivot": "en", "tokenized": True,
        "bitexts": {lang: {"pivot": {"file": f"bi.{lang}-en.en"}, "text": {"file": f"bi.{lang}-en.{lang}"}}
                    for lang in bitexts}}
    cfg["cloze"]["filters"] = {**cfg["cloze"]["filters"], "pos": ["NOUN", "VERB"]}
    cfg["cloze"]["sample"] = {**cfg["cloze"]["sample"], "n": 2}
    configfile = tmp_path / "bitext.yaml"
    configfile.write_text(yaml.safe_dump(cfg, allow_unicode=True))
    snakemake(repo, demo_run, "results/cloze/bitext/sentences.parquet", "--rerun-triggers", "mtime",
              configfile=configfile, mirror=mirror)
    joined = read_parquet(demo_run / "results/cloze/bitext/joined.parquet")
    distinct = len(dict.fromkeys(side["en"]))
    assert joined["line"].max() == distinct and "An English line only here ." not in set(joined["text"])
    sentences = read_parquet(demo_run / "results/cloze/bitext/sentences.parquet")
    assert len(sentences) == 2 * 4
    for row in sentences.itertuples():
        src = joined[(joined["line"] == row.line) & (joined["lang"] == row.lang)].iloc[0]
        original = bitexts[row.lang][1] if row.lang != "en" else bitexts["de"][0]
        assert original[src["source_line"] - 1] == src["text"]
        assert src["text"].split()[row.token] == row.true_mask
    counts = read_parquet(demo_run / "results/cloze/bitext/construction.parquet").set_index(["step", "lang"])["count"]
    assert counts[("bitext_repeats", "es")] >= 1 and counts[("joined", "all")] == distinct
    assert counts[("lines", "all")] == distinct


def test_demo_ingests_answers_to_a_constructed_set(repo, demo_run, tmp_path):
    """Answers in MozArt's JSONL format, returned for the constructed sentences, go through the workflow."""
    import json
    import shutil

    import yaml

    sentences = read_parquet(demo_run / "results/cloze/demo/sentences.parquet")
    es = sentences[sentences["lang"] == "es"]
    mirror = tmp_path / "mirror"
    shutil.copytree(repo / ".test" / "data", mirror)
    lines = [json.dumps({"s_id": s, "text": t, "mask": "perro", "u_id": f"u{i}", "male": i % 2, "female": 1 - i % 2,
                         "native": 1, "nonnative": 0}) for i, (s, t) in enumerate(zip(es["s_id"], es["text"], strict=True))]
    (mirror / "cloze_answers_es.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with open(repo / ".test" / "config" / "config.yaml") as fh:
        cfg = yaml.safe_load(fh)
    cfg["cloze"]["corpora"]["demo"]["answers"] = {"es": {"file": "cloze_answers_es.jsonl"}}
    configfile = tmp_path / "with_answers.yaml"
    configfile.write_text(yaml.safe_dump(cfg, allow_unicode=True))
    # only the new answers are missing: mtime triggers keep the rest of the demo as it is
    proc = snakemake(repo, demo_run, "results/cloze/demo/metrics.parquet", "results/cloze/demo/group_winloss.parquet",
                     "results/figures/cloze_demo_group_effects.png", "results/cloze/demo/breakdowns.parquet",
                     "results/figures/cloze_demo_breakdowns.png", "--rerun-triggers", "mtime",
                     configfile=configfile, mirror=mirror)
    assert "UNVERIFIED: cloze_answers_es.jsonl" in proc.stdout + proc.stderr
    ann = read_parquet(demo_run / "results/data/cloze/demo/annotations.parquet")
    assert len(ann) == len(es) and set(ann["group"]) == {"MN", "FN"}
    assert ann["true_mask"].tolist() == es["true_mask"].tolist()
    # and on to MozArt's metrics per model and group, for the language with answers
    metrics = read_parquet(demo_run / "results/cloze/demo/metrics.parquet")
    assert set(metrics["model"]) == {"tiny_bert", "tiny_mt5", "tiny_gpt2"} and set(metrics["lang"]) == {"es"}
    by_group = metrics[metrics["model"] == "tiny_bert"].set_index("group")["n"]
    assert by_group["all"] == len(es) and by_group["MN"] + by_group["FN"] == len(es) and by_group["MNN"] == 0
    assert (demo_run / "results/tables/cloze_demo_disparity.csv").exists()
    # and on to the group tests, as for MozArt
    wl = read_parquet(demo_run / "results/cloze/demo/group_winloss.parquet")
    mn_fn = wl[(wl["group_a"] == "MN") & (wl["group_b"] == "FN") & (wl["lang"] == "es")]
    assert set(mn_fn["model"]) == {"tiny_bert", "tiny_mt5", "tiny_gpt2"}
    assert (demo_run / "results/figures/cloze_demo_group_effects.pdf").exists()
    # and the breakdowns, with the constructed set's own POS tags
    bd = read_parquet(demo_run / "results/cloze/demo/breakdowns.parquet")
    pos = bd[(bd["attribute"] == "pos") & (bd["group"] == "all") & (bd["lang"] == "es") & (bd["model"] == "tiny_bert")]
    assert pos.set_index("bucket")["n"].to_dict() == es["tag"].value_counts().to_dict()
    assert (demo_run / "results/figures/cloze_demo_breakdowns.pdf").exists()


def planned_jobs(proc: subprocess.CompletedProcess) -> dict[str, set[str]]:
    """Rule -> the wildcards of every job a dry run plans."""
    jobs: dict[str, set[str]] = {}
    for rule, wildcards in dry_run_jobs(proc.stdout):
        jobs.setdefault(rule, set()).add(wildcards)
    return jobs


def test_demo_scores_causal_models_in_every_study(demo_run):
    summary = read_parquet(demo_run / "results/crows_pairs/summary.parquet")
    metric = summary[summary["subset"] == "metric"].set_index(["dataset", "model"])
    assert metric.loc[("demo_fr", "tiny_gpt2"), "protocol"] == "sentence_log_likelihood"
    assert metric.loc[("demo_fr", "tiny_bert"), "protocol"] == "nangia"
    # the German file, read through its config entry: one dropped translation, counted as skipped
    assert metric.loc[("demo_de", "tiny_llama"), "n_skipped"] == 1
    de = read_parquet(demo_run / "results/data/crows_pairs/demo_de.parquet")
    assert de["pair_id"].str.startswith("LA").sum() == 8 and de["bias_type"].notna().all()
    metrics = read_parquet(demo_run / "results/mozart/metrics.parquet")
    assert {"tiny_gpt2", "tiny_llama"} <= set(metrics["model"])  # every declared model that fits
    preds = read_parquet(demo_run / "results/cloze/demo/predictions/tiny_gpt2/es.parquet")
    assert read_parquet_meta(demo_run / "results/cloze/demo/predictions/tiny_gpt2/es.parquet")["model_family"] == "causal"
    assert preds.groupby("s_id")["logprob"].apply(lambda s: s.is_monotonic_decreasing).all()


def test_params_rerun_exactly_what_they_change(repo, demo_run, tmp_path):
    beams = tmp_path / "beams.yaml"
    beams.write_text("mozart:\n  num_beams: 3\ncloze:\n  num_beams: 5\n")
    jobs = planned_jobs(snakemake(repo, demo_run, "--dry-run", extra_configfiles=(beams,)))
    # beam settings rerun the beam-search families' jobs only, never a masked LM's
    assert {re.search(r"model=(\w+)", w).group(1) for w in jobs["mozart_score"]} == {"tiny_mt5", "tiny_gpt2",
                                                                                     "tiny_llama"}
    assert {re.search(r"model=(\w+)", w).group(1) for w in jobs["cloze_predict"]} == {"tiny_mt5", "tiny_gpt2"}
    assert "crows_pairs_score" not in jobs and "download" not in jobs
    # the mirror is where files are looked up, not what they are: moving it reruns nothing
    moved = tmp_path / "moved_mirror"
    shutil.copytree(repo / ".test" / "data", moved)
    proc = snakemake(repo, demo_run, "--dry-run", mirror=moved)
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_dag_is_built_without_torch(repo, tmp_path):
    """`snakemake -n` and `--lint` on the default configuration with torch and transformers unimportable."""
    blocked = tmp_path / "blocked"
    for name in ("torch", "transformers"):
        (blocked / name).mkdir(parents=True)
        (blocked / name / "__init__.py").write_text(f"raise ImportError('{name} is blocked for this test')\n")
    env = {**os.environ, "PYTHONPATH": str(blocked)}
    proc = snakemake(repo, tmp_path / "work", "--dry-run", configfile=repo / "config" / "config.yaml", env=env)
    jobs = planned_jobs(proc)
    assert {"crows_pairs_score", "mozart_score", "cloze_predict"} <= set(jobs)
    assert any("model=gpt2" in w for w in jobs["crows_pairs_score"])
    lint = snakemake(repo, tmp_path / "work", "--lint", configfile=repo / "config" / "config.yaml", env=env,
                     check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_demo_breakdowns_partition_the_scores(demo_run):
    scores = read_parquet(demo_run / "results/mozart/annotation_scores.parquet")
    bd = read_parquet(demo_run / "results/mozart/breakdowns.parquet")
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


def test_demo_report_holds_every_figure_and_table(demo_run, repo):
    snakemake(repo, demo_run, "--report", "results/report.html")
    html = (demo_run / "results" / "report.html").read_text(encoding="utf-8")
    # the figures and tables of this configuration's DAG (another test adds a constructed set's)
    summary = snakemake(repo, demo_run, "--summary").stdout.splitlines()
    outputs = [line.split("\t")[0] for line in summary if line.startswith("results/")]
    figures = [Path(o).name for o in outputs if o.startswith("results/figures/") and o.endswith(".png")]
    tables = [Path(o).stem for o in outputs if o.startswith("results/tables/") and o.endswith(".csv")]
    assert len(figures) >= 7 and len(tables) >= 20
    for name in figures:
        assert name in html, name
    for name in tables:
        assert f"{name}.html" in html, name
    tables = sorted((demo_run / "results" / "report_tables").glob("*/*.html"))
    assert {t.parent.name for t in tables} >= {"crows_pairs", "mozart", "models", "data"}
    models = (demo_run / "results" / "report_tables" / "models" / "models.html").read_text(encoding="utf-8")
    assert "<table" in models and "tiny_bert" in models and "WordPiece" in models


def test_demo_models_table_and_tsne(demo_run):
    models = read_parquet(demo_run / "results/models.parquet").set_index("model")
    assert models["model_parameters"].gt(0).all() and set(models["model_family"]) == {"mlm", "seq2seq", "causal"}
    summary = read_parquet(demo_run / "results/crows_pairs/summary.parquet")
    metrics = read_parquet(demo_run / "results/mozart/metrics.parquet")
    for frame in (summary, metrics):  # model metadata next to every score
        for model, n in frame.groupby("model")["model_parameters"].first().items():
            assert n == models.loc[model, "model_parameters"]
    coords = read_parquet(demo_run / "results/mozart/tsne.parquet")
    assert set(coords["s_id"]) == {"1", "5"} and set(coords["lang"]) == {"en", "es", "de", "fr"}
    assert coords.groupby(["model", "s_id", "lang"]).size().le(40).all() and coords[["x", "y"]].notna().all().all()
    assert (demo_run / "results/figures/mozart_tsne.png").stat().st_size > 0


def test_demo_group_and_language_tests(demo_run):
    scores = read_parquet(demo_run / "results/mozart/annotation_scores.parquet")
    metrics = read_parquet(demo_run / "results/mozart/metrics.parquet").set_index(["model", "lang", "group"])
    # the metrics are the means of the annotation scores
    for (model, lang), g in scores.groupby(["model", "lang"]):
        assert metrics.loc[(model, lang, "all"), "mrr"] == pytest.approx(100 * g["rr"].mean())
        assert metrics.loc[(model, lang, "all"), "n"] == len(g)
    wl = read_parquet(demo_run / "results/mozart/group_winloss.parquet")
    # 6 pairs of groups x (4 languages + pooled) x 2 metrics per model
    assert wl.groupby("model").size().eq(6 * 5 * 2).all()
    effects = read_parquet(demo_run / "results/mozart/group_effects.parquet")
    assert {"Intercept", "group[T.FN]", "group[T.MNN]", "group[T.FNN]", "lang[T.es]"} <= set(effects["term"])
    table1 = pd.read_csv(demo_run / "results/tables/mozart_table1.csv")
    assert table1.iloc[:3, 0].tolist() == ["Sentences", "Annotations", "Annotators"] and table1.loc[1, "EN"] == 48
    assert "Tokens per sentence (tiny_llama)" in set(table1.iloc[:, 0])
    lw = read_parquet(demo_run / "results/crows_pairs/language_winloss.parquet")
    assert set(lw["model"]) == {"tiny_bert", "tiny_xlmr", "tiny_gpt2", "tiny_llama"} and len(lw) == 4 * 3
    le = read_parquet(demo_run / "results/crows_pairs/language_effects.parquet")
    assert set(le.loc[le["term"] != "Intercept", "term"]) == {"dataset[T.demo_fr]", "dataset[T.demo_de]"}
    for name in ("mozart_group_winloss.md", "mozart_group_effects.tex", "crows_pairs_language_winloss.md"):
        assert (demo_run / "results/tables" / name).stat().st_size > 0


def test_demo_is_deterministic(repo, demo_run, tmp_path):
    """The demo run again from scratch gives the same Parquet data, every column but wall times."""
    again = tmp_path / "again"
    snakemake(repo, again)
    files = sorted(p.relative_to(again) for p in (again / "results").rglob("*.parquet"))
    assert len(files) >= 80  # data, tokens, alignments, scores, predictions, metrics, tests
    # eflomal seeds itself from the system: the alignment-quality outputs are random by design
    random = {"alignment_quality.parquet", "gold_alignment_links.parquet"}
    for rel in files:
        if rel.name in random:
            continue
        first, second = read_parquet(demo_run / rel), read_parquet(again / rel)
        timing = [c for c in first.columns if c == "wall_time_s"]
        pd.testing.assert_frame_equal(first.drop(columns=timing), second.drop(columns=timing), check_exact=True,
                                      obj=str(rel))
