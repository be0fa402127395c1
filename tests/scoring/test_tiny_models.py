"""The demo's tiny models and the replicas of real repositories' files: built (and trained) twice,
in two processes and two folders, they are the same files."""

from __future__ import annotations

from conftest import outputs_under_hash_seeds

from plmfair_demo import TINY_KINDS

KINDS = ("bert", "mt5", "gpt2")  # one per family: masked, sequence-to-sequence, causal
# the replicas of real repositories' files (SentencePiece models, FlauBERT's vocab.json + merges.txt)
REPLICAS = tuple(kind for kind, spec in TINY_KINDS.items() if spec.files is not None)
BUILD = f"""
import sys
from pathlib import Path
from plmfair_demo import build_tiny_model

texts = ["Les députés votent la loi.", "La commission présente son rapport.", "Le conseil adopte le budget.",
         "Les citoyens attendent une réponse.", "Nous soutenons cette proposition."]
gaps = [(t.replace(w, "[MASK]", 1), w) for t, w in zip(texts, ["votent", "rapport", "budget", "réponse", "soutenons"])]
for kind in {KINDS!r}:
    build_tiny_model(kind, texts, Path(sys.argv[1]) / kind, vocab_size=120, seed=5, gaps=gaps, train_steps=3)
for kind in {REPLICAS!r}:
    build_tiny_model(kind, texts, Path(sys.argv[1]) / kind, vocab_size=120, seed=5)
"""


def test_trained_tiny_models_are_the_same_files_under_other_hash_seeds(tmp_path):
    """The seeded build (tokenizer training, random weights, the training steps on the answers) depends
    neither on Python's string hashing (PYTHONHASHSEED) nor on a Rust hash map's order in the tokenizer
    trainers, which change from process to process, nor on the folder it is written to."""
    roots = outputs_under_hash_seeds(BUILD, out=tmp_path / "models")
    for kind in KINDS + REPLICAS:
        names = sorted(p.name for p in (roots[0] / kind).iterdir())
        assert {"model.safetensors", "pytorch_model.bin"} & set(names) and names == sorted(
            p.name for p in (roots[1] / kind).iterdir()
        ), kind
        for name in names:
            assert (roots[0] / kind / name).read_bytes() == (roots[1] / kind / name).read_bytes(), (kind, name)
