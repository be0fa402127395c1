"""The loader refuses what it cannot score faithfully: one line naming the model, the folder and
the fix, before any weight is read or score written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from plmfair.errors import ModelError
from plmfair.scoring.loader import load
from plmfair.scoring.specs import ModelSpec

TEXTS = ["The members of the committee met on Monday.", "Les membres de la commission se sont réunis."] * 5


@pytest.fixture(scope="module")
def tiny(tiny_model):
    return {kind: tiny_model(kind, TEXTS, vocab_size=300) for kind in ("bert", "xlmr", "gpt2", "mt5")}


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


def test_model_folder_without_weights(tiny, tmp_path):
    path = variant(tiny, tmp_path, "noweights")
    (path / "model.safetensors").unlink()
    load_fails(path, "has no weights (*.safetensors); copy the model's weights there")


def test_pickle_only_weights_are_refused_unless_allowed(tiny, tmp_path):
    path = variant(tiny, tmp_path, "pickled")
    state = load_file(path / "model.safetensors")
    (path / "model.safetensors").unlink()
    torch.save(state, path / "pytorch_model.bin")
    load_fails(path, "has PyTorch pickle weights only (pytorch_model.bin); plmfair loads safetensors only")
    loaded = load(ModelSpec(name="m", family="mlm", path=str(path), allow_pickle=True), device="cpu")
    assert loaded.scorer().family == "mlm"


class _Payload:
    """An object whose unpickling would run a command: what a hostile pickle holds."""

    def __reduce__(self):
        return (print, ("this ran",))


def test_a_pickle_holding_objects_other_than_tensors_is_named_and_never_run(tiny, tmp_path, capsys):
    path = variant(tiny, tmp_path, "payload")
    state = load_file(path / "model.safetensors")
    (path / "model.safetensors").unlink()
    torch.save({**state, "payload": _Payload()}, path / "pytorch_model.bin")
    with pytest.raises(ModelError) as err:
        load(ModelSpec(name="m", family="mlm", path=str(path), allow_pickle=True), device="cpu")
    assert str(err.value).startswith(f"model 'm' ({path}): its pickle weights hold objects other than tensors (")
    assert "\n" not in str(err.value) and "this ran" not in capsys.readouterr().out


def test_truncated_weights(tiny, tmp_path):
    path = variant(tiny, tmp_path, "truncated")
    data = (path / "model.safetensors").read_bytes()
    (path / "model.safetensors").write_bytes(data[: len(data) // 3])
    load_fails(path, "its weights cannot be read (Error while deserializing header")


def test_encoder_only_checkpoint_is_not_filled_with_random_weights(tiny, tmp_path):
    path = variant(tiny, tmp_path, "encoder")
    state = load_file(path / "model.safetensors")
    save_file(
        {k: v for k, v in state.items() if not k.startswith("cls.")},
        path / "model.safetensors",
        metadata={"format": "pt"},
    )
    load_fails(path, "the checkpoint lacks 6 tensor(s) the BertForMaskedLM needs (cls.predictions.bias")


def test_classifier_given_as_masked_lm(tiny, tmp_path):
    from transformers import AutoConfig, BertForSequenceClassification

    path = variant(tiny, tmp_path, "classifier")
    BertForSequenceClassification(AutoConfig.from_pretrained(path)).save_pretrained(path)
    load_fails(path, "the checkpoint lacks 6 tensor(s) the BertForMaskedLM needs")


@pytest.mark.parametrize(
    "kind, arch, family, fits",
    [
        ("xlmr", "XLMRobertaForMaskedLM", "causal", "mlm"),  # XLM-R has a *ForCausalLM too: its model type passed
        ("bert", "BertForMaskedLM", "causal", "mlm"),
        ("bert", "BertForMaskedLM", "seq2seq", "mlm"),
        ("gpt2", "GPT2LMHeadModel", "mlm", "causal"),
        ("gpt2", "GPT2LMHeadModel", "seq2seq", "causal"),
        ("mt5", "MT5ForConditionalGeneration", "mlm", "seq2seq"),
        ("mt5", "MT5ForConditionalGeneration", "causal", "seq2seq"),
    ],
)
def test_checkpoint_of_another_family_stops_before_scoring(tiny, kind, arch, family, fits):
    load_fails(
        tiny[kind], f"is declared family {family!r} but its checkpoint is a {arch}; it is a {fits} model", family=family
    )


@pytest.mark.parametrize(
    "config, families",
    [
        ({"model_type": "xlm-roberta", "architectures": ["XLMRobertaForMaskedLM"]}, ["mlm"]),
        ({"model_type": "xlm-roberta", "architectures": ["XLMRobertaForCausalLM"], "is_decoder": True}, ["causal"]),
        ({"model_type": "flaubert", "architectures": ["FlaubertWithLMHeadModel"]}, ["mlm"]),
        ({"model_type": "xlm", "architectures": ["XLMWithLMHeadModel"], "causal": True}, ["causal"]),
        ({"model_type": "xlm", "architectures": ["XLMWithLMHeadModel"]}, ["mlm"]),
        ({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"]}, ["causal"]),
        ({"model_type": "mt5", "architectures": ["MT5ForConditionalGeneration"]}, ["seq2seq"]),
        ({"model_type": "bert", "architectures": ["BertForPreTraining"]}, ["mlm"]),  # by its model type
        ({"model_type": "camembert"}, ["mlm"]),
        ({"model_type": "gpt2"}, ["causal"]),
        ({"model_type": "bert", "architectures": ["MyOwnForMaskedLM"]}, ["mlm"]),  # by its name
    ],
)
def test_family_is_read_off_the_checkpoint(config, families):
    from transformers import AutoConfig

    from plmfair.scoring.loader import checkpoint_families

    fields = {k: v for k, v in config.items() if k != "model_type"}
    assert checkpoint_families(AutoConfig.for_model(config["model_type"], **fields)) == families


def test_a_class_name_that_says_a_family_agrees_with_transformers_auto_tables():
    """The name rule a local folder's family is read by without transformers names, for every class
    of the Auto tables it names at all, the one family whose table holds it."""
    from transformers.models.auto import modeling_auto

    from plmfair.scoring import FAMILIES, family_by_class_name

    tables: dict[str, set[str]] = {}  # each class, the families whose tables hold it
    named: dict[str, str] = {}  # each class the rule names, the family it names
    for family in FAMILIES.values():
        for model_type, classes in getattr(modeling_auto, family.auto_mapping).items():
            for name in [classes] if isinstance(classes, str) else classes:
                tables.setdefault(name, set()).add(family.name)
                if family_by_class_name(name, model_type):
                    named[name] = family_by_class_name(name, model_type)
    assert named and all(tables[name] == {family} for name, family in named.items())
    # the papers' classes are among those named: their families are read without transformers
    for name, model_type, family in (
        ("BertForMaskedLM", "bert", "mlm"),
        ("XLMRobertaForMaskedLM", "xlm-roberta", "mlm"),
        ("GPT2LMHeadModel", "gpt2", "causal"),
        ("Qwen2ForCausalLM", "qwen2", "causal"),
        ("MT5ForConditionalGeneration", "mt5", "seq2seq"),
    ):
        assert name in tables and family_by_class_name(name, model_type) == family
    assert family_by_class_name("FlaubertWithLMHeadModel", "flaubert") is None  # masked and causal: the tables decide


def test_a_folder_without_its_tokenizer_files_is_refused(tiny, tmp_path):
    """transformers builds an empty BERT tokenizer when tokenizer.json and tokenizer_config.json are
    gone: every word [UNK], every pair neutral, a published score from text the model cannot read."""
    path = variant(tiny, tmp_path, "no_tokenizer")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (path / name).unlink()
    load_fails(path, "tokenizer files missing")


def test_a_tokenizer_larger_than_the_embeddings_is_refused(tiny, tmp_path):
    """A tokenizer of 4,000 entries on a model of 1,000 embedding rows ended in an IndexError deep in
    torch; now one line before anything is scored."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    path = variant(tiny, tmp_path, "small_embeddings")
    model = AutoModelForMaskedLM.from_pretrained(path)
    rows = len(AutoTokenizer.from_pretrained(path)) // 2
    model.resize_token_embeddings(rows)
    model.save_pretrained(path)
    load_fails(path, f"the model has {rows:,} embedding rows: the tokenizer and the weights come from different models")


@pytest.mark.parametrize("kind", ["bert", "xlmr", "gpt2", "mt5"])
def test_a_models_own_tokenizer_fits_it(tiny, kind):
    family = {"bert": "mlm", "xlmr": "mlm", "gpt2": "causal", "mt5": "seq2seq"}[kind]
    loaded = load(ModelSpec(name="m", family=family, path=str(tiny[kind])), device="cpu")
    assert len(loaded.tokenizer) <= loaded.model.get_input_embeddings().num_embeddings


def test_a_local_folder_that_fails_to_load_is_never_told_to_download_itself(tiny, tmp_path):
    path = variant(tiny, tmp_path, "broken_tokenizer_config")
    (path / "tokenizer_config.json").write_text("{not json")
    with pytest.raises(ModelError) as err:
        load(ModelSpec(name="m", family="mlm", path=str(path)), device="cpu")
    assert "could not be loaded" in str(err.value) and "Check the folder's files" in str(err.value)
    assert "hf download" not in str(err.value)


def test_a_checkpoint_naming_its_own_code_is_told_that_code_is_not_run(tiny, tmp_path, caplog):
    import json

    path = variant(tiny, tmp_path, "auto_map")
    config = json.loads((path / "config.json").read_text())
    config["auto_map"] = {"AutoModelForMaskedLM": "modeling_mine.MineForMaskedLM"}
    (path / "config.json").write_text(json.dumps(config))
    with caplog.at_level("INFO"):
        load(ModelSpec(name="m", family="mlm", path=str(path)), device="cpu")
    assert "never runs a model's own code" in caplog.text and "AutoModelForMaskedLM" in caplog.text


def test_a_folder_gone_since_its_manifest_is_called_missing(tiny, tmp_path):
    """A model folder moved away as its job starts is missing, not changed: putting it back is the fix."""
    from plmfair.io.atomic import write_json
    from plmfair.scoring.specs import folder_manifest, spec_from_entry

    path = variant(tiny, tmp_path, "moved")
    manifest = tmp_path / "results" / "manifests" / "m.json"
    write_json(folder_manifest(path), manifest)
    path.rename(tmp_path / "elsewhere")
    with pytest.raises(ModelError) as err:
        spec_from_entry({"name": "m", "path": str(path), "family": "mlm"}, manifest)
    assert str(err.value).startswith(f"model 'm': {path} is missing (is gone: moved, renamed or deleted since its")
    assert "changed" not in str(err.value)


def test_a_folder_changed_since_its_manifest_is_never_scored(tiny, tmp_path):
    """A copy that kept older times replaced the weights, cut short or with other values of the same size:
    Snakemake sees nothing, the scoring job hashes the folder and refuses."""
    import os

    from plmfair.io.atomic import write_json
    from plmfair.scoring.specs import folder_manifest, spec_from_entry

    path = variant(tiny, tmp_path, "replaced")
    manifest = tmp_path / "results" / "manifests" / "m.json"
    write_json(folder_manifest(path), manifest)
    entry = {"name": "m", "path": str(path), "family": "mlm"}
    assert spec_from_entry(entry, manifest).files_sha256 == folder_manifest(path)["sha256"]
    weights = path / "model.safetensors"
    data, times = weights.read_bytes(), weights.stat()
    for changed in (data[: len(data) // 2], data[:-8] + bytes(8)):  # cut short; the same size, other bytes
        weights.write_bytes(changed)
        os.utime(weights, ns=(times.st_atime_ns, times.st_mtime_ns))  # touch -r: the old time
        with pytest.raises(ModelError) as err:
            spec_from_entry(entry, manifest)
        assert str(err.value) == (
            f"model 'm': {path} changed since its manifest {manifest} was written "
            f"(model.safetensors); nothing was scored: run the workflow again (plmfair run rebuilds the "
            f"manifest of a changed folder; with snakemake alone: rm {manifest})"
        )
