"""Replicas of the real repositories whose files differ from our tiny models: bare SentencePiece
files (mT5, FrALBERT, XLM-R and CamemBERT with and without tokenizer.json), FlauBERT's
vocab.json + merges.txt read by a Python tokenizer, pickle-only weights. Each goes through the
project's loader and a scoring call of every study its family supports; Python tokenizers score
exactly what Rust-backed ones do where both exist; missing tokenizer packages are named."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
import torch
from conftest import DEMO_DATA
from oracles import nangia_reference

from plmfair.cloze.scoring_job import predict, score_answers
from plmfair.crows_pairs.scoring_job import score_pairs
from plmfair.scoring.base import MinimalPair
from plmfair.scoring.loader import load, placement
from plmfair.scoring.mlm import MaskedLMScorer
from plmfair.scoring.pieces import whole_word_vocabulary
from plmfair.scoring.specs import ModelSpec
from plmfair.scoring.tokenization import encode_with_words, filled_span, is_fast
from plmfair_demo import TINY_KINDS

TEXTS = [
    line
    for lang in ("en", "de", "es", "fr")
    for line in (DEMO_DATA / "cloze" / f"cloze_demo.{lang}").read_text(encoding="utf-8").splitlines()
]
TEXTS += (DEMO_DATA / "cloze" / "cloze_extra.fr").read_text(encoding="utf-8").splitlines()[:400]
PAIRS = pd.DataFrame(
    {
        "pair_id": ["1", "2", "3"],
        "lang": "fr",
        "sent_more": [
            "Le chien vieux chante rarement .",
            "Les femmes ne savent pas conduire.",
            "L'enfant attend souvent .",
        ],
        "sent_less": [
            "Le chat vieux chante rarement .",
            "Les hommes ne savent pas conduire.",
            "L'homme attend souvent .",
        ],
        "stereo_antistereo": ["stereo", "antistereo", "stereo"],
        "bias_type": "gender",
        "origin": "translated",
    }
)
GAPS = pd.DataFrame({"s_id": ["1", "2"], "text": ["Le chien vieux [MASK] rarement .", "L'[MASK] attend souvent ."]})
ANSWERS = pd.DataFrame(
    {
        "s_id": ["1", "1", "2"],
        "text": [GAPS.text[0], GAPS.text[0], GAPS.text[1]],
        "answer": ["chante", "mange bien", "enfant"],
    }
)

# kind -> (the default model it mirrors, its Hub files, tokenizer class, Rust-backed, pickle weights)
REPLICAS = {
    "t5_spiece": (
        "mt5_base",
        {"config.json", "spiece.model", "tokenizer_config.json", "pytorch_model.bin"},
        "T5Tokenizer",
        True,
        True,
    ),
    "albert_spiece": (
        "fralbert_base",
        {"config.json", "spiece.model", "spiece.vocab", "tokenizer_config.json", "pytorch_model.bin"},
        "AlbertTokenizer",
        True,
        True,
    ),
    "xlmr_spiece": (
        "xlmr_base without tokenizer.json",
        {"config.json", "sentencepiece.bpe.model", "tokenizer_config.json", "model.safetensors"},
        "XLMRobertaTokenizer",
        True,
        False,
    ),
    "camembert_spiece": (
        "camembert_base",
        {"config.json", "sentencepiece.bpe.model", "tokenizer.json", "tokenizer_config.json", "model.safetensors"},
        "CamembertTokenizer",
        True,
        False,
    ),
    "flaubert_bpe": (
        "flaubert_base_cased",
        {"config.json", "vocab.json", "merges.txt", "pytorch_model.bin"},
        "FlaubertTokenizer",
        False,
        True,
    ),
}


@pytest.fixture(scope="module")
def replicas(tiny_model):
    return {kind: tiny_model(kind, TEXTS, vocab_size=250, seed=3) for kind in REPLICAS}


def loaded(replicas, kind):
    return load(
        ModelSpec(name=kind, family=TINY_KINDS[kind].family, path=str(replicas[kind]), allow_pickle=REPLICAS[kind][4]),
        device="cpu",
    )


@pytest.mark.parametrize("kind", REPLICAS)
def test_replica_has_the_real_files_and_tokenizer_class(replicas, kind):
    _, files, cls, fast, _ = REPLICAS[kind]
    assert {p.name for p in replicas[kind].iterdir() if p.is_file()} - {"special_tokens_map.json"} == files
    model = loaded(replicas, kind)
    assert type(model.tokenizer).__name__ == cls and is_fast(model.tokenizer) is fast


@pytest.mark.parametrize("kind", ["t5_spiece", "albert_spiece", "xlmr_spiece", "camembert_spiece"])
def test_sentencepiece_replicas_tokenize_as_the_sentencepiece_model(replicas, kind):
    """transformers' conversion of the bare .model file splits text exactly as sentencepiece does."""
    import sentencepiece as spm

    model_file = next(replicas[kind].glob("*.model"))
    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    tokenizer = loaded(replicas, kind).tokenizer
    for text in TEXTS[::37] + list(PAIRS["sent_more"]):
        reference = albert_preprocess(text) if kind == "albert_spiece" else text
        assert tokenizer.tokenize(text) == sp.encode(reference, out_type=str), text


def albert_preprocess(text: str) -> str:
    """What ALBERT's original SentencePiece tokenizer does before SentencePiece: white space
    collapsed, accents removed (keep_accents=False), lower-cased."""
    import unicodedata

    text = unicodedata.normalize("NFKD", " ".join(text.strip().split()))
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


@pytest.mark.parametrize("kind", REPLICAS)
def test_replica_scores_in_every_study_of_its_family(replicas, kind):
    model = loaded(replicas, kind)
    scorer = model.scorer(token_budget=128, progress=False)
    # cloze sets (MozArt and constructed): whole-word predictions, answers, t-SNE vectors
    preds = predict(GAPS, scorer, k=5)
    assert preds.groupby("s_id").size().eq(5).all() and preds["logprob"].notna().all()
    scores = score_answers(ANSWERS, scorer)
    assert scores["n_pieces"].ge(1).all() and scores["logprob"].lt(0).all()
    vectors = scorer.word_vectors(list(zip(ANSWERS["text"], ANSWERS["answer"], strict=True)))
    assert vectors.shape == (3, model.metadata()["model_hidden_size"])
    if TINY_KINDS[kind].family != "mlm":
        return
    assert set(preds["candidate"]) <= set(whole_word_vocabulary(model.tokenizer).values())
    # CrowS-Pairs: Nangia et al.'s metric.py, transcribed in conftest, pair by pair
    out = score_pairs(PAIRS, scorer, protocol="nangia")
    for pair, got in zip(PAIRS.itertuples(), out.itertuples(), strict=True):
        stereo = pair.stereo_antistereo == "stereo"
        s1, s2 = (pair.sent_more, pair.sent_less) if stereo else (pair.sent_less, pair.sent_more)
        r1, r2 = nangia_reference(model.model, model.tokenizer, s1, s2, uncased=False)
        assert (got.sent_more_score, got.sent_less_score) == pytest.approx(
            (r1, r2) if stereo else (r2, r1), abs=1.001e-3
        )
    assert score_pairs(PAIRS, scorer, protocol="within_word_l2r")["status"].eq("ok").all()


def test_flaubert_python_tokenizer_ids_words_and_spans(replicas):
    """The Python tokenizer's ids are its own for the whole text; words end at </w>, as Moses splits."""
    tokenizer = loaded(replicas, "flaubert_bpe").tokenizer
    for text in ("L'enfant attend souvent .", "Les membres de la commission se sont réunis ."):
        [(ids, words)] = encode_with_words(tokenizer, [text])
        assert ids == tokenizer(text)["input_ids"]
        tokens = tokenizer.convert_ids_to_tokens(ids)
        ends = [i for i, t in enumerate(tokens) if t.endswith("</w>")]
        assert max(w for w in words if w is not None) + 1 == len(ends) == len(tokenizer.moses_tokenize(text, "fr"))
    ids, span = filled_span(tokenizer, "Le chien vieux ", "chante", " rarement .")
    assert tokenizer.convert_tokens_to_string(tokenizer.convert_ids_to_tokens([ids[j] for j in span])) == "chante"


@pytest.mark.parametrize("kind", [k for k in REPLICAS if TINY_KINDS[k].family == "mlm"])
def test_sentences_encoded_together_as_each_alone(replicas, kind, monkeypatch):
    """CrowS-Pairs sentences are encoded in one call of the tokenizer, with the ids and words each
    sentence gets alone; a Python tokenizer's vocabulary is scanned for its word markers once for
    all of them, not once a sentence."""
    from plmfair.scoring import tokenization

    scorer = loaded(replicas, kind).scorer(progress=False)
    texts = [*PAIRS.sent_more, *PAIRS.sent_less]
    scans = []
    rule = tokenization.word_start_rule
    monkeypatch.setattr(tokenization, "word_start_rule", lambda tok: scans.append(tok) or rule(tok))
    together = scorer.encode_sentences(texts)
    assert len(scans) == (0 if is_fast(scorer.tokenizer) else 1)
    assert together == [scorer.encode_sentences([text])[0] for text in texts]
    assert [s.ids for s in together] == [scorer.tokenizer(text)["input_ids"] for text in texts]
    assert scorer.encode_sentences([]) == []


def test_python_tokenizer_scores_equal_the_rust_backed_one(tiny_model, tmp_path):
    """The same WordPiece vocabulary through BERT's Rust-backed tokenizer and its Python one
    (BertTokenizerLegacy): every study's numbers are the same."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

    path = tiny_model("bert", TEXTS, vocab_size=300, seed=2)
    model = AutoModelForMaskedLM.from_pretrained(path).eval()
    fast = AutoTokenizer.from_pretrained(path)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(sorted(fast.get_vocab(), key=fast.get_vocab().get)) + "\n", encoding="utf-8")
    slow = BertTokenizerLegacy(str(vocab), do_lower_case=True)
    assert not is_fast(slow) and is_fast(fast)
    texts = list(PAIRS["sent_more"]) + ["Él no sabía qu'il était tard, n'est-ce pas?"]
    assert [fast(t)["input_ids"] for t in texts] == [slow(t)["input_ids"] for t in texts]
    scorers = [MaskedLMScorer(model, tok, name="bert", uncased=True, token_budget=64) for tok in (fast, slow)]
    for protocol in ("nangia", "all_tokens", "within_word_l2r"):
        a, b = (score_pairs(PAIRS, s, protocol=protocol) for s in scorers)
        pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(*(predict(GAPS, s, k=10) for s in scorers))
    pd.testing.assert_frame_equal(*(score_answers(ANSWERS, s) for s in scorers))
    items = list(zip(ANSWERS["text"], ANSWERS["answer"], strict=True))
    assert torch.equal(*(torch.as_tensor(s.word_vectors(items)) for s in scorers))


BLOCKED = """
import sys
from plmfair.errors import ModelError
from plmfair.scoring.specs import ModelSpec
from plmfair.scoring.loader import load
for name, family, path in [("mt5", "seq2seq", sys.argv[1]), ("flaubert", "mlm", sys.argv[2])]:
    try:
        load(ModelSpec(name=name, family=family, path=path, allow_pickle=True), device="cpu")
    except ModelError as exc:
        print(exc)
"""


def test_missing_tokenizer_packages_are_named_with_the_pip_command(replicas, tmp_path):
    """Without sentencepiece, protobuf and sacremoses (imports blocked), one line each naming the
    packages and the pip command, not transformers' "tiktoken is required"."""
    blocked = tmp_path / "blocked"
    for module in ("sentencepiece", "google/protobuf", "sacremoses"):
        (blocked / module).mkdir(parents=True)
        (blocked / module / "__init__.py").write_text("raise ImportError('blocked for this test')\n")
    (blocked / "google" / "__init__.py").write_text("")
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKED, str(replicas["t5_spiece"]), str(replicas["flaubert_bpe"])],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(blocked), "PATH": "/usr/bin"},
        timeout=300,
    )
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 2, proc.stdout + proc.stderr
    assert "its tokenizer needs sentencepiece, protobuf, not installed; run " in lines[0]
    assert f"{sys.executable} -m pip install sentencepiece protobuf" in lines[0] and "tiktoken" not in lines[0]
    assert "its tokenizer needs sacremoses, not installed" in lines[1]


def test_device_map_splits_a_model_and_scores_the_same(tiny_model):
    """models.<name>.device_map: auto with a max_memory too small for the model spreads it (here
    over the CPU and disk, the CPU stand-in for several GPUs); every study's numbers are unchanged."""
    path = tiny_model("gpt2", TEXTS, vocab_size=300, seed=4)
    whole = load(ModelSpec(name="g", family="causal", path=str(path)), device="cpu")
    size = sum(p.numel() * p.element_size() for p in whole.model.parameters())
    split = load(
        ModelSpec(
            name="g", family="causal", path=str(path), device_map="auto", max_memory={"cpu": str(size * 8 // 10)}
        ),
        device="cpu",
    )
    assert {"cpu", "disk"} <= set(split.model.hf_device_map.values())
    assert "cpu" in placement(split.model) and "disk" in placement(split.model)
    a, b = (m.scorer(progress=False) for m in (whole, split))
    pairs = [MinimalPair(m, le, True) for m, le in zip(PAIRS["sent_more"], PAIRS["sent_less"], strict=True)]
    assert a.score_sentences(pairs, protocol="sentence_log_likelihood") == b.score_sentences(
        pairs, protocol="sentence_log_likelihood"
    )
    pd.testing.assert_frame_equal(predict(GAPS, a, k=5), predict(GAPS, b, k=5))
    assert "device_map" in split.metadata() and split.metadata()["device_map"].startswith("cpu")


def test_replica_kinds_are_the_schema_build_kinds(repo):
    from plmfair.config import config_schema

    schema = config_schema()
    kinds = schema["properties"]["models"]["additionalProperties"]["properties"]["build"]["properties"]["kind"]["enum"]
    assert sorted(kinds) == sorted(TINY_KINDS)


def test_the_configuration_guide_documents_every_default_model_layout(repo):
    import yaml

    readme = (repo / "docs" / "configuration.md").read_text(encoding="utf-8")
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    for name, entry in config["models"].items():
        assert f"`{entry['hf_id']}`" in readme, name
