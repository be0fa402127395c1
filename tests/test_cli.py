"""The ``plmfair`` command: a model folder or id (with its options) as a config entry, a run's
settings kept complete and true across calls, run folders that never overwrite each other or take
hostile names, and runs compared from their records."""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import BIN, CORES, DEMO_CONFIGS, DEMO_DATA, REPO, TINY, tiny_config

from plmfair.errors import ConfigError
from plmfair.io.parquet import read_parquet
from plmfair.runs import folders as runs
from plmfair.runs import model_arguments
from plmfair.scoring.model_settings import study_models
from plmfair.stats.paired import tango_interval
from plmfair.studies import STUDIES, enabled

DEMO = {
    "models": {"tiny_bert": {}},
    "datasets": {"crows_pairs": {"demo_fr": {}, "demo_en": {}}},
    "cloze": {"corpora": {"demo": {}, "listed": {"models": ["tiny_bert"]}}},
}


def _folder(tmp_path, name, config: dict, tokenizer: dict | None = None):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    if tokenizer is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer))
    return folder


def test_a_folder_becomes_an_entry_with_its_family_and_casing(tmp_path, monkeypatch):
    bert = _folder(
        tmp_path, "my-bert", {"model_type": "bert", "architectures": ["BertForMaskedLM"]}, {"do_lower_case": True}
    )
    gpt = _folder(tmp_path, "gpt", {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]})
    t5 = _folder(tmp_path, "t5", {"model_type": "mt5", "architectures": ["MT5ForConditionalGeneration"]})
    monkeypatch.chdir(tmp_path)
    assert model_arguments.model_entry("my-bert") == ("my_bert", {"path": str(bert), "family": "mlm", "uncased": True})
    assert model_arguments.model_entry("mine=gpt") == ("mine", {"path": str(gpt), "family": "causal"})
    assert model_arguments.model_entry(f"{t5}") == ("t5", {"path": str(t5), "family": "seq2seq"})
    assert model_arguments.model_entry("gpt", family="mlm")[1]["family"] == "mlm"  # --family wins over config.json


def test_a_local_folders_family_is_read_without_importing_transformers(tmp_path):
    """``plmfair run FOLDER`` reads a family its architecture's name says off config.json alone
    (importing transformers, and torch with it, takes seconds); the others go to the Auto tables."""
    bert = _folder(tmp_path, "bert", {"model_type": "bert", "architectures": ["BertForMaskedLM"]})
    code = (
        "import sys; from plmfair.runs.model_arguments import detect_family; "
        "print(detect_family(sys.argv[1], local=True)); "
        "print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(bert)], capture_output=True, text=True, check=True)
    assert proc.stdout.split("\n")[:2] == ["mlm", "[]"]
    flaubert = _folder(tmp_path, "flaubert", {"model_type": "flaubert", "architectures": ["FlaubertWithLMHeadModel"]})
    assert model_arguments.detect_family(str(flaubert), local=True) == "mlm"  # in two tables: the config decides


def test_a_model_that_cannot_be_an_entry_is_refused_naming_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _folder(tmp_path, "vision", {"model_type": "vit", "architectures": ["ViTModel"]})
    _folder(tmp_path, "broken", {"architectures": ["Nothing"]})
    with pytest.raises(ConfigError, match="'no-such-folder': no such folder, and not a Hugging Face id"):
        model_arguments.model_entry("no-such-folder")
    with pytest.raises(ConfigError, match="name 'my model'.*letters, digits and _"):
        model_arguments.model_entry("my model=vision")
    with pytest.raises(ConfigError, match="vit model that no plmfair family"):
        model_arguments.model_entry("vision")
    with pytest.raises(ConfigError, match="broken: its config.json cannot be read.*--family mlm"):
        model_arguments.model_entry("broken")


def test_a_hub_id_with_no_hub_to_reach_is_refused_from_the_cache_in_one_line(tmp_path, monkeypatch, capfd):
    """Where the Hub cannot be reached (here: its endpoint a closed port, no HF_HUB_OFFLINE), a Hub id's
    config.json and tokenizer config are read from the Hub cache alone, as the fetch job reads the weights:
    one line that says what to do (as the fetch job's, not "give its family", which would only lead there),
    not the Hub client's retries (23 s of them, each line printed twice)."""
    from plmfair import cli

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    places = ["--runs", str(tmp_path / "runs"), "--resources", str(tmp_path / "res")]
    assert cli.main(["run", "nobody/no-such-model", "--run", "refused", *places]) == 1
    (line,) = capfd.readouterr().err.splitlines()
    assert line == (
        "plmfair: model nobody/no-such-model: the Hub cannot be reached and nobody/no-such-model is not in the Hub "
        "cache. Fetch it where there is network (`hf download nobody/no-such-model`) and copy the cache here "
        "(HF_HOME), or download it to a folder and give the folder"
    )
    assert not (tmp_path / "runs" / "refused").exists()
    # with its family given, its casing is read from the cache too: cased, as a model without a tokenizer config
    entry = model_arguments.model_entry("nobody/no-such-model", family="mlm")
    assert entry == ("no_such_model", {"hf_id": "nobody/no-such-model", "family": "mlm"})
    assert capfd.readouterr().err == ""


def test_the_command_lines_own_lines_are_marked_and_a_librarys_are_printed_once(capsys):
    """While a command runs, plmfair's log lines on stderr begin with ``plmfair:``; a library with a handler
    of its own (huggingface_hub's retries) is printed by it alone, not a second time through the root logger;
    a command inside another (the preflight inside ``plmfair run``) prints each line once; and the handler
    leaves with the command, so a program that calls :func:`plmfair.cli.main` keeps its logging."""
    code = (
        "import logging; from plmfair.logs import command_line_logging\n"
        "from huggingface_hub.utils import logging as hub_logging\n"
        "with command_line_logging():\n"
        "    hub_logging.get_logger('huggingface_hub.utils._http').warning('Retrying in 1s [Retry 1/5].')\n"
        "    logging.getLogger('plmfair.runs').info('a line of our own')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert proc.stderr.splitlines() == ["Retrying in 1s [Retry 1/5].", "plmfair: a line of our own"]
    from plmfair import cli
    from plmfair.logs import command_line_logging

    own = logging.getLogger("plmfair")
    before = (list(own.handlers), own.level)
    with command_line_logging():
        logging.getLogger("plmfair.cli").info("while it runs")
        with command_line_logging():
            logging.getLogger("plmfair.preflight").info("inside another")
        logging.getLogger("plmfair.cli").info("the outer one still")
    logging.getLogger("plmfair.cli").info("after it")
    assert capsys.readouterr().err == "plmfair: while it runs\nplmfair: inside another\nplmfair: the outer one still\n"
    assert (list(own.handlers), own.level) == before
    assert cli.main(["show", str(Path("no") / "such run")]) == 1 and (list(own.handlers), own.level) == before


def test_named_models_are_the_only_ones_scored_by_the_studies_kept():
    models = {"mine": {"path": "/m", "family": "mlm"}}
    settings = runs.run_settings(DEMO, models, studies=["crows_pairs"], datasets=["demo_fr"])
    assert settings == {
        "models": models,
        "mozart": {"enabled": False},
        "crows_pairs": {"enabled": True, "models": ["mine"], "datasets": ["demo_fr"]},
        "cloze": {"enabled": False},
    }
    # all studies kept: a corpus with its own model list gets the named models too
    every = runs.run_settings(DEMO, models, studies=None, datasets=["demo"])
    assert every["mozart"] == {"models": ["mine"]} and every["crows_pairs"] == {"models": ["mine"]}
    assert every["cloze"] == {
        "models": ["mine"],
        "corpora": {"demo": {"enabled": True}, "listed": {"enabled": False, "models": ["mine"]}},
    }
    # a ready-made cloze test named (MozArt's is one) keeps that test and leaves the others out
    tests = {**DEMO, "datasets": {**DEMO["datasets"], "cloze_tests": {"mozart": {}, "other": {}}}}
    assert runs.run_settings(tests, {}, studies=None, datasets=["other"]) == {
        "datasets": {"cloze_tests": {"mozart": {"enabled": False}, "other": {"enabled": True}}}
    }
    # no models, no studies: the configuration's own choices stand
    assert runs.run_settings(DEMO, {}, studies=None, datasets=None) == {}
    assert "mozart" not in runs.run_settings(
        {**DEMO, "mozart": {"enabled": False}}, models, studies=None, datasets=None
    )


def test_a_later_call_keeps_the_earlier_data_sets():
    """A run that scored a cloze test, a corpus or a CrowS-Pairs data set keeps it when a later call names
    another."""
    had = {"datasets": {"cloze_tests": {"mozart": {}, "other": {"enabled": False}}}, "cloze": {"corpora": {"demo": {}}}}
    settings = {
        "datasets": {"cloze_tests": {"mozart": {"enabled": False}, "other": {"enabled": True}}},
        "cloze": {"corpora": {"demo": {"enabled": False}}},
    }
    out, notes = runs.keep_earlier(had, settings)
    assert out["datasets"]["cloze_tests"] == {"mozart": {"enabled": True}, "other": {"enabled": True}}
    assert out["cloze"]["corpora"] == {"demo": {"enabled": True}}
    assert notes == ["keeps its earlier ready-made cloze test mozart", "keeps its earlier cloze corpus demo"]
    # a CrowS-Pairs run's list of data sets grows
    out, notes = runs.keep_earlier(
        {"crows_pairs": {"datasets": ["demo_en"]}}, {"crows_pairs": {"datasets": ["demo_fr"]}}
    )
    assert out["crows_pairs"]["datasets"] == ["demo_en", "demo_fr"]
    assert notes == ["keeps its earlier CrowS-Pairs data set demo_en"]


def test_unknown_studies_and_data_sets_are_refused_with_the_known_ones():
    with pytest.raises(ConfigError, match="study 'crowspairs'.*did you mean 'crows_pairs'"):
        runs.run_settings(DEMO, {}, studies=["crowspairs"], datasets=None)
    with pytest.raises(ConfigError, match="data set 'demo_FR'.*known: demo_fr, demo_en, demo, listed"):
        runs.run_settings(DEMO, {}, studies=None, datasets=["demo_FR"])


def test_a_run_folder_shares_the_resources_and_keeps_its_own_results(tmp_path):
    shared = tmp_path / "resources"
    one = runs.run_folder(tmp_path / "runs", "one", resources=shared)
    two = runs.run_folder(tmp_path / "runs", "two", resources=shared)
    assert (one / "resources").resolve() == (two / "resources").resolve() == shared.resolve()
    (one / "results").mkdir()
    assert not (two / "results").exists()
    assert runs.run_folder(tmp_path / "runs", "one", resources=shared) == one  # a second call changes nothing


BERT = {"model_type": "bert", "architectures": ["BertForMaskedLM"]}


def _setup(tmp_path, *words, configfiles=()):
    """What ``plmfair run WORDS`` would run (nothing written), parsed as the command line parses it."""
    args = [w for w in words]
    models = [w for i, w in enumerate(args) if not w.startswith("-") and (i == 0 or not args[i - 1].startswith("--"))]
    value = {w: args[i + 1] for i, w in enumerate(args[:-1]) if w.startswith("--")}
    return runs.setup_run(
        models=models,
        studies=value.get("--studies", "").split(",") if "--studies" in value else None,
        datasets=value.get("--datasets", "").split(",") if "--datasets" in value else None,
        run=value.get("--run"),
        configfiles=[tmp_path / f for f in configfiles],
        runs=tmp_path / "runs",
        family=None,
        argv=list(words),
    )


def _suggested(error: str) -> list[str]:
    """The command an error suggests, as words after ``plmfair run``."""
    words = shlex.split(error.split(": ", 1)[1].split("plmfair run ", 1)[1])
    return words


def test_model_options_on_the_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = _folder(tmp_path, "m", BERT)
    name, entry = model_arguments.model_entry("mine=m:uncased=true:languages=[fr, en]")
    assert name == "mine" and entry == {
        "path": str(folder),
        "family": "mlm",
        "uncased": True,
        "languages": ["fr", "en"],
    }
    # a revision pins a Hub id's commit: on a folder it would be silently meaningless
    with pytest.raises(ConfigError, match="revision= pins a commit of a Hugging Face id.*drop :revision=abc"):
        model_arguments.model_entry("mine=m:revision=abc")
    with pytest.raises(ConfigError, match="model option 'uncase'.*did you mean 'uncased'"):
        model_arguments.model_entry("mine=m:uncase=true")
    with pytest.raises(ConfigError, match="model option 'uncased' .*write key=value"):
        model_arguments.model_entry("mine=m:uncased")


@pytest.mark.parametrize("source", ["/", "/etc", "empty"])
def test_a_folder_without_config_json_is_refused_before_anything_reads_it(tmp_path, monkeypatch, source):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds no config.json: give the folder that holds the model's config.json"):
        model_arguments.model_entry(f"x={source}")
    from plmfair.scoring.specs import model_files

    assert model_files("/") == [] and model_files("/etc") == []  # the plan never walks them either


@pytest.mark.parametrize("name", ["..", ".", ".hidden", "a/b", "../up"])
def test_hostile_run_names_are_refused(tmp_path, name):
    with pytest.raises(ConfigError, match="run name .*one folder name"):
        _setup(tmp_path, "--studies", "crows_pairs", "--run", name)


def test_two_folders_of_one_name_are_kept_apart_by_a_command_that_works(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for parent in ("exp1", "exp2"):
        (tmp_path / parent).mkdir()
        _folder(tmp_path / parent, "model", BERT)
    with pytest.raises(ConfigError, match="would all be called 'model'") as err:
        _setup(tmp_path, "exp1/model", "exp2/model", "--studies", "crows_pairs")
    suggested = _suggested(str(err.value))
    setup = _setup(tmp_path, *suggested)  # the suggestion runs
    assert set(setup.config["models"]) >= {"exp1_model", "exp2_model"}
    assert setup.config["models"]["exp1_model"]["path"] == str(tmp_path / "exp1" / "model")


def test_a_run_never_takes_another_folder_or_setting_under_its_model_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for parent in ("exp1", "exp2"):
        (tmp_path / parent).mkdir()
        _folder(tmp_path / parent, "model", BERT)
    first = _setup(tmp_path, "exp1/model", "--studies", "crows_pairs")
    runs.run_folder(tmp_path / "runs", first.name, resources=tmp_path / "res")
    runs.write_settings(first.configfiles[0], first.config, ["plmfair", "run"])
    before = first.configfiles[0].read_bytes()
    for words in (["exp2/model", "--studies", "crows_pairs"], ["exp1/model:uncased=true", "--studies", "crows_pairs"]):
        with pytest.raises(ConfigError, match="run 'model' already has a model 'model' and this one differs") as err:
            _setup(tmp_path, *words)
        suggested = _suggested(str(err.value))
        assert suggested[-2:] == ["--run", "model_2"]
        assert _setup(tmp_path, *suggested).name == "model_2"  # the suggestion runs, in a run of its own
    assert first.configfiles[0].read_bytes() == before
    # the same model again: the same run, with its settings
    assert _setup(tmp_path, "exp1/model", "--studies", "crows_pairs").name == "model"


def test_a_setting_a_run_got_from_a_config_file_is_kept_by_a_plain_later_call(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _folder(tmp_path, "m", BERT)  # a cased tokenizer: nothing read off the folder says uncased
    (tmp_path / "own.yaml").write_text("models:\n  m: {uncased: true}\n")
    first = _setup(tmp_path, "m", "--studies", "crows_pairs", configfiles=["own.yaml"])
    runs.run_folder(tmp_path / "runs", first.name, resources=tmp_path / "res")
    runs.write_settings(first.configfiles[0], first.config, ["plmfair", "run"])
    later = _setup(tmp_path, "m", "--studies", "mozart")
    assert later.name == "m" and later.config["models"]["m"]["uncased"] is True


def test_a_later_call_keeps_the_earlier_studies_and_data_sets(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _folder(tmp_path, "m", BERT)
    first = _setup(tmp_path, "m", "--studies", "crows_pairs", "--datasets", "fr")
    runs.run_folder(tmp_path / "runs", first.name, resources=tmp_path / "res")
    runs.write_settings(first.configfiles[0], first.config, ["plmfair", "run"])
    later = _setup(tmp_path, "m", "--studies", "mozart", "--datasets", "en_revised")
    config = later.config
    assert config["crows_pairs"]["enabled"] and config["mozart"]["enabled"] and not config["cloze"]["enabled"]
    assert config["crows_pairs"]["datasets"] == ["fr", "en_revised"] and config["crows_pairs"]["models"] == ["m"]
    assert any("keeps its earlier study crows_pairs" in note for note in later.notes)
    # with nothing new, the run's own file is all Snakemake reads
    again = _setup(tmp_path, "--run", "m")
    assert again.config is None and again.configfiles == [tmp_path / "runs" / "m" / "config.yaml"]


def test_the_run_configuration_is_complete_and_file_entries_merge_over_detected_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _folder(tmp_path, "mine", BERT)
    _folder(tmp_path, "gpt2", {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]})
    (tmp_path / "mine.yaml").write_text(
        "models:\n  mine: {path: mine, uncased: true}\n  extra: {path: mine, family: mlm}\n"
    )
    setup = _setup(tmp_path, "mine", "gpt2", "--studies", "crows_pairs", configfiles=["mine.yaml"])
    models = setup.config["models"]
    # a partial file entry gives only the keys it changes; relative paths are made absolute
    assert models["mine"] == {"path": str(tmp_path / "mine"), "family": "mlm", "uncased": True}
    assert models["extra"]["path"] == str(tmp_path / "mine")
    # a folder named like a default model is the user's: the default entry is left out, said once
    assert models["gpt2"] == {"path": str(tmp_path / "gpt2"), "family": "causal"}
    assert any("gpt2" in note and "default model" in note for note in setup.notes)
    # everything the run needs is in its own configuration: the default models and data sets too
    assert "camembert_base" in models and "fr" in setup.config["datasets"]["crows_pairs"]
    with pytest.raises(ConfigError, match="'mine' is .* in your config file and .* on the command line") as err:
        (tmp_path / "other.yaml").write_text("models:\n  mine: {path: gpt2, family: causal}\n")
        _setup(tmp_path, "mine", "--studies", "crows_pairs", configfiles=["other.yaml"])
    assert "mine_2=" in str(err.value)


def test_one_plmfair_at_a_time_on_a_run(tmp_path):
    folder = tmp_path / "runs" / "r"
    refused = pytest.raises(ConfigError, match="being run by another plmfair command")
    with runs.run_lock(folder), refused, runs.run_lock(folder):
        pass
    with runs.run_lock(folder):  # released
        assert not runs.snakemake_locked(folder)
    (folder / ".snakemake" / "locks").mkdir(parents=True)
    (folder / ".snakemake" / "locks" / "0.input.lock").write_text("x")
    assert runs.snakemake_locked(folder)


def _files(folder) -> dict:
    """Every file of a run folder (not the shared resources, nor Snakemake's bookkeeping) and its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and not p.is_symlink()
        and "resources" not in p.relative_to(folder).parts[:1]
        and ".snakemake" not in p.parts
    }


@pytest.mark.e2e
def test_runs_that_can_be_cited_compared_and_not_overwritten(tiny_model, tmp_path):
    """A user's own model folders (relative paths with a space), on French CrowS-Pairs, in one command
    and no YAML; the same model with uncased=true from the command line lands in a run of its own (the
    refusal's suggestion, run as printed); each run ends with its headline and a record that validates
    and equals its tables; compare shows both with the setting that differs and their paired test;
    a run reports without its original config file; dry runs and hostile calls change no file."""
    from plmfair.runs.record import read_run_record

    models = tmp_path / "my models"
    models.mkdir()
    # tiny models of the demo's kinds, built here (this test needs no demo run)
    texts = (
        pd.read_csv(DEMO_DATA / "crows_pairs_tiny_fr.csv", sep="\t")[["sent_more", "sent_less"]]
        .stack()
        .dropna()
        .tolist()
    )
    for kind, folder in (("bert", "tiny_bert"), ("gpt2", "gpt")):
        tiny_model(kind, texts, into=models / folder, vocab_size=400)
    # the tiny configuration, with one more pair set declared (a later call that would add it)
    own = yaml.safe_load(tiny_config(tmp_path).read_text())
    own["datasets"]["crows_pairs"]["demo_en"] = yaml.safe_load(DEMO_CONFIGS[0].read_text())["datasets"]["crows_pairs"][
        "demo_en"
    ]
    own_config = tmp_path / "my config.yaml"
    own_config.write_text(yaml.safe_dump(own))
    places = ["--runs", str(tmp_path / "runs"), "--resources", str(tmp_path / "res")]
    common = [
        "--studies",
        "crows_pairs",
        "--datasets",
        "tiny_fr",
        "--configfile",
        str(own_config),
        "--mirror",
        str(DEMO_DATA),
        *places,
        "--cores",
        CORES,
    ]

    def plmfair(*args, ok=True):
        proc = subprocess.run([str(BIN / "plmfair"), *args], cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert (proc.returncode == 0) == ok, proc.stdout[-3000:] + proc.stderr[-3000:]
        return proc

    out = plmfair("run", "my models/gpt", *common).stdout
    gpt = tmp_path / "runs" / "gpt"
    assert "decisive share" in out and "| tiny_fr " in out and f"record: {gpt / 'results' / 'run.json'}" in out
    settings = yaml.safe_load((gpt / "config.yaml").read_text())
    assert settings["models"]["gpt"] == {"path": str(models / "gpt"), "family": "causal"}  # cased: no key
    assert {"enabled": True, "models": ["gpt"], "datasets": ["tiny_fr"]}.items() <= settings["crows_pairs"].items()
    # the record validates (read_run_record) and holds the tables' numbers and the model as loaded
    record = read_run_record(gpt / "results" / "run.json")
    summary = read_parquet(gpt / "results" / "crows_pairs" / "summary.parquet")
    overall = summary[summary["subset_kind"] == "overall"].iloc[0]
    (row,) = record["results"]["crows_pairs"]
    for key in ("score", "decisive_score", "ci_low", "ci_high", "p_value", "n_scored", "n_neutral"):
        assert row[key] == pytest.approx(overall[key])
    # the table's CSV holds the interval as numbers at full precision, not as printed text
    numbers = pd.read_csv(gpt / "results" / "tables" / "crows_pairs_tests.csv")
    assert numbers.loc[0, "low"] == pytest.approx(row["ci_low"], rel=1e-12) and "interval" not in numbers
    (model,) = record["models"]
    assert model["name"] == "gpt" and not model["uncased"] and model["protocol"] == "sentence_log_likelihood"
    assert model["files_sha256"] == read_parquet(gpt / "results" / "models.parquet").loc[0, "model_files_sha256"]
    assert record["config"]["analysis"]["alpha"] == 0.05  # defaults resolved
    # the hypotheses: the data set's overall row is the run's one primary question
    (answer,) = record["results"]["primary"]
    assert answer["estimate"] == pytest.approx(overall["decisive_score"]) and answer["family"] == "confirmatory"
    # the pairs (the tiny configuration has no robustness analysis, whose pair audit would be read too)
    assert {d["file"] for d in record["data"]} == {"crows_pairs_tiny_fr.csv"}
    assert record["software"]["packages"]["torch"] and record["times"]["stages"]["crows_pairs"]["jobs"] >= 1

    refused = plmfair("run", "my models/gpt:uncased=true", *common, ok=False).stderr
    assert "run 'gpt' already has a model 'gpt' and this one differs (uncased False -> True)" in refused
    suggestion = refused.split("each in its own run: ")[1].strip()
    plmfair(*shlex.split(suggestion)[1:])  # the suggested command, run as printed
    uncased = tmp_path / "runs" / "gpt_2"
    assert yaml.safe_load((uncased / "config.yaml").read_text())["models"]["gpt"]["uncased"] is True

    side = plmfair("compare", str(gpt), str(uncased), "--alpha", "0.1").stdout
    assert "| gpt " in side and "| gpt_2 " in side and "decisive share" in side
    settings_part = side.split("Model settings that differ")[1].split("\n\n")[1]
    assert "uncased" in settings_part  # gpt and gpt_2 differ in it, and the table says so
    # the 3 x 3 transitions printed for people, and the comparison's own alpha in its captions
    assert "Transitions (pairs, by outcome in each run)" in side and "p < 0.1 over every test" in side
    paired = plmfair("compare", str(gpt), str(uncased), "--format", "json").stdout
    (change,) = json.loads(paired)["paired changes"]  # one model in both runs, never against itself
    assert change["a"] == "gpt/gpt" and change["b"] == "gpt_2/gpt"
    # by hand from the two runs' per-pair files: the outcome of each pair, more / neutral / less, compared
    by_hand = {}
    for name, folder in (("a", gpt), ("b", uncased)):
        pairs = read_parquet(folder / "results" / "crows_pairs" / "tiny_fr" / "gpt.parquet").set_index("pair_id")
        pairs = pairs[pairs["status"].isin(["ok", "truncated"])]
        by_hand[name] = pd.Series(
            np.where(pairs["biased"], "more", np.where(pairs["neutral"], "neutral", "less")), index=pairs.index
        )
        by_hand[f"{name}_nangia"] = pairs["biased_nangia"].astype(bool)
    both = pd.concat(by_hand, axis=1, join="inner")
    assert change["n"] == len(both)
    for x in ("more", "neutral", "less"):
        for y in ("more", "neutral", "less"):
            assert change[f"{x}_to_{y}"] == int(((both["a"] == x) & (both["b"] == y)).sum())
    rank = {"less": 0, "neutral": 1, "more": 2}
    assert change["moved_up"] == int((both["b"].map(rank) > both["a"].map(rank)).sum())
    # the decisive share on the pairs both runs decide, and Nangia's score, each with Tango's interval
    decided = both[both["a"].isin(["more", "less"]) & both["b"].isin(["more", "less"])]
    rose, fell = (
        int(((decided["a"] == "less") & (decided["b"] == "more")).sum()),
        int(((decided["a"] == "more") & (decided["b"] == "less")).sum()),
    )
    assert change["decisive_change"] == pytest.approx(100 * (rose - fell) / len(decided))
    low, high = tango_interval(rose, fell, len(decided))
    assert (change["decisive_low"], change["decisive_high"]) == (pytest.approx(100 * low), pytest.approx(100 * high))
    nangia = 100 * (both["b_nangia"].mean() - both["a_nangia"].mean())
    assert change["nangia_change"] == pytest.approx(nangia) and "decisive_p_adjusted" in change
    # the JSON holds each number exactly: the shortest text that reads back as the same float
    raw = re.search(r'"decisive_low": ([-0-9.e]+)', paired).group(1)
    assert float(raw) == change["decisive_low"] and repr(float(raw)) == raw
    assert "| tiny_fr " in plmfair("show", "gpt_2", "--runs", str(tmp_path / "runs")).stdout

    # the run is complete without its original config file: its report is written from runs/gpt alone
    own_config.unlink()
    before = _files(gpt)
    plmfair("run", "--run", "gpt", *places, "--mirror", str(DEMO_DATA), "--report")
    assert (gpt / "results" / "report.html").stat().st_size > 0
    assert yaml.safe_load((gpt / "config.yaml").read_text()) == settings
    # a dry run that would change the run leaves its file byte for byte
    plmfair("run", "my models/gpt", "--datasets", "demo_en", *places, "--mirror", str(DEMO_DATA), "--dry-run")
    after = _files(gpt)
    assert after["config.yaml"] == before["config.yaml"]
    # hostile calls are refused and change no file of a finished run
    for words in (
        ["--run", "..", "--studies", "crows_pairs"],
        ["--run", ".", "--studies", "crows_pairs"],
        ["x=/", "--studies", "crows_pairs"],
        ["x=/etc", "--studies", "crows_pairs"],
        ["gpt=my models/tiny_bert", "--studies", "crows_pairs"],
    ):
        assert "plmfair: " in plmfair("run", *words, *places, ok=False).stderr
    with runs.run_lock(gpt):
        held = plmfair("run", "my models/gpt", "--datasets", "demo_en", *places, ok=False).stderr
    assert "being run by another plmfair command" in held
    # (--run .. would have written the folder above runs/, --run . runs/ itself)
    assert _files(gpt) == after and not (tmp_path / "runs" / "config.yaml").exists()
    assert not (tmp_path / "config.yaml").exists()

    # a dry run of a new run leaves no folder behind, nor does a run refused before any job (a Hub id that
    # cannot be fetched here): compare never meets them
    tiny = ["--configfile", str(TINY)]
    plmfair("run", "my models/gpt", "--run", "dry_only", *tiny, *places, "--mirror", str(DEMO_DATA), "--dry-run")
    plmfair("run", "nobody/no-such-model", "--run", "refused", *places, ok=False)
    assert not (tmp_path / "runs" / "dry_only").exists() and not (tmp_path / "runs" / "refused").exists()
    # a folder that is no run is named and skipped, and the finished runs are compared all the same
    (tmp_path / "runs" / "left_over").mkdir()
    every = plmfair("compare", *sorted(str(p) for p in (tmp_path / "runs").iterdir() if p.is_dir()))
    assert "| gpt " in every.stdout and "| gpt_2 " in every.stdout
    (skipped,) = every.stderr.splitlines()
    assert skipped.startswith("plmfair: skipped: ") and "left_over" in skipped and "is not a run" in skipped

    # a record newer than its report (a later call that did not ask for the report): the last line says so,
    # with the command that rebuilds it
    record_file = gpt / "results" / "run.json"
    later = (gpt / "results" / "report.html").stat().st_mtime + 60
    os.utime(record_file, (later, later))
    last = plmfair("show", "gpt", "--runs", str(tmp_path / "runs")).stdout.rstrip().splitlines()[-1]
    assert last.startswith(f"report: {gpt / 'results' / 'report.html'} (OUT OF DATE: made before the run's record")
    assert last.endswith(f"rebuild it: plmfair run --run gpt --runs {tmp_path / 'runs'} --report)")


@pytest.mark.parametrize("example", sorted((REPO / "config" / "examples").glob("*.yaml")), ids=lambda p: p.stem)
def test_example_configs_run_the_model_they_name(example, tmp_path):
    """Each ready-to-copy example, with its placeholder folder pointing at a model folder, is a
    valid configuration whose studies score the example's model and nothing it switched off."""
    from snakemake.utils import update_config

    from plmfair.config import check_config, validate_config

    mine = yaml.safe_load(example.read_text())
    for entry in mine["models"].values():
        if "path" in entry:
            entry["path"] = str(_folder(tmp_path, "model", {"model_type": "bert"}))
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    update_config(config, mine)
    config = validate_config(config)
    check_config(config)
    (own,) = [name for name in mine["models"]]
    kept = [study for study in STUDIES if enabled(config, study)]
    assert kept and all(own in study_models(config, study) for study in kept)
    assert example.stem in example.read_text()  # the comment names the run folder it goes to


def _record(models: list[dict], crows: list[dict], config: dict) -> dict:
    return {
        "models": models,
        "config": config,
        "results": {"crows_pairs": crows, "cloze": [], "disparity": [], "omnibus": []},
    }


def test_compare_shows_the_settings_that_differ_and_only_what_records_hold():
    from plmfair.runs.comparison import render, settings_that_differ

    model = {
        "name": "m",
        "source": "/m",
        "uncased": False,
        "revision_requested": None,
        "commit": None,
        "files_sha256": "ab",
        "precision": "fp32",
        "protocol": "nangia",
        "token_budget": 0,
        "k": None,
        "num_beams": None,
    }
    records = {
        "a": _record([model], [], {"crows_pairs": {"alpha": 0.05}, "mozart": {"top_k": 5}, "mirror": "/x"}),
        "b": _record(
            [{**model, "uncased": True}], [], {"crows_pairs": {"alpha": 0.01}, "mozart": {"top_k": 9}, "mirror": "/y"}
        ),
    }
    for record in records.values():
        record["results"]["crows_pairs"] = [{"dataset": "fr", "model": "m"}]
    settings = settings_that_differ(records)
    models, config = settings["model settings"], settings["configuration"]
    assert list(models.columns) == ["run", "model", "uncased"] and models["uncased"].tolist() == [False, True]
    # not the mirror, and not a section of a study neither run has numbers of (the cloze set mozart)
    assert config.to_dict("records") == [{"key": "crows_pairs.alpha", "a": "0.05", "b": "0.01"}]
    every = settings_that_differ(records, all_settings=True)["configuration"]
    assert every["key"].tolist() == ["crows_pairs.alpha", "mozart.top_k"]
    text = render(settings, "md")
    assert "Model settings that differ" in text and "crows_pairs.alpha" in text
    long = render({"model settings": models}, "csv")
    assert long.splitlines()[0] == "table,run,model,uncased"
    same = settings_that_differ({"a": records["a"], "c": records["a"]})["model settings"]
    assert same.empty  # nothing differs: no table of bare rows


def test_the_commands_printed_are_the_ones_the_user_can_type(monkeypatch, tmp_path):
    """The bare name where `plmfair` on PATH is this installation's (the README's activated set-up), else the
    path of this installation's own script, so that a printed command runs as printed."""
    from plmfair.errors import program

    monkeypatch.setenv("PATH", f"{BIN}:/usr/bin:/bin")
    assert program() == "plmfair"
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert program() == str(BIN / "plmfair")
    other = tmp_path / "bin"
    other.mkdir()
    (other / "plmfair").write_text("#!/bin/sh\n")
    (other / "plmfair").chmod(0o755)
    monkeypatch.setenv("PATH", f"{other}:/usr/bin")
    assert program() == str(BIN / "plmfair")  # another installation's plmfair is not this one


def test_help_is_plain_text_with_an_example_for_every_command():
    from plmfair import cli

    parser = cli.build_parser()
    top = parser.format_help()
    assert "``" not in top and ":mod:" not in top and "examples:" in top
    commands = next(a for a in parser._actions if isinstance(a, cli.argparse._SubParsersAction)).choices
    assert set(commands) == set(cli.EXAMPLES)
    for name, sub in commands.items():
        text = sub.format_help()
        assert "``" not in text and ":func:" not in text, name
        assert f"example:\n  plmfair {name} " in text, name


def test_a_local_folder_with_a_revision_in_a_config_file_is_refused(tmp_path):
    from plmfair.config import load_config

    folder = _folder(tmp_path, "m", BERT)
    (tmp_path / "mine.yaml").write_text(
        yaml.safe_dump({"models": {"mine": {"path": str(folder), "family": "mlm", "revision": "abc"}}})
    )
    with pytest.raises(ConfigError, match="models.mine.revision: a revision pins a commit.*remove revision"):
        load_config([DEMO_CONFIGS[0], tmp_path / "mine.yaml"])  # checked as it is read


def test_compare_skips_what_is_not_a_finished_run_and_says_why(tmp_path, capsys):
    from plmfair import cli

    runs_folder = tmp_path / "runs"
    left_over = runs_folder / "left_over"  # a folder that is no run
    left_over.mkdir(parents=True)
    started = runs_folder / "started"  # a run plmfair started whose last call did not finish
    started.mkdir()
    (started / "config.yaml").write_text("# written by `plmfair run started` on a day\nmodels: {}\n")
    with pytest.raises(ConfigError, match=r"no finished run to compare among the 2 folder\(s\) given"):
        cli.compare([str(left_over), str(started)], fmt="md", out=None)
    skipped = capsys.readouterr().err.splitlines()
    assert len(skipped) == 2 and all(line.startswith("plmfair: skipped: ") for line in skipped)
    assert "is not a run" in skipped[0] and "run started is incomplete: it has no record" in skipped[1]
    with pytest.raises(ConfigError, match="no run to compare: give run folders"):
        cli.compare([], fmt="md", out=None)


def test_a_symlinked_results_folder_is_refused_before_any_job(tmp_path):
    """A results folder, or a folder in it, that links elsewhere would have the jobs write outside the run."""
    from plmfair import cli

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = tmp_path / "run"
    (run / "results" / "tables").mkdir(parents=True)
    cli._writable(run)  # real folders: fine
    (run / "results" / "figures").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ConfigError, match=r"results/figures is a symbolic link to .*elsewhere: a run writes"):
        cli._writable(run)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "results").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ConfigError, match=r"linked/results is a symbolic link"):
        cli._writable(linked)


def test_an_executor_that_is_not_installed_is_one_line_before_anything(tmp_path, monkeypatch, capsys):
    """Snakemake's own word for a missing executor plugin is an argparse choice list that names no package; the
    SLURM plugins are not in the default set-up (envs/cluster.txt)."""
    import importlib.util

    from plmfair import cli

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    for words in (["--", "--workflow-profile", str(REPO / "profiles" / "slurm")], ["--", "--executor", "slurm"]):
        assert cli.main(["run", "--runs", str(tmp_path / "runs"), "--run", "x", *words]) == 1
        assert capsys.readouterr().err.strip() == (
            "plmfair: the slurm executor is not installed: make setup-cluster; nothing was run"
        )
    assert not (tmp_path / "runs").exists()
