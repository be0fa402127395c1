"""Hostile input and faults, as a new user or a hostile reviewer would try them.

Every case must end in one line that names the file, row or key and says what to do (or a
counted skip, or a correct result), and leave no output that looks valid. Library cases call
the function a workflow script calls and then the write the script would make; workflow
cases drive Snakemake.
"""

from __future__ import annotations

import copy
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml
from conftest import dry_run_jobs
from safetensors.torch import load_file, save_file

from plmfair.alignment import parse_pharaoh
from plmfair.config import validate_config
from plmfair.data import check_parallel, read_crows_pairs, read_mozart_zip, read_text_lines
from plmfair.download import fetch
from plmfair.errors import ConfigError, DataError, ModelError, PlmfairError
from plmfair.io import write_parquet
from plmfair.models import ModelSpec
from plmfair.mozart import cloze_sentences
from plmfair.pos import load_pipeline, tag_lines
from plmfair.scoring.loader import load
from plmfair.tiny_models import build_tiny_model

BIN = Path(sys.executable).parent
TEXTS = ["The members of the committee met on Monday.", "Les membres de la commission se sont réunis."] * 5


def fails_cleanly(action, message: str, out: Path) -> str:
    """``action`` raises a plmfair error whose one line contains ``message``; ``out``, which the
    workflow script would write next, does not exist."""
    with pytest.raises(PlmfairError) as err:
        write_parquet(action(), out)
    text = str(err.value)
    assert message in text, text
    assert "\n" not in text, text
    assert not out.exists() and not list(out.parent.glob(f".{out.name}.*"))
    return text


# --- data files --------------------------------------------------------------------------

def mozart_record(**over):
    rec = {"s_id": "1", "text": "A [MASK] .", "mask": "cat", "u_id": "u1", "male": 1, "female": 0, "native": 1,
           "nonnative": 0}
    rec.update(over)
    return json.dumps(rec)


def mozart_zip(tmp_path: Path, lines: list[str], lang: str = "en") -> Path:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"MozArt 2/{lang}_data_with_annotations.jsonl", "\n".join(lines) + "\n")
    path = tmp_path / "MozArt.zip"
    path.write_bytes(buf.getvalue())
    return path


MOZART_CASES = {
    "bad JSON": ([mozart_record(), "{not json"], "MozArt.zip:MozArt 2/en_data_with_annotations.jsonl line 2: not valid JSON"),
    "missing field": ([json.dumps({"s_id": "1"})], "line 1: missing field(s) ['text', 'mask', 'u_id'"),
    "male and female": ([mozart_record(female=1)], "line 1: exactly one of male/female must be 1"),
    "duplicate annotation": ([mozart_record(), mozart_record(u_id="u2"), mozart_record(mask="dog")],
                             "line 3: annotator u1 answered sentence 1 already on line 1; each annotator answers a "
                             "sentence once"),
    "two texts": ([mozart_record(), mozart_record(u_id="u2", text="Another [MASK] .")],
                  "s_id 1 has two different texts"),
    "empty file": ([""], "no annotations (the file is empty)"),
}


@pytest.mark.parametrize("case", list(MOZART_CASES))
def test_mozart_files(tmp_path, case):
    lines, message = MOZART_CASES[case]
    path = mozart_zip(tmp_path, lines)
    fails_cleanly(lambda: read_mozart_zip(path, ["en"]), message, tmp_path / "annotations.parquet")


def test_mozart_archive_damaged_or_without_the_language(tmp_path):
    bad = tmp_path / "MozArt.zip"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    fails_cleanly(lambda: read_mozart_zip(bad, ["en"]), "not a readable zip archive", tmp_path / "a.parquet")
    path = mozart_zip(tmp_path, [mozart_record()])
    fails_cleanly(lambda: read_mozart_zip(path, ["de"]), "no member named de_data_with_annotations.jsonl",
                  tmp_path / "a.parquet")


def test_a_cloze_sentence_needs_exactly_one_gap():
    ann = pd.DataFrame({"lang": ["fr"], "s_id": ["9"], "text": ["Deux [MASK] [MASK] ."]})
    with pytest.raises(DataError, match=r"language fr, s_id 9: the sentence has 2 \[MASK\] tokens, expected exactly one"):
        cloze_sentences(ann, "fr")


CROWS_HEADER = "id,sent_more,sent_less,stereo_antistereo,bias_type\n"
CROWS_CASES = {
    "not utf-8": ((CROWS_HEADER + "0,a b,a c,stereo,age\n1,é d,é e,stereo,age\n").encode("latin-1"),
                  "crows.csv line 3: not valid UTF-8"),
    "unknown bias type": ((CROWS_HEADER + "0,a b,a c,stereo,colour\n").encode(),
                          "crows.csv line 2 (pair 0): bias_type must be one of"),
    "unknown direction": ((CROWS_HEADER + "0,a b,a c,maybe,age\n").encode(),
                          "crows.csv line 2 (pair 0): stereo_antistereo must be one of ['antistereo', 'stereo']"),
    "missing column": (b"id,sent_more,stereo_antistereo,bias_type\n0,a,stereo,age\n",
                       "crows.csv: missing column(s) ['sent_less']"),
    "duplicate id": ((CROWS_HEADER + "0,a b,a c,stereo,age\n0,d e,d f,stereo,age\n").encode(),
                     "crows.csv: duplicate pair ids ['0'] (lines 2 and 3)"),
    "empty id": ((CROWS_HEADER + ",a b,a c,stereo,age\n").encode(), "crows.csv line 2 (pair ?): the pair id is empty"),
    "wrong delimiter": (CROWS_HEADER.replace(",", "\t").encode() + b"0\ta b\ta c\tstereo\tage\n",
                        "crows.csv: missing column(s) ['sent_more']"),
}


@pytest.mark.parametrize("case", list(CROWS_CASES))
def test_crows_pairs_files(tmp_path, case):
    content, message = CROWS_CASES[case]
    path = tmp_path / "crows.csv"
    path.write_bytes(content)
    fails_cleanly(lambda: read_crows_pairs(path, lang="en"), message, tmp_path / "pairs.parquet")


def test_download_checksum_mismatch_keeps_nothing(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "data.csv").write_text("tampered\n")
    dest = tmp_path / "downloads" / "data.csv"
    with pytest.raises(DataError, match="checksum mismatch for data.csv from .*The file was not kept"):
        fetch(filename="data.csv", url=None, sha256="0" * 64, dest=dest, mirror=mirror)
    assert not dest.exists() and not list(dest.parent.glob(".data.csv.*"))
    with pytest.raises(DataError, match="other.csv has no URL and was not found in the mirror"):
        fetch(filename="other.csv", url=None, sha256=None, dest=dest, mirror=mirror)
    with pytest.raises(DataError, match="mirror folder .*nowhere does not exist"):
        fetch(filename="data.csv", url=None, sha256=None, dest=dest, mirror=tmp_path / "nowhere")


# --- configuration ------------------------------------------------------------------------

@pytest.fixture()
def default_config(repo):
    with open(repo / "config" / "config.yaml") as fh:
        return yaml.safe_load(fh)


CONFIG_CASES = {
    "unknown key": (lambda c: c["crows_pairs"].update(protocl="nangia"),
                    "config error at crows_pairs: Additional properties are not allowed ('protocl' was unexpected)"),
    "family typo": (lambda c: c["models"]["gpt2"].update(family="causl"),
                    "config error at models.gpt2.family: 'causl' is not one of ['mlm', 'seq2seq', 'causal']"),
    "hf_id and path": (lambda c: c["models"]["gpt2"].update(path="/models/gpt2"),
                       "config error at models.gpt2: it has both hf_id and path; give one of them"),
    "neither hf_id nor path": (lambda c: c["models"]["gpt2"].pop("hf_id"),
                               "config error at models.gpt2: give hf_id (a Hugging Face id) or path (a local folder)"),
    "file is ..": (lambda c: c["datasets"]["crows_pairs"]["fr"].update(file=".."),
                   "config error at datasets.crows_pairs.fr.file: '..' is not a plain file name"),
    "file with a folder": (lambda c: c["datasets"]["mozart"].update(file="../../etc/passwd"),
                           "config error at datasets.mozart.file: '../../etc/passwd' is not a plain file name"),
    "language in capitals": (lambda c: c["models"]["gpt2"].update(languages=["EN"]),
                             "config error at models.gpt2.languages.0: 'EN' is not a language of any data set (did you "
                             "mean 'en'?)"),
    "seq2seq on CrowS-Pairs": (lambda c: c["crows_pairs"].update(models=["mt5_base"]),
                               "config error at crows_pairs.models.0: 'mt5_base' is a seq2seq model"),
    "reference group": (lambda c: c.update(analysis={"reference_group": "men"}),
                        "config error at analysis.reference_group: 'men' is not one of ['MN', 'FN', 'MNN', 'FNN']"),
    "missing local model": (lambda c: c["models"].update(mine={"path": "no/such/folder", "family": "mlm"}),
                            "config error at models.mine.path: folder no/such/folder does not exist"),
    "undeclared data set": (lambda c: c["crows_pairs"].update(datasets=["fr", "mcp_de"]),
                            "config error at crows_pairs.datasets.1: data set 'mcp_de' is not declared under "
                            "datasets.crows_pairs (did you mean 'mcp_de_DE'?)"),
}


@pytest.mark.parametrize("case", list(CONFIG_CASES))
def test_config_errors_name_the_key(repo, default_config, case):
    mutate, message = CONFIG_CASES[case]
    cfg = copy.deepcopy(default_config)
    mutate(cfg)
    with pytest.raises(ConfigError) as err:
        validate_config(cfg, repo / "workflow" / "schemas" / "config.schema.yaml")
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


# --- models -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {kind: build_tiny_model(kind, TEXTS, root / kind, vocab_size=300) for kind in ("bert", "xlmr", "gpt2", "mt5")}


def variant(tiny, tmp_path, name, kind="bert"):
    """A copy of a tiny model to break."""
    path = tmp_path / name
    shutil.copytree(tiny[kind], path)
    return path


def load_fails(path: Path, message: str, family: str = "mlm", **spec) -> None:
    with pytest.raises(ModelError) as err:
        load(ModelSpec(name="m", family=family, path=str(path), **spec), device="cpu")
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_model_folder_without_config(tiny, tmp_path):
    path = variant(tiny, tmp_path, "noconfig")
    (path / "config.json").unlink()
    load_fails(path, "has no config.json; a model folder holds config.json, the tokenizer files and *.safetensors")


def test_pickle_only_weights_are_refused_unless_allowed(tiny, tmp_path):
    path = variant(tiny, tmp_path, "pickled")
    state = load_file(path / "model.safetensors")
    (path / "model.safetensors").unlink()
    torch.save(state, path / "pytorch_model.bin")
    load_fails(path, "has PyTorch pickle weights only (pytorch_model.bin); plmfair loads safetensors only")
    loaded = load(ModelSpec(name="m", family="mlm", path=str(path), allow_pickle=True), device="cpu")
    assert loaded.scorer().family == "mlm"


def test_truncated_weights(tiny, tmp_path):
    path = variant(tiny, tmp_path, "truncated")
    data = (path / "model.safetensors").read_bytes()
    (path / "model.safetensors").write_bytes(data[: len(data) // 3])
    load_fails(path, "its weights cannot be read (Error while deserializing header")


def test_encoder_only_checkpoint_is_not_filled_with_random_weights(tiny, tmp_path):
    path = variant(tiny, tmp_path, "encoder")
    state = load_file(path / "model.safetensors")
    save_file({k: v for k, v in state.items() if not k.startswith("cls.")}, path / "model.safetensors",
              metadata={"format": "pt"})
    load_fails(path, "the checkpoint lacks 6 tensor(s) the BertForMaskedLM needs (cls.predictions.bias")


def test_classifier_given_as_masked_lm(tiny, tmp_path):
    from transformers import AutoConfig, BertForSequenceClassification

    path = variant(tiny, tmp_path, "classifier")
    BertForSequenceClassification(AutoConfig.from_pretrained(path)).save_pretrained(path)
    load_fails(path, "the checkpoint lacks 6 tensor(s) the BertForMaskedLM needs")


@pytest.mark.parametrize("kind, arch, family, fits", [
    ("xlmr", "XLMRobertaForMaskedLM", "causal", "mlm"),  # XLM-R has a *ForCausalLM too: its model type passed
    ("bert", "BertForMaskedLM", "causal", "mlm"), ("bert", "BertForMaskedLM", "seq2seq", "mlm"),
    ("gpt2", "GPT2LMHeadModel", "mlm", "causal"), ("gpt2", "GPT2LMHeadModel", "seq2seq", "causal"),
    ("mt5", "MT5ForConditionalGeneration", "mlm", "seq2seq"), ("mt5", "MT5ForConditionalGeneration", "causal", "seq2seq"),
])
def test_checkpoint_of_another_family_stops_before_scoring(tiny, kind, arch, family, fits):
    load_fails(tiny[kind], f"is declared family {family!r} but its checkpoint is a {arch}; it is a {fits} model",
               family=family)


@pytest.mark.parametrize("config, families", [
    ({"model_type": "xlm-roberta", "architectures": ["XLMRobertaForMaskedLM"]}, ["mlm"]),
    ({"model_type": "xlm-roberta", "architectures": ["XLMRobertaForCausalLM"], "is_decoder": True}, ["causal"]),
    ({"model_type": "flaubert", "architectures": ["FlaubertWithLMHeadModel"]}, ["mlm"]),
    ({"model_type": "xlm", "architectures": ["XLMWithLMHeadModel"], "causal": True}, ["causal"]),
    ({"model_type": "xlm", "architectures": ["XLMWithLMHeadModel"]}, ["mlm"]),
    ({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"]}, ["causal"]),
    ({"model_type": "mt5", "architectures": ["MT5ForConditionalGeneration"]}, ["seq2seq"]),
    ({"model_type": "bert", "architectures": ["BertForPreTraining"]}, ["mlm"]),  # by its model type
    ({"model_type": "camembert"}, ["mlm"]), ({"model_type": "gpt2"}, ["causal"]),
    ({"model_type": "bert", "architectures": ["MyOwnForMaskedLM"]}, ["mlm"]),  # by its name
])
def test_family_is_read_off_the_checkpoint(config, families):
    from transformers import AutoConfig

    from plmfair.scoring.loader import checkpoint_families

    fields = {k: v for k, v in config.items() if k != "model_type"}
    assert checkpoint_families(AutoConfig.for_model(config["model_type"], **fields)) == families


# --- cloze corpora --------------------------------------------------------------------------

def test_parallel_files_of_different_lengths():
    with pytest.raises(DataError, match=r"different line counts \(en.txt: 3, fr.txt: 2\)"):
        check_parallel({"en": 3, "fr": 2}, {"en": "en.txt", "fr": "fr.txt"})


def test_corpus_with_an_empty_line_and_one_not_utf8(tmp_path):
    nlp = load_pipeline_blank()
    with pytest.raises(DataError, match="corpus.fr line 2: empty sentence"):
        tag_lines(nlp, ["Un chat .", "  ", "Un chien ."], source="corpus.fr")
    bad = tmp_path / "corpus.de"
    bad.write_bytes("Ein Hund .\nÄrger\n".encode("latin-1"))
    with pytest.raises(DataError, match="corpus.de line 2: not valid UTF-8"):
        read_text_lines(bad)


def load_pipeline_blank():
    import spacy

    return spacy.blank("fr")


@pytest.mark.parametrize("line, message", [
    ("0-0 1-x", "en-fr.align line 1: malformed link '1-x'"),
    ("0-0 9-1", "en-fr.align line 1: link 9-1 is out of range: the pivot sentence has 3 token(s)"),
])
def test_alignment_files(line, message):
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_pharaoh([line], source="en-fr.align", src_lengths=[3], tgt_lengths=[3])


def test_missing_spacy_pipeline_says_how_to_install_it():
    with pytest.raises(ConfigError, match="spaCy pipeline 'xx_core_news_xl' .* is not installed. Install it with"):
        load_pipeline("xx_core_news_xl", "fr")


# --- outputs: permissions and leftovers ----------------------------------------------------

def test_outputs_get_the_usual_permissions_and_leftovers_are_removed(tmp_path):
    old = os.umask(0o022)
    try:
        out = tmp_path / "scores.parquet"
        stale = tmp_path / ".scores.parquet.abc123.tmp"
        stale.write_text("half a file from a killed job")
        write_parquet(pd.DataFrame({"x": [1]}), out)
        assert stat.S_IMODE(out.stat().st_mode) == 0o644
        assert not stale.exists()
    finally:
        os.umask(old)


# --- the workflow: faults a run meets ------------------------------------------------------

def small_config(repo: Path, tmp_path: Path, model_path: Path, **more_models: Path) -> Path:
    """CrowS-Pairs only, on the French demo pairs, with local models (``local`` and ``more_models``)."""
    with open(repo / ".test" / "config" / "config.yaml") as fh:
        cfg = yaml.safe_load(fh)
    paths = {"local": model_path, **more_models}
    cfg["models"] = {name: {"path": str(path), "family": "mlm"} for name, path in paths.items()}
    cfg["mozart"] = {"enabled": False}
    cfg["cloze"] = {"enabled": False}
    cfg["crows_pairs"] = {"datasets": ["demo_fr"]}
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def snakemake_cmd(repo: Path, workdir: Path, configfile: Path, *args: str) -> list[str]:
    return [str(BIN / "snakemake"), "--snakefile", str(repo / "Snakefile"), "--directory", str(workdir),
            "--configfile", str(configfile), "--config", f"mirror={repo / '.test' / 'data'}", "--cores", "1", *args]


def test_a_broken_model_stops_its_job_with_one_line(repo, tiny, tmp_path):
    model = variant(tiny, tmp_path, "encoder_only")
    state = load_file(model / "model.safetensors")
    save_file({k: v for k, v in state.items() if not k.startswith("cls.")}, model / "model.safetensors",
              metadata={"format": "pt"})
    work = tmp_path / "work"
    proc = subprocess.run(snakemake_cmd(repo, work, small_config(repo, tmp_path, model)), capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode != 0
    log = (work / "results/logs/crows_pairs/demo_fr/local.log").read_text()
    assert "model 'local'" in log and "the checkpoint lacks 6 tensor(s)" in log and "Traceback" not in log
    assert not (work / "results/crows_pairs/demo_fr/local.parquet").exists()


def processes():
    """(pid, command line) of the running processes, from /proc."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                continue
            yield int(entry.name), args


def test_kill_mid_run_then_rerun_and_a_second_run_in_the_same_directory(repo, tiny, tmp_path):
    work = tmp_path / "work"
    cmd = snakemake_cmd(repo, work, small_config(repo, tmp_path, tiny["bert"]))
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    job = None
    deadline = time.time() + 300
    while job is None and time.time() < deadline and first.poll() is None:
        job = next((pid for pid, args in processes() if args.endswith("crows_pairs_score.py")), None)
        time.sleep(0.1)
    if job is None:
        first.kill()
        pytest.fail(f"the scoring job did not start:\n{first.communicate()[0][-3000:]}")
    # a second run in the same directory is refused while the first holds the lock
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert second.returncode != 0 and "Directory cannot be locked" in second.stdout + second.stderr
    os.kill(job, signal.SIGKILL)
    out, _ = first.communicate(timeout=300)
    assert first.returncode != 0
    target = work / "results/crows_pairs/demo_fr/local.parquet"
    assert not target.exists() and not list(target.parent.glob(".local.parquet.*"))
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    scores = pd.read_parquet(target)
    assert len(scores) == 40 and (scores["status"] == "ok").sum() >= 30


def test_a_study_switched_off_by_a_configfile_really_goes(repo, tmp_path):
    off = tmp_path / "off.yaml"
    off.write_text("cloze:\n  enabled: false\nmozart:\n  enabled: false\n")
    proc = subprocess.run(
        [str(BIN / "snakemake"), "--snakefile", str(repo / "Snakefile"), "--directory", str(tmp_path / "w"),
         "--configfile", str(repo / "config" / "config.yaml"), str(off), "--cores", "1", "--dry-run"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "wmt13-dev.tgz" not in proc.stdout and "MozArt.zip" not in proc.stdout
    assert "cloze_" not in proc.stdout and "mozart_score" not in proc.stdout
    assert "crows_pairs_score" in proc.stdout


def planned_jobs(cmd: list[str]) -> list[str]:
    """'rule wildcards' of every job a dry run plans."""
    proc = subprocess.run([*cmd, "--dry-run"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [f"{rule} {wildcards}".strip() for rule, wildcards in dry_run_jobs(proc.stdout)]


def test_replacing_a_local_models_weights_reruns_exactly_its_jobs(repo, tiny, tmp_path):
    first, second = variant(tiny, tmp_path, "first"), variant(tiny, tmp_path, "second")
    work = tmp_path / "work"
    cmd = snakemake_cmd(repo, work, small_config(repo, tmp_path, first, other=second))
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert planned_jobs(cmd) == []
    state = load_file(second / "model.safetensors")
    save_file({k: v + 0.01 for k, v in state.items()}, second / "model.safetensors", metadata={"format": "pt"})
    jobs = planned_jobs(cmd)
    assert "model_manifest model=other" in jobs and "crows_pairs_score dataset=demo_fr, model=other" in jobs
    assert not [job for job in jobs if "model=local" in job], jobs
    # what follows the scores (summary, tables, figures) reruns; no other model's job does
    assert {job.split()[0] for job in jobs} <= {"model_manifest", "crows_pairs_score", "crows_pairs_summary",
                                               "crows_pairs_tables", "crows_pairs_figure", "crows_pairs_languages",
                                               "crows_pairs_language_tables", "crows_pairs_language_figure",
                                               "crows_pairs_breakdowns", "crows_pairs_breakdown_figure", "models_table",
                                               "report_tables", "all"}
