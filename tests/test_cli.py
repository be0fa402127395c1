"""The ``plmfair`` command: a model folder or id as a config entry, a run's settings, run folders
that never overwrite each other, and the headline numbers of several runs side by side."""

from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest
import yaml
from conftest import BIN, DEMO_CONFIGS, DEMO_DATA, REPO

from plmfair import cli
from plmfair.errors import ConfigError
from plmfair.io import read_parquet, write_parquet

DEMO = {"models": {"tiny_bert": {}}, "datasets": {"crows_pairs": {"demo_fr": {}, "demo_en": {}}},
        "cloze": {"corpora": {"demo": {}, "listed": {"models": ["tiny_bert"]}}}}


def _folder(tmp_path, name, config: dict, tokenizer: dict | None = None):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    if tokenizer is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer))
    return folder


def test_a_folder_becomes_an_entry_with_its_family_and_casing(tmp_path, monkeypatch):
    bert = _folder(tmp_path, "my-bert", {"model_type": "bert", "architectures": ["BertForMaskedLM"]},
                   {"do_lower_case": True})
    gpt = _folder(tmp_path, "gpt", {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]})
    t5 = _folder(tmp_path, "t5", {"model_type": "mt5", "architectures": ["MT5ForConditionalGeneration"]})
    monkeypatch.chdir(tmp_path)
    assert cli.model_entry("my-bert") == ("my_bert", {"path": str(bert), "family": "mlm", "uncased": True})
    assert cli.model_entry("mine=gpt") == ("mine", {"path": str(gpt), "family": "causal"})
    assert cli.model_entry(f"{t5}") == ("t5", {"path": str(t5), "family": "seq2seq"})
    assert cli.model_entry("gpt", family="mlm")[1]["family"] == "mlm"  # --family wins over config.json


def test_a_model_that_cannot_be_an_entry_is_refused_naming_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _folder(tmp_path, "vision", {"model_type": "vit", "architectures": ["ViTModel"]})
    _folder(tmp_path, "broken", {"architectures": ["Nothing"]})
    with pytest.raises(ConfigError, match="'no-such-folder': no such folder, and not a Hugging Face id"):
        cli.model_entry("no-such-folder")
    with pytest.raises(ConfigError, match="name 'my model'.*letters, digits and _"):
        cli.model_entry("my model=vision")
    with pytest.raises(ConfigError, match="vit model that no plmfair family"):
        cli.model_entry("vision")
    with pytest.raises(ConfigError, match="broken: its config.json cannot be read.*--family mlm"):
        cli.model_entry("broken")


def test_named_models_are_the_only_ones_scored_by_the_studies_kept():
    models = {"mine": {"path": "/m", "family": "mlm"}}
    settings = cli.run_settings(DEMO, models, studies=["crows_pairs"], datasets=["demo_fr"])
    assert settings == {"models": models,
                        "mozart": {"enabled": False},
                        "crows_pairs": {"enabled": True, "models": ["mine"], "datasets": ["demo_fr"]},
                        "cloze": {"enabled": False}}
    # all studies kept: a corpus with its own model list gets the named models too
    every = cli.run_settings(DEMO, models, studies=None, datasets=["demo"])
    assert every["mozart"] == {"models": ["mine"]} and every["crows_pairs"] == {"models": ["mine"]}
    assert every["cloze"] == {"models": ["mine"], "corpora": {"demo": {"enabled": True},
                                                             "listed": {"enabled": False, "models": ["mine"]}}}
    # no models, no studies: the configuration's own choices stand
    assert cli.run_settings(DEMO, {}, studies=None, datasets=None) == {}
    assert "mozart" not in cli.run_settings({**DEMO, "mozart": {"enabled": False}}, models, studies=None, datasets=None)


def test_unknown_studies_and_data_sets_are_refused_with_the_known_ones():
    with pytest.raises(ConfigError, match="study 'crowspairs'.*did you mean 'crows_pairs'"):
        cli.run_settings(DEMO, {}, studies=["crowspairs"], datasets=None)
    with pytest.raises(ConfigError, match="data set 'demo_FR'.*known: demo_fr, demo_en, demo, listed"):
        cli.run_settings(DEMO, {}, studies=None, datasets=["demo_FR"])


def test_a_run_folder_shares_the_resources_and_keeps_its_own_results(tmp_path):
    shared = tmp_path / "resources"
    one = cli.run_folder(tmp_path / "runs", "one", resources=shared)
    two = cli.run_folder(tmp_path / "runs", "two", resources=shared)
    assert (one / "resources").resolve() == (two / "resources").resolve() == shared.resolve()
    (one / "results").mkdir()
    assert not (two / "results").exists()
    assert cli.run_folder(tmp_path / "runs", "one", resources=shared) == one  # a second call changes nothing


def _summary(run, dataset, model, score):
    df = pd.DataFrame({"dataset": [dataset, dataset], "model": [model, model], "lang": ["fr", "fr"],
                       "subset_kind": ["overall", "bias_type"], "score": [score, 1.0], "n_scored": [10, 5]})
    write_parquet(df, run / "results" / "crows_pairs" / "summary.parquet")


def test_compare_puts_the_runs_side_by_side(tmp_path, capsys):
    _summary(tmp_path / "a", "fr", "mine", 0.6)
    _summary(tmp_path / "b", "fr", "other", 0.4)
    metrics = pd.DataFrame({"model": ["mine"] * 2, "lang": ["de", "de"], "group": ["all", "FN"],
                            "p_at_1": [0.1, 0.2], "p_at_5": [0.3, 0.4], "mrr": [0.2, 0.3], "n": [40, 10]})
    write_parquet(metrics, tmp_path / "a" / "results" / "cloze" / "demo" / "metrics.parquet")
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--csv", str(tmp_path / "side.csv")]) == 0
    table = pd.read_csv(tmp_path / "side.csv")
    assert table[["run", "study", "model", "measure", "value"]].values.tolist() == [
        ["a", "crows_pairs", "mine", "metric score", 0.6],
        ["a", "cloze", "mine", "P@1", 0.1], ["a", "cloze", "mine", "P@5", 0.3], ["a", "cloze", "mine", "MRR", 0.2],
        ["b", "crows_pairs", "other", "metric score", 0.4]]
    assert "| a " in capsys.readouterr().out
    assert cli.main(["compare", str(tmp_path)]) == 1
    assert "no results/crows_pairs/summary.parquet" in capsys.readouterr().err


@pytest.mark.e2e
def test_two_models_in_two_runs_keep_both_results(demo_run, tmp_path):
    """A user's own model folder (a relative path), on French CrowS-Pairs, in one command and no YAML;
    a second model in a second run; the first run's results stay; compare shows both."""
    models = tmp_path / "my models"
    models.mkdir()
    for built, copy in (("tiny_bert", "tiny_bert"), ("tiny_gpt2", "gpt")):
        subprocess.run(["cp", "-r", str(demo_run / "resources" / "models" / built), str(models / copy)], check=True)
    subprocess.run(["chmod", "-R", "u+w", str(models)], check=True)
    common = ["--studies", "crows_pairs", "--datasets", "demo_fr", "--configfile", str(DEMO_CONFIGS[0]),
              "--mirror", str(DEMO_DATA), "--runs", str(tmp_path / "runs"), "--resources", str(tmp_path / "res"),
              "--cores", "2"]

    def plmfair(*args):
        proc = subprocess.run([str(BIN / "plmfair"), *args], cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return proc

    plmfair("run", "mine=my models/tiny_bert", *common)
    first = tmp_path / "runs" / "mine"
    settings = yaml.safe_load((first / "config.yaml").read_text())
    assert settings["models"]["mine"] == {"path": str(models / "tiny_bert"), "family": "mlm", "uncased": True}
    assert settings["crows_pairs"] == {"enabled": True, "models": ["mine"], "datasets": ["demo_fr"]}
    plmfair("run", "my models/gpt", *common)
    second = tmp_path / "runs" / "gpt"
    one = read_parquet(first / "results" / "crows_pairs" / "summary.parquet")
    two = read_parquet(second / "results" / "crows_pairs" / "summary.parquet")
    assert set(one["model"]) == {"mine"} and set(two["model"]) == {"gpt"}
    assert set(one["dataset"]) == set(two["dataset"]) == {"demo_fr"}
    assert "mine" in (first / "results" / "tables" / "crows_pairs.md").read_text()
    assert (first / "resources").resolve() == (second / "resources").resolve() == (tmp_path / "res").resolve()
    side = plmfair("compare", str(first), str(second)).stdout
    assert "| mine " in side and "| gpt " in side
    # a later command on a run keeps its settings: nothing left to do
    again = plmfair("run", "--run", "mine", *common[4:], "--dry-run")
    assert "Nothing to be done" in again.stdout + again.stderr
    assert yaml.safe_load((first / "config.yaml").read_text()) == settings


@pytest.mark.parametrize("example", sorted((REPO / "config" / "examples").glob("*.yaml")), ids=lambda p: p.stem)
def test_example_configs_run_the_model_they_name(example, tmp_path):
    """Each ready-to-copy example, with its placeholder folder pointing at a model folder, is a
    valid configuration whose studies score the example's model and nothing it switched off."""
    from snakemake.utils import update_config

    from plmfair import plan
    from plmfair.config import check_config, validate_config

    mine = yaml.safe_load(example.read_text())
    for entry in mine["models"].values():
        if "path" in entry:
            entry["path"] = str(_folder(tmp_path, "model", {"model_type": "bert"}))
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    update_config(config, mine)
    config = validate_config(config, REPO / "workflow" / "schemas" / "config.schema.yaml")
    check_config(config)
    (own,) = [name for name in mine["models"]]
    kept = [study for study in plan.STUDIES if plan.enabled(config, study)]
    assert kept and all(own in plan.study_models(config, study) for study in kept)
    assert example.stem in example.read_text()  # the comment names the run folder it goes to
