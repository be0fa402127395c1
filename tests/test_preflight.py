"""The offline preflight of `make run`: everything missing, named in one go, in seconds."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import pytest
import yaml

from plmfair.config import load_config
from plmfair.errors import ConfigError
from plmfair.preflight import preflight

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def offline_cache(tiny_model, tmp_path, monkeypatch):
    """A Hub cache holding one model (``plmfair-test/cached`` at main), the Hub unreachable."""
    model = tiny_model("bert", ["The members of the committee met on Monday."] * 5, vocab_size=100)
    repo = tmp_path / "cache" / "models--plmfair-test--cached"
    shutil.copytree(model, repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    import huggingface_hub.constants as constants

    for name, value in (("HF_HUB_CACHE", str(tmp_path / "cache")), ("HF_HUB_OFFLINE", "1")):
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return tmp_path


def write_config(tmp_path, repo, changes: dict):
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(changes))
    return [str(repo / ".test" / "config" / "config.yaml"), str(path)]


def test_everything_missing_is_listed_at_once(offline_cache, tmp_path, repo):
    files = write_config(
        tmp_path,
        repo,
        {
            "models": {
                "cached": {"hf_id": "plmfair-test/cached", "family": "mlm"},
                "absent": {"hf_id": "plmfair-test/absent", "revision": COMMIT, "family": "mlm"},
                "unused": {"hf_id": "plmfair-test/unused", "family": "mlm", "languages": ["de"]},
            },
            "mozart": {"models": ["cached", "absent"]},
            "crows_pairs": {"models": ["cached", "absent"]},
            "cloze": {"models": ["cached"], "spacy": {"de": "xx_no_such_pipeline"}},
            "datasets": {
                "crows_pairs": {
                    "demo_en": {"file": "not_in_mirror.csv", "url": "http://127.0.0.1:9/x.csv", "sha256": None}
                }
            },
        },
    )
    start = time.monotonic()
    missing = preflight(load_config(files), workdir=tmp_path / "work", mirror=str(repo / ".test" / "data"))
    assert time.monotonic() - start < 60
    lines = [m.line() for m in missing]
    assert len(lines) == 3, lines
    assert lines[0].startswith(
        "model absent (plmfair-test/absent): where there is network run "
        f"`hf download plmfair-test/absent --revision {COMMIT}`"
    )
    assert lines[1].startswith(
        "data file not_in_mirror.csv (datasets.crows_pairs.demo_en): put a copy from "
        "http://127.0.0.1:9/x.csv in the mirror folder"
    )
    assert lines[2].startswith(
        "spaCy pipeline xx_no_such_pipeline (cloze.spacy.de): "
        f"`{sys.executable} -m pip install https://github.com/explosion/spacy-models/"
    )


def test_a_fetched_model_is_not_missing(offline_cache, tmp_path, repo):
    files = write_config(
        tmp_path,
        repo,
        {
            "models": {"absent": {"hf_id": "plmfair-test/absent", "family": "mlm"}},
            "mozart": {"models": ["absent"]},
            "crows_pairs": {"enabled": False},
            "cloze": {"enabled": False},
        },
    )
    work, mirror = tmp_path / "work", str(repo / ".test" / "data")
    assert [m.what for m in preflight(load_config(files), workdir=work, mirror=mirror)] == ["model absent"]
    (work / "results" / "models" / "plmfair-test--absent@default").mkdir(parents=True)
    assert preflight(load_config(files), workdir=work, mirror=mirror) == []


def test_command_line_exits_1_with_one_line_per_item(offline_cache, tmp_path, repo):
    files = write_config(
        tmp_path,
        repo,
        {
            "models": {"absent": {"hf_id": "plmfair-test/absent", "family": "mlm"}},
            "mozart": {"models": ["absent"]},
            "crows_pairs": {"enabled": False},
            "cloze": {"enabled": False},
        },
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "plmfair.preflight",
            "--directory",
            str(tmp_path),
            "--mirror",
            str(repo / ".test" / "data"),
            *files,
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "1 thing(s) this run needs are not here" in proc.stderr and "  - model absent" in proc.stderr


def test_config_files_are_read_with_the_schema_defaults(tmp_path, repo):
    """A corpus given without `pivot:` gets the documented default (en) before any tool reads it."""
    text = {lang: {"file": f"mine.{lang}"} for lang in ("en", "fr")}
    config = load_config(write_config(tmp_path, repo, {"cloze": {"corpora": {"mine": {"text": text}}}}))
    assert config["cloze"]["corpora"]["mine"]["pivot"] == "en"
    with pytest.raises(ConfigError, match="config error at mozart.top_k"):
        load_config(write_config(tmp_path, repo, {"mozart": {"top_k": "many"}}))
