"""Models fetched from the Hub at a pinned revision, offline, from a Hub cache the test builds.

The cache has the layout huggingface_hub writes (``models--<org>--<name>/refs/<branch>``
holding a commit, ``snapshots/<commit>/<files>``); with ``HF_HUB_OFFLINE=1`` the fetch
resolves revisions from it exactly as it would after a download.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import snakemake

from plmfair.errors import ModelError
from plmfair.io.hub import SOURCE_FILE, fetch_model
from plmfair.io.parquet import read_parquet_meta
from plmfair.scoring.loader import load
from plmfair.scoring.specs import folder_manifest, model_spec, spec_from_entry

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"
REPO_ID = "plmfair-test/tiny-bert"
TEXTS = ["The members of the committee met on Monday.", "Les membres de la commission se sont réunis."] * 5


@pytest.fixture(scope="module")
def hub_cache(tiny_model, tmp_path_factory) -> Path:
    """A Hub cache with one repository: ``main`` at COMMIT; a second commit with pickles only."""
    root = tmp_path_factory.mktemp("hub")
    model = tiny_model("bert", TEXTS, vocab_size=300)
    repo = root / "cache" / f"models--{REPO_ID.replace('/', '--')}"
    shutil.copytree(model, repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    pickles = repo / "snapshots" / OTHER
    shutil.copytree(model, pickles, ignore=shutil.ignore_patterns("*.safetensors"))
    (pickles / "pytorch_model.bin").write_bytes(b"not used")
    (repo / "refs" / "pickles").write_text(OTHER)
    return root / "cache"


@pytest.fixture
def offline(hub_cache, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub_cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return hub_cache


def test_fetch_resolves_the_branch_to_its_commit_and_copies_the_files(offline, tmp_path, caplog):
    out = tmp_path / "models" / "tiny"
    record = fetch_model(name="tiny", hf_id=REPO_ID, revision="main", out_dir=out)
    assert record["commit"] == COMMIT and record["revision"] == "main"
    assert "model.safetensors" in record["files"] and "config.json" in record["files"]
    assert "UNPINNED: set models.tiny.revision: " + COMMIT in caplog.text
    assert json.loads((out / SOURCE_FILE).read_text())["commit"] == COMMIT
    manifest = folder_manifest(out)
    assert manifest["source"]["commit"] == COMMIT
    assert SOURCE_FILE not in {f["file"] for f in manifest["files"]}
    assert len(manifest["sha256"]) == 64


def test_a_pinned_commit_gives_no_warning_and_results_carry_commit_and_digest(offline, tmp_path, caplog):
    out = tmp_path / "tiny"
    fetch_model(name="tiny", hf_id=REPO_ID, revision=COMMIT, out_dir=out)
    assert "UNPINNED" not in caplog.text
    manifest_path = tmp_path / "tiny.json"
    manifest_path.write_text(json.dumps(folder_manifest(out)))
    spec = spec_from_entry(
        {"name": "tiny", "hf_id": REPO_ID, "revision": COMMIT, "family": "mlm"}, manifest=manifest_path
    )
    assert spec.source == str(out) and spec.is_local
    loaded = load(spec, device="cpu", threads=1)
    meta = loaded.metadata()
    assert meta["model_source"] == REPO_ID and meta["model_commit"] == COMMIT
    assert meta["model_files_sha256"] == folder_manifest(out)["sha256"] and meta["threads"] == 1


def test_unknown_revision_and_uncached_model_say_what_to_do(offline, tmp_path):
    with pytest.raises(
        ModelError,
        match="is not in the Hub cache and the Hub cannot be reached. Fetch it where "
        "there is network \\(`hf download plmfair-test/absent",
    ):
        fetch_model(name="absent", hf_id="plmfair-test/absent", revision=None, out_dir=tmp_path / "a")
    with pytest.raises(ModelError, match="models.tiny"):
        fetch_model(name="tiny", hf_id=REPO_ID, revision="no-such-branch", out_dir=tmp_path / "b")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_pickle_only_revision_is_refused_unless_allowed(offline, tmp_path):
    with pytest.raises(ModelError, match="has no safetensors weights; plmfair loads safetensors only"):
        fetch_model(name="tiny", hf_id=REPO_ID, revision="pickles", out_dir=tmp_path / "p")
    assert not (tmp_path / "p").exists()
    record = fetch_model(name="tiny", hf_id=REPO_ID, revision="pickles", out_dir=tmp_path / "p", allow_pickle=True)
    assert "pytorch_model.bin" in record["files"] and record["commit"] == OTHER


@pytest.mark.e2e
def test_the_workflow_fetches_a_hub_model_and_ties_scores_to_its_commit(repo, offline, tmp_path):
    with open(repo / ".test" / "config" / "config.yaml") as fh:
        cfg = yaml.safe_load(fh)
    cfg["models"] = {"hub": {"hf_id": REPO_ID, "revision": COMMIT, "family": "mlm"}}
    cfg["mozart"] = {"enabled": False}
    cfg["cloze"] = {"enabled": False}
    cfg["crows_pairs"] = {"datasets": ["demo_fr"]}
    cfg["robustness"] = {"enabled": False}  # the fetch is the subject here, not the demo's robustness analysis
    configfile = tmp_path / "hub.yaml"
    configfile.write_text(yaml.safe_dump(cfg))
    work = tmp_path / "work"
    snakemake(work, configfiles=(configfile,), env={**os.environ})
    store = f"{REPO_ID.replace('/', '--')}@{COMMIT}"
    assert (work / "results/models" / store / "model.safetensors").is_file()
    meta = read_parquet_meta(work / "results/crows_pairs/demo_fr/hub.parquet")
    manifest = json.loads((work / "results/manifests/hub.json").read_text())
    assert meta["model_commit"] == COMMIT and meta["model_source"] == REPO_ID
    assert meta["model_files_sha256"] == manifest["sha256"]
    summary = pd.read_parquet(work / "results/crows_pairs/summary.parquet")
    assert set(summary["model_commit"]) == {COMMIT}


def test_config_entry_with_hf_id_loads_from_the_hub_when_no_manifest(offline):
    spec = model_spec("tiny", {"hf_id": REPO_ID, "revision": COMMIT, "family": "mlm"})
    assert not spec.is_local and spec.source == REPO_ID
    assert load(spec, device="cpu").metadata()["model_commit"] is None
