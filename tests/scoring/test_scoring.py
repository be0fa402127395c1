"""The scorer contract: the family registry, the one loader, and what every family answers."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from conftest import outputs_under_hash_seeds

from plmfair.errors import ConfigError, ModelError
from plmfair.scoring import FAMILIES, scorer_class
from plmfair.scoring.base import (
    MinimalPair,
    Scorer,
    default_token_budget,
    length_batches,
    right_padded,
)
from plmfair.scoring.loader import load
from plmfair.scoring.masking import MASKING_RULES, TokenizedSentence
from plmfair.scoring.specs import ModelSpec, model_spec

TEXTS = ["Les membres de la commission se sont réunis lundi.", "The members of the committee met on Monday."] * 5


def test_every_family_has_a_scorer_of_that_family():
    for name, family in FAMILIES.items():
        cls = scorer_class(name)
        assert issubclass(cls, Scorer) and cls.family == name
        assert family.scores("mozart") and family.scores("cloze")  # every family fills cloze gaps


def test_every_family_implements_the_primitives_its_protocols_read():
    """A protocol names the scorer methods it reads; the family that is scored with it has each."""
    from plmfair.scoring.protocols import CLOZE_PROTOCOLS, PROTOCOLS

    for name, family in FAMILIES.items():
        cls = scorer_class(name)
        protocols = [CLOZE_PROTOCOLS[family.cloze_protocol]] + [p for p in PROTOCOLS.values() if p.family == name]
        for protocol in protocols:
            missing = [m for m in protocol.primitives if not callable(getattr(cls, m, None))]
            assert not missing, f"family {name}: protocol {protocol.name} reads {missing}, which it lacks"


def test_unknown_family_is_named_with_a_suggestion():
    with pytest.raises(
        ConfigError,
        match=r"config error at models.gpt.family: unknown model family 'causl' "
        r"\(did you mean 'causal'\?\)",
    ):
        model_spec("gpt", {"hf_id": "x/y", "family": "causl"})


def test_length_batches_respect_the_budget():
    lengths = [5, 12, 3, 12, 7, 40]
    batches = length_batches(lengths, 24)
    assert sorted(i for b in batches for i in b) == list(range(6))
    assert batches[0] == [5]  # longer than the budget: a batch of its own
    for b in batches[1:]:
        assert max(lengths[i] for i in b) * len(b) <= 24


def test_right_padded_batch_and_mask():
    ids, att = right_padded([[5, 6, 7], [8], [9, 9]], [0, 2, 1], pad_id=0, device="cpu")
    assert ids.tolist() == [[5, 6, 7], [9, 9, 0], [8, 0, 0]]
    assert att.tolist() == [[1, 1, 1], [1, 1, 0], [1, 0, 0]]
    assert ids.dtype == att.dtype == torch.long


def test_token_budget_defaults_per_device(built):
    assert default_token_budget("cpu", "mlm") == 8192
    assert default_token_budget("cpu", "causal") == 2048  # benchmarks/bench_causal.py
    assert default_token_budget("cuda", "mlm") == 16384  # measured on an H100 (docs/methods/crows-pairs.md, Speed)
    loaded = load(ModelSpec(name="bert", family="mlm", path=str(built["bert"])), device="cpu")
    assert loaded.scorer(progress=False).token_budget == 8192  # 0 / unset: the device's default
    assert loaded.scorer(token_budget=512, progress=False).token_budget == 512


def test_masking_rules_of_the_protocols():
    special = frozenset({0, 9})
    first = TokenizedSentence([0, 4, 5, 6, 9], [None, 0, 0, 1, None], special)
    second = TokenizedSentence([0, 4, 7, 6, 9], [None, 0, 1, 2, None], special)
    assert MASKING_RULES["nangia"].masking(first, second, True) == ([[1], [3]], [[1], [3]])
    assert MASKING_RULES["all_tokens"].masking(first, second, True)[0] == [[1], [2], [3]]
    # within a word, the tokens to the right are masked with the one scored
    assert MASKING_RULES["within_word_l2r"].masking(first, second, False)[0] == [[1, 2], [2], [3]]
    assert MASKING_RULES["nangia"].rounded and not MASKING_RULES["all_tokens"].rounded


@pytest.fixture(scope="module")
def built(tiny_model, tmp_path_factory):
    # one folder of them, each named by its kind (the hash-seed test's subprocess finds them so)
    root = tmp_path_factory.mktemp("models")
    return {kind: tiny_model(kind, TEXTS, into=root / kind, vocab_size=400) for kind in ("bert", "mt5", "gpt2")}


@pytest.mark.parametrize("kind, family", [("bert", "mlm"), ("mt5", "seq2seq"), ("gpt2", "causal")])
def test_one_loader_for_every_family(built, kind, family):
    loaded = load(ModelSpec(name=kind, family=family, path=str(built[kind])), device="cpu")
    scorer = loaded.scorer(token_budget=64, progress=False)
    assert scorer.family == family and scorer.token_budget == 64 and not loaded.model.training
    with loaded.stopwatch() as watch:
        preds = scorer.predict_gap(["Les [MASK] de la commission."], k=3)
    assert watch.seconds > 0 and len(preds[0]) == 3
    meta = loaded.metadata(wall_time_s=watch.seconds)
    assert meta["model_family"] == family and meta["precision"] == "fp32" and meta["device"] == "cpu"
    assert {"torch", "transformers", "model_source"} <= set(meta)


@pytest.mark.parametrize(
    "kind, family, protocol", [("bert", "mlm", "nangia"), ("gpt2", "causal", "sentence_log_likelihood")]
)
def test_scores_of_other_batch_shapes_differ_by_less_than_the_tie_tolerance(built, kind, family, protocol):
    """What makes a CrowS-Pairs pair neutral is the margin's floating-point tolerance
    (plmfair.scoring.tolerance): the same sentences scored in batches of other shapes (token budgets
    that pack 1 and many copies per forward pass) move by far less than it."""
    from plmfair.scoring.tolerance import score_error_bound

    loaded = load(ModelSpec(name=kind, family=family, path=str(built[kind])), device="cpu")
    pairs = [MinimalPair(a, b, True) for a, b in zip(TEXTS[:4], TEXTS[1:5], strict=True)]
    runs = [
        loaded.scorer(token_budget=budget, progress=False).score_sentences(pairs, protocol=protocol)
        for budget in (32, 4096)
    ]
    for first, second in zip(*runs, strict=True):
        for a, b, n in ((first.more, second.more, first.n_more), (first.less, second.less, first.n_less)):
            bound = float(score_error_bound(a, n, "float32"))
            assert abs(a - b) <= bound / 10, (a, b, bound)


def test_seq2seq_has_no_crows_pairs_protocol(built):
    scorer = load(ModelSpec(name="mt5", family="seq2seq", path=str(built["mt5"])), device="cpu").scorer()
    assert not FAMILIES["seq2seq"].scores("crows_pairs")
    with pytest.raises(ModelError, match="model 'mt5' is a seq2seq model; no CrowS-Pairs protocol"):
        scorer.score_sentences([MinimalPair("a b", "a c", True)], protocol="nangia")


@pytest.mark.parametrize("kind, family", [("bert", "mlm"), ("mt5", "seq2seq"), ("gpt2", "causal")])
@pytest.mark.parametrize("poison", [float("nan"), float("inf")])
def test_a_non_finite_log_probability_stops_every_family(built, kind, family, poison):
    """One NaN weight, or an infinite output bias, gives non-finite scores: the job stops with the
    model and the item, instead of counting the pair as neutral or the answer as ranked."""
    import torch

    loaded = load(ModelSpec(name=kind, family=family, path=str(built[kind])), device="cpu")
    with torch.no_grad():
        head = loaded.model.get_output_embeddings()
        if poison != poison:  # NaN: one weight of the output layer
            head.weight[5, 0] = poison
        else:  # inf: every logit of the output layer
            head.weight.fill_(poison)
    scorer = loaded.scorer()
    questions = [
        lambda: scorer.predict_gap(["Les [MASK] de la commission."], k=3),
        lambda: scorer.score_answers([("Les [MASK] de la commission.", "membres")]),
    ]
    if family != "seq2seq":
        questions.append(
            lambda: scorer.score_sentences(
                [MinimalPair("Les femmes parlent.", "Les hommes parlent.", True)],
                protocol=FAMILIES[family].protocol or "nangia",
            )
        )
    for ask in questions:
        with pytest.raises(
            ModelError,
            match=rf"model '{kind}' gives (a non-finite log-probability \((nan|inf|-inf)\)|"
            r"no candidate) for .Les .*no (score|prediction) is written",
        ):
            ask()


@pytest.mark.parametrize("kind, family", [("bert", "mlm"), ("mt5", "seq2seq"), ("gpt2", "causal")])
def test_cloze_input_longer_than_the_model_accepts_is_named(built, kind, family):
    """A 3,000-word sentence or a 300-word answer stops with the item, its length and the model's own
    limit (position embeddings, not only the tokenizer's), not a tensor-size RuntimeError or IndexError."""
    from plmfair.errors import DataError

    scorer = load(ModelSpec(name=kind, family=family, path=str(built[kind])), device="cpu").scorer()
    limit = scorer.max_length()
    long_sentence = "Les [MASK] de " + " ".join(["la commission"] * 1500) + "."
    with pytest.raises(
        DataError,
        match=rf"model '{kind}': 'Les \[MASK\] de la commission.*' takes \d+ tokens, "
        rf"more than the {limit} the model accepts",
    ):
        scorer.predict_gap([long_sentence], k=3)
    with pytest.raises(DataError, match=rf"\(answer 'membres membres.*takes \d+ tokens, more than the {limit}"):
        scorer.score_answers([("Les [MASK] de la commission.", " ".join(["membres"] * 300))])
    scorer.model.config.max_position_embeddings = scorer.model.config.n_positions = 16  # a smaller model's limit
    scorer.tokenizer.model_max_length = 10_000  # a tokenizer from a model with a longer one
    if family != "seq2seq":  # T5's relative positions have no limit of their own
        assert scorer.max_length() == 16


def test_gap_must_be_one_mask(built):
    from plmfair.errors import DataError

    scorer = load(ModelSpec(name="gpt2", family="causal", path=str(built["gpt2"])), device="cpu").scorer()
    with pytest.raises(DataError, match=r"model 'gpt2': expected exactly one \[MASK\] in 'no gap'"):
        scorer.score_answers([("no gap", "x")])
    assert pd.notna(scorer.score_answers([("a [MASK] b", "x")])[0][0])


def test_models_table_counts_the_parameters_of_a_model_built_outside(tmp_path, built):
    """A model made with transformers alone (not the project's builder): the table's parameter count,
    layers, hidden size and vocabulary are those transformers reports for it."""
    import shutil

    import transformers as tf

    from plmfair.rendering.table_format import models_table, printed
    from plmfair.scoring.specs import models_frame

    folder = tmp_path / "outside"
    shutil.copytree(built["bert"], folder)
    tokenizer = tf.AutoTokenizer.from_pretrained(folder)
    outside = tf.BertForMaskedLM(
        tf.BertConfig(
            vocab_size=len(tokenizer),
            hidden_size=48,
            num_hidden_layers=3,
            num_attention_heads=4,
            intermediate_size=96,
            max_position_embeddings=64,
        )
    )
    outside.save_pretrained(folder)
    meta = load(
        ModelSpec(name="outside", family="mlm", path=str(folder), uncased=True, languages=("fr", "en")), device="cpu"
    ).metadata()
    models = models_frame({"outside": meta}, {"outside": ["fr", "en"]})
    row = models.iloc[0]
    assert row["model_parameters"] == outside.num_parameters()
    assert (row["model_layers"], row["model_hidden_size"], row["model_vocab_size"]) == (3, 48, len(tokenizer))
    assert row["model_tokenizer"] == "WordPiece" and row["model_max_length"] == 64
    assert row["model_languages"] == "fr,en" and row["model_family"] == "mlm"
    numbers = models_table(models)
    table = printed(numbers)
    assert table.loc[0, "Parameters"] == f"{outside.num_parameters():,}" and table.loc[0, "Uncased"] == "yes"
    assert table.loc[0, "Languages"] == "fr,en"
    assert numbers.loc[0, "Parameters"] == outside.num_parameters()  # the CSV: the number itself


ENTRY_POINTS = """
import pickle, sys
from pathlib import Path
from plmfair.cloze.scoring_job import score_cloze_set
from plmfair.crows_pairs.scoring_job import run_scoring
from plmfair.cloze.annotations import read_mozart_zip
from plmfair.crows_pairs.reader import read_crows_pairs
from plmfair.scoring.specs import ModelSpec
from plmfair.cloze.vectors import run_tsne_vectors

data, models, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
annotations = read_mozart_zip(data / "MozArt.zip", ["fr"])
pairs = read_crows_pairs(data / "crows_pairs_demo_fr.csv", fmt="inria", lang="fr")
results = {}
for kind, family in (("bert", "mlm"), ("mt5", "seq2seq"), ("gpt2", "causal")):
    spec = ModelSpec(name=kind, family=family, path=str(models / kind))
    preds, answers, _ = score_cloze_set(annotations, annotations, spec, langs=["fr"], k=5, device="cpu")
    results[f"{kind} cloze"] = (preds, answers)
    results[f"{kind} tsne"] = run_tsne_vectors(annotations, spec, s_ids=["1"], k=3, num_beams=None,
                                               precision="fp32", device="cpu")[0]
    if family != "seq2seq":
        protocol = "nangia" if family == "mlm" else "sentence_log_likelihood"
        results[f"{kind} crows"] = run_scoring(pairs, spec, protocol=protocol, precision="fp32", too_long="skip",
                                               token_budget=0, device="cpu", progress=False)[0]
out.write_bytes(pickle.dumps(results))
"""


def test_every_scoring_entry_point_gives_the_same_numbers_under_other_hash_seeds(built, demo_data, tmp_path):
    """Python's string hashing changes from process to process (PYTHONHASHSEED): no score, ranking
    or vector may depend on it (set and dict iteration order, say)."""
    import pickle

    outputs = [
        pickle.loads(path.read_bytes())
        for path in outputs_under_hash_seeds(
            ENTRY_POINTS, str(demo_data), str(built["bert"].parent), out=tmp_path / "scores.pkl"
        )
    ]
    assert set(outputs[0]) == {
        "bert cloze",
        "bert tsne",
        "bert crows",
        "mt5 cloze",
        "mt5 tsne",
        "gpt2 cloze",
        "gpt2 tsne",
        "gpt2 crows",
    }
    for name, first in outputs[0].items():
        second = outputs[1][name]
        for a, b in zip(
            first if isinstance(first, tuple) else (first,),
            second if isinstance(second, tuple) else (second,),
            strict=True,
        ):
            if "vector" in a.columns:
                assert all((x == y).all() for x, y in zip(a.pop("vector"), b.pop("vector"), strict=True)), name
            pd.testing.assert_frame_equal(a, b, check_exact=True, obj=name)
