"""t-SNE of predictions (MozArt's appendix B): word vectors of every family, the projection, the figure."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from plmfair.cloze.tsne import TSNE_SCHEMA, project
from plmfair.cloze.vectors import prediction_vectors
from plmfair.errors import DataError
from plmfair.scoring.loader import load
from plmfair.scoring.specs import ModelSpec

TEXTS = [
    "Les membres de la commission se sont réunis lundi .",
    "The members of the committee met on Monday .",
    "Die Mitglieder des Ausschusses trafen sich am Montag .",
    "Los miembros de la comisión se reunieron el lunes .",
] * 4
FAMILIES = {"bert": "mlm", "mt5": "seq2seq", "gpt2": "causal"}


@pytest.fixture(scope="module")
def scorers(tiny_model):
    out = {}
    for kind, family in FAMILIES.items():
        path = tiny_model(kind, TEXTS, vocab_size=300)
        out[kind] = load(ModelSpec(name=kind, family=family, path=str(path)), device="cpu").scorer(progress=False)
    return out


@pytest.mark.parametrize("kind", list(FAMILIES))
def test_word_vectors_are_the_last_layer_at_the_words_tokens(scorers, kind):
    scorer = scorers[kind]
    items = [("The [MASK] of the committee met .", "members"), ("Les [MASK] de la commission .", "membres")]
    vecs = scorer.word_vectors(items)
    assert vecs.shape == (2, 32)  # the tiny models' hidden size
    # by hand, one sentence at a time, through the model's own forward pass with all hidden states
    text, word = items[0]
    filled = text.replace("[MASK]", word)
    enc = scorer.tokenizer(filled, return_offsets_mapping=True, return_tensors="pt")
    start = filled.index(word)
    span = [
        j for j, (a, b) in enumerate(enc["offset_mapping"][0].tolist()) if b > a and a < start + len(word) and b > start
    ]
    with torch.inference_mode():
        if kind == "mt5":
            hidden = scorer.model.get_encoder()(input_ids=enc["input_ids"]).last_hidden_state
        else:
            out = scorer.model(input_ids=enc["input_ids"], output_hidden_states=True)
            hidden = out.hidden_states[-1]
    np.testing.assert_allclose(vecs[0], hidden[0, span].mean(0).numpy(), rtol=1e-4, atol=1e-5)


def test_prediction_vectors_and_projection(scorers):
    annotations = pd.DataFrame(
        {
            "s_id": ["7"] * 3 + ["7"] * 2,
            "lang": ["en"] * 3 + ["fr"] * 2,
            "text": ["The [MASK] of the committee met ."] * 3 + ["Les [MASK] de la commission ."] * 2,
            "answer": ["members", "Members", "", "membres", "pommes"],
        }
    )
    scorer = scorers["bert"]
    vectors = prediction_vectors(annotations, scorer, model="bert", s_ids=["7"], k=10)
    assert set(vectors["lang"]) == {"en", "fr"} and vectors.groupby("lang").size().le(10).all()
    assert (vectors.groupby("lang")["rank"].min() == 1).all()
    # n_answers counts the normalised answers of the same language
    norm_words = vectors.set_index(["lang", "candidate"])["n_answers"]
    for (lang, cand), n in norm_words.items():
        if cand.lower() == "members" and lang == "en":
            assert n == 2
    coords = project(vectors, perplexity=5, seed=0)
    assert list(coords.columns) == list(TSNE_SCHEMA) and len(coords) == len(vectors)
    again = project(vectors, perplexity=5, seed=0)
    np.testing.assert_allclose(coords[["x", "y"]], again[["x", "y"]])  # fixed seed, same map
    with pytest.raises(DataError, match="s_id '999' is not in the MozArt data"):
        prediction_vectors(annotations, scorer, model="bert", s_ids=["999"], k=5)
