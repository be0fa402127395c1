"""Declared memory and run time (plmfair.resources): every rule declares them as a function of its
input, and the functions grow with the input, the model's weights and the attempt."""

from __future__ import annotations

import json
import re

from conftest import rule_bodies

from plmfair.resources import LIGHT, NEEDS, mem_mb, model_mb, runtime
from plmfair.studies import STUDIES, rule_need


def rule_blocks(repo) -> dict[str, str]:
    """Each rule's body by its name (:func:`conftest.rule_bodies`), over every rule file."""
    blocks = {}
    for path in sorted((repo / "workflow" / "rules").glob("*.smk")):
        blocks.update(rule_bodies(path.read_text()))
    return blocks


def test_every_rule_declares_its_memory_and_run_time_from_its_input(repo):
    blocks = rule_blocks(repo)
    fitted = set(NEEDS).union(*(study.rule_needs for study in STUDIES.values()))
    assert fitted <= set(blocks)  # no fit for a rule that is gone
    for name, body in blocks.items():
        if "resources:" not in body:
            continue
        if f'**scoring_resources("{name}")' in body:  # the scoring jobs' one definition (common.smk)
            continue
        assert f'**sized("{name}")' in body, name  # common.smk: plmfair.resources' mem_mb and runtime
        assert not re.search(r"^\s+(mem_mb|runtime)=\d", body, flags=re.M), name


class Input(list):
    """A job's input as the resource callables get it: its files, and its model's manifest by name."""

    def __init__(self, files, model=None):
        super().__init__(files)
        if model is not None:
            self.model = model


def sized(folder, mb: int) -> list[str]:
    """A sparse file of ``mb`` MB (its size is stat'ed, nothing is read)."""
    path = folder / f"input_{mb}.bin"
    with open(path, "wb") as f:
        f.truncate(mb * 2**20)
    return [str(path)]


def test_needs_grow_with_input_weights_and_attempt(tmp_path):
    manifest = tmp_path / "m.json"
    manifest.write_text(
        json.dumps(
            {"files": [{"file": "model.safetensors", "bytes": 500 * 2**20}, {"file": "tokenizer.json", "bytes": 2**20}]}
        )
    )
    assert model_mb(str(manifest)) == 500 and model_mb(str(tmp_path / "missing.json")) == 0
    align = mem_mb(rule_need("cloze_align"))
    small, large = (align(None, Input(sized(tmp_path, mb)), 1) for mb in (10, 1000))
    assert small < large and align(None, Input(sized(tmp_path, 1000)), 2) == 2 * large
    score = mem_mb(rule_need("crows_pairs_score"))
    bare = score(None, Input(sized(tmp_path, 1), model=str(tmp_path / "missing.json")), 1)
    assert score(None, Input(sized(tmp_path, 1), model=str(manifest)), 1) >= bare + 3 * 500 - 100
    assert runtime(rule_need("a_table"))(None, Input([str(tmp_path / "not written yet")]), 1) == LIGHT.runtime_base_min
    assert all(v % 100 == 0 for v in (small, large, bare))
