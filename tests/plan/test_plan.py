"""The study plan: which jobs a configuration asks for, and its cross-checks (torch-free)."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import yaml
from conftest import rule_bodies

from plmfair import plan
from plmfair.cloze import plan as cloze_plan
from plmfair.cloze.construction import plan as construction_plan
from plmfair.config import validate_config
from plmfair.crows_pairs import plan as crows_pairs_plan
from plmfair.errors import ConfigError
from plmfair.plan.downloads import download_entries
from plmfair.plan.model_runs import models_in_use
from plmfair.plan.targets import figures as figure_names
from plmfair.scoring.model_settings import hub_models, hub_store_names, model_manifest, study_models

MODELS = {
    "mbert": {"hf_id": "m/bert", "family": "mlm"},
    "camembert": {"hf_id": "m/camembert", "family": "mlm", "languages": ["fr"]},
    "mt5": {"hf_id": "m/mt5", "family": "seq2seq"},
    "gpt2": {"hf_id": "m/gpt2", "family": "causal", "languages": ["en"]},
    "german": {"hf_id": "m/gbert", "family": "mlm", "languages": ["de"]},
}


@pytest.fixture()
def config(repo):
    """A small valid config: MozArt in four languages, CrowS-Pairs in English and French."""
    cfg = {
        "datasets": {
            "cloze_tests": {"mozart": {"file": "MozArt.zip", "languages": ["en", "fr"]}},
            "crows_pairs": {
                "en": {"file": "en.csv", "lang": "en", "format": "nyu"},
                "fr": {"file": "fr.csv", "lang": "fr", "format": "inria"},
                "de": {"file": "de.csv", "lang": "de", "format": "nyu"},
            },
        },
        "models": copy.deepcopy(MODELS),
        "crows_pairs": {"datasets": ["en", "fr"]},
    }
    return validate_config(cfg)


def runs(config, cloze_set):
    """(model, language) pairs a cloze set is scored on."""
    return [
        (m, lang)
        for m in cloze_plan.cloze_set_models(config, cloze_set)
        for lang in cloze_plan.cloze_set_langs(config, cloze_set, m)
    ]


def test_default_model_lists_take_every_model_that_fits(config):
    # seq2seq has no CrowS-Pairs protocol; the German model meets no language of the studies
    assert study_models(config, "mozart") == ["mbert", "camembert", "mt5", "gpt2"]
    assert study_models(config, "crows_pairs") == ["mbert", "camembert", "gpt2"]
    assert crows_pairs_plan.crows_pairs_jobs(config) == [
        ("en", "mbert"),
        ("en", "gpt2"),
        ("fr", "mbert"),
        ("fr", "camembert"),
    ]
    assert runs(config, "mozart") == [
        ("mbert", "en"),
        ("mbert", "fr"),
        ("camembert", "fr"),
        ("mt5", "en"),
        ("mt5", "fr"),
        ("gpt2", "en"),
    ]
    assert models_in_use(config) == ["mbert", "camembert", "mt5", "gpt2"]


def test_explicit_list_wins_and_still_respects_languages(config):
    config["mozart"]["models"] = ["camembert"]
    config["crows_pairs"]["models"] = ["gpt2"]
    assert runs(config, "mozart") == [("camembert", "fr")]
    assert crows_pairs_plan.crows_pairs_jobs(config) == [("en", "gpt2")]
    config["mozart"]["models"] = []
    assert runs(config, "mozart") == [] and cloze_plan.answered_sets(config) == []


def test_protocol_beams_and_precision_only_where_they_change_a_result(config):
    config["crows_pairs"]["protocol"] = "all_tokens"
    assert crows_pairs_plan.crows_pairs_protocol(config, "mbert") == "all_tokens"
    assert crows_pairs_plan.crows_pairs_protocol(config, "gpt2") == "sentence_log_likelihood"
    config["mozart"]["num_beams"] = 7
    config["cloze"]["num_beams"] = 3
    assert plan.num_beams(config, "mbert", "mozart") is None
    assert plan.num_beams(config, "mt5", "mozart") == 7 and plan.num_beams(config, "gpt2", "mozart") == 7
    assert plan.num_beams(config, "gpt2", "cloze") == 3
    config["models"]["gpt2"]["precision"] = "bf16"
    assert cloze_plan.cloze_set_scoring(config, "mozart", "gpt2") == {
        "langs": ["en"],
        "top_k": 100,
        "num_beams": 7,
        "precision": "bf16",
    }
    assert cloze_plan.cloze_set_scoring(config, "mozart", "mbert")["precision"] == "fp32"


def test_cloze_sets_of_the_demo(repo):
    with open(repo / ".test" / "config" / "config.yaml") as fh:
        cfg = validate_config(yaml.safe_load(fh))
    sets = cloze_plan.cloze_sets(cfg)
    assert list(sets) == ["mozart", "demo"] and sets["demo"].constructed and not sets["mozart"].constructed
    assert sets["demo"].langs == ("en", "de", "es", "fr") == sets["demo"].answered
    assert cloze_plan.cloze_set_models(cfg, "demo") == ["tiny_bert", "tiny_mt5", "tiny_gpt2"]
    del cfg["cloze"]["corpora"]["demo"]["answers"]["fr"]
    assert cloze_plan.cloze_sets(cfg)["demo"].answered == ("en", "de", "es")
    cfg["cloze"]["corpora"]["demo"]["answers"] = {}
    assert cloze_plan.answered_sets(cfg) == ["mozart"] and len(runs(cfg, "demo")) == 3 * 4
    # MozArt is one ready-made cloze test: switched off, its set, its t-SNE maps and its download go
    cfg["datasets"]["cloze_tests"]["mozart"]["enabled"] = False
    assert "mozart" not in cloze_plan.cloze_sets(cfg) and cloze_plan.tsne_sets(cfg) == []
    assert "MozArt.zip" not in {entry["file"] for entry in plan.active_downloads(cfg).values()}


def test_schema_enums_match_the_registries(repo):
    from plmfair.config import config_schema
    from plmfair.scoring import FAMILIES
    from plmfair.scoring.protocols import PROTOCOLS

    schema = config_schema()
    models = schema["properties"]["models"]["additionalProperties"]["properties"]
    assert set(models["family"]["enum"]) == set(FAMILIES)
    # crows_pairs.protocol is checked against the protocol registry itself (plmfair.config), not an enum;
    # a family with one protocol has it fixed
    assert "enum" not in schema["properties"]["crows_pairs"]["properties"]["protocol"]
    assert all(PROTOCOLS[f.protocol].family == f.name for f in FAMILIES.values() if f.protocol)
    assert {p.family for p in PROTOCOLS.values()} <= set(FAMILIES)
    # the tiny models the demo and the tests build (plmfair_demo, outside the library)
    from plmfair_demo import TINY_KINDS

    assert set(models["build"]["properties"]["kind"]["enum"]) == set(TINY_KINDS)


def test_plan_and_config_import_without_torch(repo, tmp_path):
    """Building the DAG must not need a model library: with torch and transformers made
    unimportable, the plan of the default config is still computed."""
    for name in ("torch", "transformers"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise ImportError('{name} is blocked for this test')\n")
    code = (
        "import yaml, sys\n"
        "from plmfair.config import validate_config\n"
        "from plmfair import plan\n"
        "from plmfair.crows_pairs import plan as crows_pairs_plan\n"
        f"cfg = validate_config(yaml.safe_load(open({str(repo / 'config' / 'config.yaml')!r})))\n"
        "from plmfair.plan.model_runs import models_in_use\n"
        "print(len(crows_pairs_plan.crows_pairs_jobs(cfg)), len(models_in_use(cfg)), len(plan.drawn_figures(cfg)))\n"
        "assert 'torch' not in sys.modules or not hasattr(sys.modules['torch'], 'Tensor')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    with open(repo / "config" / "config.yaml") as fh:
        cfg = validate_config(yaml.safe_load(fh))
    expected = [crows_pairs_plan.crows_pairs_jobs(cfg), models_in_use(cfg), plan.drawn_figures(cfg)]
    assert proc.stdout.split() == [str(len(x)) for x in expected]


def test_hub_models_are_fetched_into_folders_named_by_what_is_fetched_and_path_models_stay_where_they_are(config):
    """A model is its content, not its name: the fetched folder is named by id, revision and pickle
    setting, so two runs giving one name to two revisions never share a folder, and two names for one
    id and revision do; a built model lives in the run's own results; manifests are the run's own."""
    config = copy.deepcopy(config)
    config["models"]["mine"] = {"path": "/data/mine", "family": "mlm"}
    mbert = config["models"]["mbert"]
    config["models"]["alias"] = dict(mbert)
    config["models"]["pinned"] = {**mbert, "revision": "refs/pr/5"}
    config["models"]["pickled"] = {**mbert, "allow_pickle": True}
    config["models"]["tiny"] = {"family": "mlm", "build": {"kind": "bert"}}
    hub = hub_models(config)
    assert "mbert" in hub and "mine" not in hub
    owner, repo_name = mbert["hf_id"].split("/")
    assert plan.model_folder(config, "mbert") == f"results/models/{owner}--{repo_name}@default"
    assert plan.model_folder(config, "alias") == plan.model_folder(config, "mbert")
    assert plan.model_folder(config, "pinned") == f"results/models/{owner}--{repo_name}@refs--pr--5"
    assert plan.model_folder(config, "pickled") == f"results/models/{owner}--{repo_name}@default+pickle"
    assert hub_store_names(config, f"{owner}--{repo_name}@default") == "mbert|alias"
    assert plan.hub_fetch(config, f"{owner}--{repo_name}@refs--pr--5")["revision"] == "refs/pr/5"
    assert plan.model_folder(config, "mine") == "/data/mine"
    assert plan.model_folder(config, "tiny") == "results/models/tiny"
    assert model_manifest("mine") == "results/manifests/mine.json"


def test_spacy_packages_of_enabled_corpora_only(repo):
    with open(repo / "config" / "config.yaml") as fh:
        config = validate_config(yaml.safe_load(fh))
    assert construction_plan.spacy_packages(config) == {
        "de": "de_core_news_sm",
        "en": "en_core_web_sm",
        "es": "es_core_news_sm",
        "fr": "fr_core_news_sm",
    }
    off = copy.deepcopy(config)
    off["cloze"]["enabled"] = False
    assert construction_plan.spacy_packages(off) == {}
    local = copy.deepcopy(config)
    local["cloze"]["spacy"]["de"] = "/models/de_pipeline"
    assert "de" not in construction_plan.spacy_packages(local)


def test_missing_pipelines_are_installed_and_offline_gives_the_command():
    from plmfair.pipelines import install_pipelines

    asked = []
    assert install_pipelines({"xx": "xx_no_such_pipeline"}, download=lambda n: asked.append(n) or True) == [
        "xx_no_such_pipeline"
    ]
    assert asked == ["xx_no_such_pipeline"]
    with pytest.raises(
        ConfigError,
        match=r"Where there is network, run: \S+python\S* -m pip install https://github.com/"
        r"explosion/spacy-models/releases/download/xx_no_such_pipeline-3.8.0/",
    ):
        install_pipelines({"xx": "xx_no_such_pipeline"}, download=lambda n: False)


def test_conda_envs_install_plmfair_extras_at_the_pins_of_the_requirements(repo):
    import tomllib

    extras = tomllib.loads((repo / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pins = dict(
        line.split("==")
        for line in (repo / "envs" / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    pins = {name.lower().replace("_", "-"): version for name, version in pins.items()}
    conda_names = {"pytorch": "torch", "pyyaml": "pyyaml"}
    used = set()
    for env in sorted((repo / "envs").glob("*.yaml")):
        deps = yaml.safe_load(env.read_text())["dependencies"]
        pip = next(d["pip"] for d in deps if isinstance(d, dict))
        extra = [p for p in pip if p.startswith("..")]
        assert len(extra) == 1, f"{env.name}: installs plmfair once, with its extra"
        name = extra[0].removeprefix("..[").removesuffix("]")
        assert name in extras, f"{env.name}: extra {name!r} is not in pyproject.toml"
        used.add(name)
        for dep in [d for d in deps if isinstance(d, str) and "=" in d and not d.startswith("python=")]:
            pkg, version = dep.split("=")
            pkg = conda_names.get(pkg, pkg).replace("_", "-")
            assert pins.get(pkg) == version, f"{env.name}: {dep} differs from envs/requirements.txt ({pins.get(pkg)})"
    assert used == {"hub", "models", "cloze", "stats"}


def test_imports_run_one_way():
    """config validates against the plan; the plan never imports config (no import circle)."""
    code = "import sys, plmfair.plan; print('plmfair.config' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"


def test_downloads_are_every_entry_with_a_file_wherever_it_is(config):
    config["cloze"]["corpora"]["c"] = {
        "pivot": "en",
        "text": {"en": {"file": "c.en"}, "fr": {"file": "c.fr"}},
        "gold_alignments": {"g": {"lang": "fr", "links": {"file": "g.talp"}, "sentences": {"file": "g.txt"}}},
    }
    where = download_entries(config)
    assert {
        "datasets.cloze_tests.mozart",
        "datasets.crows_pairs.en",
        "cloze.corpora.c.text.fr",
        "cloze.corpora.c.gold_alignments.g.links",
    } <= set(where)
    assert "datasets.crows_pairs.de" not in plan.active_downloads(config)  # declared, not scored
    config["elsewhere"] = {"file": "x.csv"}
    with pytest.raises(ConfigError, match="config error at elsewhere: plmfair does not know what uses a download"):
        plan.active_downloads(config)


@pytest.fixture()
def demo(repo):
    """The demo's configuration with the bitext corpus."""
    from plmfair.config import load_config

    return load_config([repo / ".test" / "config" / "config.yaml", repo / ".test" / "config" / "bitext.yaml"])


def test_alignment_route_reads_only_what_its_route_uses(demo):
    pharaoh = construction_plan.alignment_route(demo, "demo", "fr")
    assert (pharaoh.kind, pharaoh.pivot, list(pharaoh.downloads)) == ("pharaoh", "en", ["pharaoh"])
    assert pharaoh.settings == {"langs": ["en", "fr"], "pharaoh_member": None} and pharaoh.pipelines == ()
    corpus = demo["cloze"]["corpora"]["demo"]
    del corpus["alignments"]["fr"]
    alone = construction_plan.alignment_route(demo, "demo", "fr")
    assert alone.kind == "eflomal" and alone.downloads == {} and "symmetrisation" in alone.settings
    assert "pharaoh_member" not in alone.settings and "extra_lines" not in alone.settings
    corpus["align_extra"] = {
        "fr": {"pivot": {"file": "x.en", "member": None}, "text": {"file": "x.fr", "member": None}}
    }
    extra = construction_plan.alignment_route(demo, "demo", "fr")
    assert extra.kind == "eflomal_extra" and list(extra.downloads) == ["extra_pivot", "extra_text"]
    assert extra.settings["extra_members"] == [None, None] and extra.settings["tokenized"] is True
    assert extra.pipelines == ()  # tokenized lines need no tokenizer
    corpus["tokenized"] = False
    assert [p.lang for p in construction_plan.alignment_route(demo, "demo", "fr").pipelines] == ["en", "fr"]


def test_spacy_pipelines_built_named_or_folders(demo):
    built = construction_plan.spacy_pipeline(demo, "fr")
    assert built.built and built.package is None and built.lexicon["file"]
    demo["cloze"]["spacy"]["fr"] = "fr_core_news_sm"
    assert construction_plan.spacy_pipeline(demo, "fr").package == "fr_core_news_sm"
    demo["cloze"]["spacy"]["fr"] = "pipelines/fr"
    assert (
        construction_plan.spacy_pipeline(demo, "fr").package is None
        and not construction_plan.spacy_pipeline(demo, "fr").built
    )


def test_gold_sets_name_their_downloads_and_settings(demo):
    gold = construction_plan.gold_sets(demo, "demo")["demo_fr"]
    assert gold.lang == "fr" and set(gold.files) == {"sentences", "pivot_sentences", "links"}
    reading = construction_plan.gold_readings(demo, "demo")["demo_fr"]
    assert reading["format"] == "pharaoh" and reading["files"]["links"] == {
        "file": "cloze_demo.en-fr.align",
        "member": None,
    }
    assert construction_plan.gold_langs(demo, "demo") == ["en", "fr"] and construction_plan.gold_corpora(demo) == [
        "demo"
    ]


def test_corpus_records(demo):
    text, joined = construction_plan.corpus(demo, "demo"), construction_plan.corpus(demo, "bitext")
    assert not text.joined and text.text("de")["file"] == "cloze_demo.de" and text.bitexts() == {}
    assert joined.joined and joined.text("de") is None and set(joined.bitexts()) == {"de", "es", "fr"}
    assert construction_plan.text_reading(demo, "bitext", "de") == {"member": None, "tokenized": True}
    join = construction_plan.bitext_join(demo, "bitext")
    assert join["pivot"] == "en" and join["duplicates"] == "first" and set(join["members"]) == {"de", "es", "fr"}
    assert list(construction_plan.corpus(demo, "demo").answers()) == ["en", "de", "es", "fr"]
    assert not construction_plan.corpus(demo, "bitext").answers()


def test_scoring_jobs_get_what_loads_the_model_and_nothing_else(demo):
    demo["models"]["tiny_bert"].update(licence="MIT", pretraining_data="a few sentences", gpus=2)
    loading = plan.model_loading(demo, "tiny_bert")
    assert loading == {
        "name": "tiny_bert",
        "path": "results/models/tiny_bert",
        "family": "mlm",
        "uncased": True,
        "allow_pickle": False,
    }
    assert plan.model_gpus(demo, "tiny_bert") == 2
    assert plan.workflow_managed(demo, "tiny_bert") and plan.tiny_model_build(demo, "tiny_bert")["kind"] == "bert"
    assert plan.model_run_files(demo) == {
        "tiny_bert": "results/crows_pairs/demo_en/tiny_bert.parquet",
        "tiny_gpt2": "results/crows_pairs/demo_en/tiny_gpt2.parquet",
        "tiny_mt5": "results/cloze/mozart/predictions/tiny_mt5.parquet",
    }


def test_crows_pairs_languages_of_the_scored_sets_only(config):
    assert crows_pairs_plan.crows_pairs_langs(config) == {"en": "en", "fr": "fr"}  # de is declared, not scored
    assert crows_pairs_plan.crows_pairs_reading(config, "fr") == {"lang": "fr", "format": "inria"} | {
        k: v for k, v in config["datasets"]["crows_pairs"]["fr"].items() if k not in ("file", "url", "sha256")
    }


def test_the_model_comparison_table_only_where_two_models_share_a_data_set(config):
    """crows_pairs_mcnemar compares two models pair by pair: a run of one model on its data sets
    makes no such (empty) table; its Parquet file is still the summary job's."""
    config["crows_pairs"]["models"] = ["german", "mbert"]  # German on de only, mBERT on every language
    config["crows_pairs"]["datasets"] = ["en", "de"]
    assert crows_pairs_plan.crows_pairs_jobs(config) == [("en", "mbert"), ("de", "german"), ("de", "mbert")]
    assert "crows_pairs_mcnemar" in plan.tables(config)
    config["crows_pairs"]["models"] = ["mbert"]
    assert "crows_pairs_mcnemar" not in plan.tables(config) and "crows_pairs_tests" in plan.tables(config)
    assert "results/crows_pairs/mcnemar.parquet" in plan.published_files(config)


def test_tables_and_figures_of_the_demo(demo):
    tables = plan.tables(demo)
    assert {
        "data_summary",
        "models",
        "crows_pairs",
        "crows_pairs_origin",
        "crows_pairs_mcnemar",
        "crows_pairs_language_winloss",
        "mozart_table1",
        "demo_table5_kendall",
        "demo_group_tests",
        "demo_construction",
        "bitext_construction",
        "demo_alignment_quality",
        "crows_pairs_tests",
        "crows_pairs_verdicts",
        "demo_group_gaps",
        "demo_disparity",
        "hypotheses",
    } <= set(tables)
    assert tables["demo_disparity"].inputs == {
        "disparity": "results/cloze/demo/group_disparity.parquet",
        "hypotheses": "results/hypotheses.parquet",
    }
    assert tables["hypotheses"].category == "Hypotheses"
    assert "bitext_table1" not in tables and "bitext_alignment_quality" not in tables  # no answers, no gold
    t2 = tables["mozart_table2_p_at_1"]
    assert t2.inputs == {"metrics": "results/cloze/mozart/metrics.parquet"} and t2.category == "MozArt"
    assert t2.options == {"metric": "p_at_1", "alpha": 0.05} and t2.caption.startswith("mozart: MozArt Table 2 (P@1)")
    assert (
        tables["demo_group_effects"].category == "Cloze set demo"
        and "alpha" not in tables["demo_group_effects"].options
    )
    assert "no test and no interval" in tables["demo_group_effects"].caption
    assert "Benjamini-Yekutieli" in tables["demo_group_gaps"].caption  # every marked table says the policy
    assert tables["crows_pairs"].rendering()["label"] == "tab:crows_pairs"
    assert tables["models"].category == "Data and models" == tables["data_summary"].category
    assert plan.caption_models(demo, "models") == ["tiny_bert", "tiny_gpt2", "tiny_mt5"]
    assert plan.caption_models(demo, "crows_pairs") == []
    assert set(figure_names(demo)) == {
        "crows_pairs",
        "crows_pairs_specification_curve",
        "crows_pairs_breakdowns",
        "crows_pairs_language_effects",
        "mozart_mrr",
        "mozart_group_effects",
        "mozart_breakdowns",
        "demo_mrr",
        "demo_group_effects",
        "demo_breakdowns",
        "mozart_tsne",
    }
    # another ready-made test gets MozArt's figures, and its maps when mozart.tsne.sets names it
    demo["datasets"]["cloze_tests"]["copy"] = dict(demo["datasets"]["cloze_tests"]["mozart"], file="copy.zip")
    figures = set(figure_names(demo))
    assert {"copy_mrr", "copy_group_effects", "copy_breakdowns"} <= figures and "copy_tsne" not in figures
    demo["mozart"]["tsne"]["sets"] = ["mozart", "copy"]
    assert {"mozart_tsne", "copy_tsne"} <= set(figure_names(demo))
    demo["mozart"]["tsne"]["sentences"] = []
    demo["crows_pairs"]["datasets"] = ["demo_fr"]
    assert {"mozart_tsne", "crows_pairs_language_effects"}.isdisjoint(figure_names(demo))
    assert "crows_pairs_language_winloss" not in plan.tables(demo)


def test_two_tables_of_one_name_are_refused(demo, monkeypatch):
    """A table made for a subject can meet a study-wide table of the same name (a corpus named after
    it); the plan refuses rather than let one overwrite the other."""
    from plmfair.plan import targets
    from plmfair.rendering.table_spec import TableSpec

    clash = TableSpec(
        "demo_construction",
        "data",
        "plmfair.rendering.table_format:long_table",
        {"table": "results/data/summary.parquet"},
        "x",
    )
    monkeypatch.setattr(targets, "SHARED_TABLES", (*targets.SHARED_TABLES, clash))
    with pytest.raises(
        ConfigError,
        match="two tables would be written to results/tables/demo_construction; rename the data set or corpus 'demo'",
    ):
        plan.tables(demo)


def test_downloads_name_their_source_not_the_mirror(demo):
    assert plan.download_source(demo, "MozArt.zip") == {
        "url": None,
        "sha256": demo["datasets"]["cloze_tests"]["mozart"]["sha256"],
    }
    assert construction_plan.spacy_lexicon(demo, "fr")["file"] and construction_plan.corpus(demo, "demo").answers()[
        "en"
    ]["file"].endswith(".jsonl")


def test_output_registry_is_consistent():
    """Every table names a builder that takes its inputs and a known kind of subject; every caption and
    name formats; every figure's subjects are known."""
    import inspect

    from plmfair.plan.targets import all_figures, all_tables
    from plmfair.registry import load_function
    from plmfair.studies import STUDIES

    SUBJECTS = {"data", "models", "hypotheses"} | {
        kind for study in STUDIES.values() for kind in study.outputs.subjects
    }
    TABLES, FIGURES = list(all_tables().values()), all_figures()
    names = [spec.name for spec in TABLES]
    assert len(names) == len(set(names))
    for spec in TABLES:
        builder = load_function(spec.builder)
        params = inspect.signature(builder).parameters
        assert set(spec.inputs) | set(spec.options) | set(spec.builder_settings) <= set(params), spec.name
        assert spec.subjects in SUBJECTS and set(spec.builder_settings) <= set(spec.settings)
        spec.caption.format(subject="x", **{k: 0.05 for k in spec.settings})
        assert ("{subject}" in spec.name) == (
            spec.subjects in ("answered_sets", "robust_sets", "corpora", "gold_corpora")
        )
    assert {spec.subjects for spec in FIGURES.values()} <= set(SUBJECTS)
    for spec in FIGURES.values():  # each figure's drawer takes its inputs, its options and its settings by name
        if spec.drawer:
            params = inspect.signature(load_function(spec.drawer)).parameters
            assert set(spec.inputs) | set(spec.options) | set(spec.settings) | {"png", "pdf"} <= set(params), spec.name
        spec.caption.format(subject="x")
    with pytest.raises(ConfigError, match=r"unknown figure 'crows_pair' \(did you mean 'crows_pairs'\?\)"):
        FIGURES.get("crows_pair")


def test_planning_a_survey_builds_each_models_spec_a_bounded_number_of_times(monkeypatch):
    """1,000 models x 10 data sets planned in 126 s: every per-job plan call built every model's spec
    (a million specs); later each fetch job named every model's Hub folder (a million names). Now each spec
    and folder is made a bounded number of times whatever the models (timed by make bench-plan, not here),
    and a changed configuration is never served old specs or folders."""
    from collections import Counter

    from plmfair.scoring import model_settings
    from plmfair.scoring import specs as model_module

    calls: Counter = Counter()
    real = model_module.model_spec

    def counting(name, entry):
        calls[name] += 1
        return real(name, entry)

    monkeypatch.setattr(model_module, "model_spec", counting)
    monkeypatch.setattr(model_settings, "model_spec", counting)
    sets = {f"s{d}": {"file": f"s{d}.csv", "lang": "en"} for d in range(10)}
    config = validate_config(
        {
            "models": {f"m{i}": {"hf_id": f"o/m{i}", "family": "mlm"} for i in range(60)},
            "datasets": {"crows_pairs": sets},
            "crows_pairs": {"datasets": list(sets)},
            "mozart": {"enabled": False},
            "cloze": {"enabled": False},
        }
    )
    calls.clear()
    for _, model in crows_pairs_plan.crows_pairs_jobs(config):
        crows_pairs_plan.crows_pairs_protocol(config, model)
        plan.model_loading(config, model)
    crows_pairs_plan.crows_pairs_language_jobs(config)
    plan.tables(config)
    assert len(crows_pairs_plan.crows_pairs_jobs(config)) == 600 and max(calls.values()) <= 12
    # each model's fetch job finds its Hub folder: its entry's folder named once, not once per model per job
    folders: Counter = Counter()
    real_store = model_settings.hub_store
    monkeypatch.setattr(
        model_settings, "hub_store", lambda entry: folders.update([entry["hf_id"]]) or real_store(entry)
    )
    fetched = [plan.hub_fetch(config, real_store(entry))["hf_id"] for entry in config["models"].values()]
    assert fetched == [f"o/m{i}" for i in range(60)] and max(folders.values()) <= 2
    config["models"]["m0"]["family"] = "causal"
    config["models"]["m1"]["hf_id"] = "o/other"
    assert plan.model_specs(config)["m0"].family == "causal"
    assert plan.hub_fetch(config, "o--other@default")["hf_id"] == "o/other"


def test_scripts_get_their_jobs_as_named_mappings(repo):
    """A job and its file travel together (crows_pairs_plan.crows_pairs_runs, cloze_plan.cloze_set_runs, files by
    language): no script pairs a params list with an input list by position."""
    import re

    for script in sorted((repo / "workflow" / "scripts").glob("*.py")):
        text = script.read_text()
        assert not re.search(r"\bzip\([^)]*snakemake\.(params|input)", text), script.name


def test_job_records_carry_their_files():
    assert crows_pairs_plan.crows_pairs_runs([("fr", "m")]) == [
        {"dataset": "fr", "model": "m", "scores": "results/crows_pairs/fr/m.parquet"}
    ]


def test_figure_categories_come_from_the_plan(repo):
    """The report files a figure under its study, as the plan says (no category written in a rule)."""
    import re

    with open(repo / ".test" / "config" / "config.yaml") as fh:
        demo = validate_config(yaml.safe_load(fh))
    drawn = plan.drawn_figures(demo)
    assert drawn["crows_pairs"].category == drawn["crows_pairs_language_effects"].category == "CrowS-Pairs"
    assert drawn["mozart_mrr"].category == "MozArt" and drawn["demo_mrr"].category == "Cloze set demo"
    assert "mozart_tsne" not in drawn and "mozart_tsne" in figure_names(demo)  # its own job draws it
    assert plan.report_category("tsne", "mozart") == "MozArt" and plan.report_category("data") == "Data and models"
    for path in (repo / "workflow" / "rules").glob("*.smk"):
        assert not re.search(r'\bcategory="', path.read_text()), path.name


def test_no_study_name_in_a_string_comparison_outside_the_registry(repo):
    """The plan, the families, the rules and the scripts ask plmfair.studies what a study is and does;
    none compares a name with a study's (the switches a new study would have to find and extend)."""
    import re

    from plmfair.studies import STUDIES

    names = "|".join(STUDIES)
    compared = re.compile(rf'(==|!=)\s*"({names})"|"({names})"\s*(==|!=)|startswith\("({names})')
    files = [*(repo / "src").rglob("*.py"), *(repo / "workflow").rglob("*.smk"), *(repo / "workflow").rglob("*.py")]
    found = [
        f"{path.name}: {m.group(0)}"
        for path in files
        if path.name != "studies.py"
        for m in compared.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []
    # and what the plan asks of it
    assert [s for s in STUDIES if STUDIES[s].data.constructs] == ["cloze"] and plan.report_category(
        "tsne", "mozart"
    ) == "MozArt"


def test_the_registry_lists_every_study_job_output_table_and_figure(repo):
    """Each study record names its jobs and the rule files that define them, which the Snakefile
    includes from the registry: the workflow's rules are exactly the studies' jobs and the shared ones
    (a rule added without its study's record, or a record naming a rule that is gone, fails here); its
    tables and figures are those made for its subject kinds, and every kind but the data
    and models has a study."""
    import re

    from plmfair import studies
    from plmfair.plan.targets import all_figures, all_tables

    def study_tables(study):
        return [spec.name for spec in studies.STUDIES[study].outputs.tables]

    def study_figures(study):
        return [spec.name for spec in studies.STUDIES[study].outputs.figures]

    TABLES, FIGURES = list(all_tables().values()), all_figures()

    def defined(text):
        return set(rule_bodies(text))

    rule_dir = repo / "workflow" / "rules"
    snakefile = (repo / "Snakefile").read_text()
    shared_files = re.findall(r'^include: "workflow/rules/(\w+\.smk)"', snakefile, re.M)
    rules = {f.name: defined(f.read_text()) for f in rule_dir.glob("*.smk")}
    assert set(rules) == set(shared_files) | set(studies.rule_files()), "each rule file is shared or a study's"
    own = [job for study in studies.STUDIES.values() for job in study.workflow.rules]
    assert len(own) == len(set(own)), "a job belongs to one study"
    for study in studies.STUDIES.values():  # a study's rule files define exactly its own jobs
        assert set().union(*(rules[f] for f in study.workflow.files)) == set(study.workflow.rules), study.name
    assert set().union(*(rules[f] for f in studies.CLOZE_SET_RULES)) == set(studies.CLOZE_SET_JOBS)
    assert set().union(*(rules[f] for f in shared_files)) | defined(snakefile) == set(studies.SHARED_JOBS)
    assert set(studies.STUDIES["mozart"].jobs) >= {"ingest_cloze_test", "tsne", "cloze_score", "group_analysis"}
    assert "cloze_score" not in studies.STUDIES["crows_pairs"].jobs
    assert {spec.subjects for spec in TABLES} - {"data", "models", "hypotheses"} <= {
        kind for study in studies.STUDIES.values() for kind in study.outputs.subjects
    }
    assert "{subject}_table2_p_at_1" in study_tables("mozart") and "crows_pairs" in study_tables("crows_pairs")
    assert "{subject}_construction" in study_tables("cloze") and "{subject}_construction" not in study_tables("mozart")
    assert study_figures("mozart") == [
        "{subject}_mrr",
        "{subject}_group_effects",
        "{subject}_breakdowns",
        "{subject}_tsne",
    ]
    made = {spec.name for spec in TABLES if spec.subjects in ("data", "models", "hypotheses")}
    assert {t for s in studies.STUDIES for t in study_tables(s)} | made == {spec.name for spec in TABLES}
    assert {f for s in studies.STUDIES for f in study_figures(s)} == set(FIGURES)
    for study in studies.STUDIES.values():
        folders = study.outputs.folders
        assert all(path.startswith(("results/", "resources/")) and path.endswith("/") for path in folders)
        named = [*study.outputs.subjects.values(), *study.data.downloads.values()]
        assert all(callable(function) for function in named)  # plan functions


def test_the_robustness_analysis_adds_one_pass_per_other_protocol_and_each_is_a_task_of_the_same_load(config, repo):
    """With robustness.enabled, each masked LM scores each of its data sets under every other masked-LM protocol
    (a causal LM has one), as tasks of the load its own scoring makes (the same precision: one load serves
    all); the passes are counted before the run; the files and the record's part follow; off, nothing."""
    from plmfair.crows_pairs import model_tasks
    from plmfair.preflight import robustness_passes

    assert crows_pairs_plan.pass_jobs(config) == [] and robustness_passes(config) == []
    on = validate_config({**config, "robustness": {"enabled": True}})
    jobs = crows_pairs_plan.pass_jobs(on)
    others = ["all_tokens", "within_word_l2r", "aul"]  # nangia is the run's own
    expected = [(ds, m, p, "fp32") for ds, m in crows_pairs_plan.crows_pairs_jobs(on) if m != "gpt2" for p in others]
    assert jobs == expected
    assert {m for _, m, _, _ in jobs} == {"mbert", "camembert"}  # gpt2 (causal) has one protocol
    (line,) = robustness_passes(on)
    assert line.startswith(f"robustness: CrowS-Pairs adds {len(jobs)} scoring pass(es), each with its model's one load")
    tasks = model_tasks.model_tasks(on, "mbert", entry={}, token_budget=0, threads=1)
    assert [t.label for t in tasks] == ["en", "fr", *[f"{ds}+{p}-fp32" for ds in ("en", "fr") for p in others]]
    assert len({repr(t.loading) for t in tasks}) == 1  # one load serves every pass
    assert tasks[2].outputs["scores"] == "results/crows_pairs/en/passes/mbert/all_tokens-fp32.parquet"
    assert tasks[2].settings["protocol"] == "all_tokens" and tasks[0].settings["protocol"] == "nangia"
    published = crows_pairs_plan.published(on)
    assert {crows_pairs_plan.SPECIFICATIONS, crows_pairs_plan.ROBUSTNESS, tasks[2].outputs["scores"]} <= set(published)
    assert crows_pairs_plan.recorded_files(on) == [crows_pairs_plan.SUMMARY, crows_pairs_plan.ROBUSTNESS]
    # a chosen list of protocols, and one the family does not have, which is left out
    chosen = copy.deepcopy(on)
    chosen["crows_pairs"]["robustness"]["protocols"] = ["aul", "sentence_log_likelihood"]
    assert {p for _, _, p, _ in crows_pairs_plan.pass_jobs(chosen)} == {"aul"}


def test_a_model_in_reduced_precision_is_scored_again_in_fp32_with_the_same_load(config, repo):
    """A bf16 model's passes cross its protocols with bf16 and fp32 (full_precision); each is a task of the one
    bf16 load (its fp32 passes score the load's fp32 copy); a causal LM in bf16 gets its fp32 pass too."""
    from plmfair.crows_pairs import model_tasks

    on = copy.deepcopy(config)
    on["robustness"] = {"enabled": True}
    on["models"]["mbert"]["precision"] = "bf16"
    on["models"]["gpt2"]["precision"] = "bf16"
    on["crows_pairs"]["robustness"] = {"protocols": ["aul"]}
    on = validate_config(on)
    assert crows_pairs_plan.model_passes(on, "mbert") == [
        ("nangia", "bf16"),
        ("aul", "bf16"),
        ("nangia", "fp32"),
        ("aul", "fp32"),
    ]
    assert crows_pairs_plan.model_passes(on, "gpt2") == [("sentence_log_likelihood", "bf16")] + [
        ("sentence_log_likelihood", "fp32")
    ]
    tasks = model_tasks.model_tasks(on, "mbert", entry={}, token_budget=0, threads=1)
    assert {repr(t.loading) for t in tasks} == {repr({"precision": "bf16"})}
    assert {t.settings["precision"] for t in tasks} == {"bf16", "fp32"}
    off = copy.deepcopy(on)
    off["crows_pairs"]["robustness"]["full_precision"] = False
    assert crows_pairs_plan.model_passes(off, "mbert") == [("nangia", "bf16"), ("aul", "bf16")]


def test_versions_of_a_set_are_paired_only_when_the_run_scores_both(config, repo):
    """crows_pairs.robustness.versions names the sets that are versions of one another; a version the run does
    not score is not a choice."""
    on = copy.deepcopy(config)
    on["robustness"] = {"enabled": True}
    on["crows_pairs"]["robustness"] = {"versions": [["en", "fr", "absent"]]}
    on = validate_config(on)
    assert crows_pairs_plan.data_versions(on) == {"en": ["fr"], "fr": ["en"]}
    on["crows_pairs"]["robustness"]["versions"] = [["en", "absent"]]
    assert crows_pairs_plan.data_versions(on) == {}
