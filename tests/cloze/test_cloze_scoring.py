"""MozArt scoring on tiny models: whole-word filters, single-word seq2seq spans, answer scores, bad input."""

import types

import pandas as pd
import pytest
import torch

from plmfair.cloze.scoring_job import cloze_sentences, predict, score_answers
from plmfair.errors import DataError, ModelError
from plmfair.scoring import beam, scorer_class
from plmfair.scoring.mlm import MaskedLMScorer
from plmfair.scoring.pieces import whole_word_vocabulary
from plmfair.scoring.seq2seq import SHARED_ENCODER_ATTENTION, Seq2SeqScorer, shared_encoder_attention, span_vocabulary
from plmfair.scoring.tokenization import word_start_rule

TEXTS = [
    "Les membres de la commission se sont réunis lundi.",
    "Nous devons adopter les nouvelles règles rapidement.",
    "C'est un rapport très important et très utile.",
    "The members of the committee met on Monday.",
    "Die Mitglieder des Ausschusses trafen sich am Montag.",
] * 4
SENTS = pd.DataFrame(
    {
        "s_id": ["1", "2"],
        "text": ["Les [MASK] de la commission se sont réunis.", "Nous devons [MASK] les règles."],
    }
)


@pytest.fixture(scope="module")
def models(tiny_model):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoModelForSeq2SeqLM, AutoTokenizer

    out = {}
    for kind in ("bert", "xlmr", "mt5", "gpt2"):
        # (byte-level BPE starts from its 256 bytes: GPT-2's needs more entries to hold whole words)
        vocab_size = 600 if kind == "gpt2" else 200
        path = tiny_model(kind, TEXTS, vocab_size=vocab_size, seed=3)
        cls = {"mt5": AutoModelForSeq2SeqLM, "gpt2": AutoModelForCausalLM}.get(kind, AutoModelForMaskedLM)
        out[kind] = (cls.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path))
    return out


def test_whole_word_filter_wordpiece(models):
    _, tok = models["bert"]
    assert word_start_rule(tok) == "wordpiece"
    words = whole_word_vocabulary(tok)
    vocab = tok.get_vocab()
    assert all(not vocab_token.startswith("##") for vocab_token, i in vocab.items() if i in words)
    assert not set(words) & set(tok.all_special_ids)
    assert all(any(c.isalpha() for c in w) for w in words.values())
    assert "." not in words.values()


def test_whole_word_filter_sentencepiece(models):
    _, tok = models["xlmr"]
    assert word_start_rule(tok) == "metaspace"
    words = whole_word_vocabulary(tok)
    inv = {i: t for t, i in tok.get_vocab().items()}
    assert words and all(inv[i].startswith("▁") and not w.startswith("▁") for i, w in words.items())


@pytest.mark.parametrize("kind", ["bert", "xlmr"])
def test_predict_mlm_candidates_are_whole_words(models, kind):
    model, tok = models[kind]
    preds = predict(SENTS, MaskedLMScorer(model, tok, name=kind, uncased=kind == "bert"), k=10)
    words = set(whole_word_vocabulary(tok).values())
    assert set(preds["candidate"]) <= words
    assert preds.groupby("s_id")["rank"].apply(list).tolist() == [list(range(1, 11))] * 2
    assert preds.groupby("s_id")["logprob"].apply(lambda s: s.is_monotonic_decreasing).all()


def test_seq2seq_spans_are_single_words(models):
    model, tok = models["mt5"]
    preds = predict(SENTS, Seq2SeqScorer(model, tok, name="mt5"), k=15)
    assert len(preds) == 30
    vocab = span_vocabulary(tok, model.get_output_embeddings().weight.shape[0], "mt5")
    for word in preds["candidate"]:
        assert word and " " not in word  # no word boundary inside the span
        pieces = tok(word, add_special_tokens=False)["input_ids"]
        assert bool(vocab.start[pieces[0]])
    assert preds.groupby("s_id")["logprob"].apply(lambda s: s.is_monotonic_decreasing).all()


def test_seq2seq_search_with_its_cache_proposes_what_a_full_rerun_does(models):
    """The decoder's key-value cache (self- and cross-attention) follows the beams: the candidates
    and their log-probabilities equal those of a search that reruns every beam's whole span, up to
    float32 rounding of the differently shaped products."""
    model, tok = models["mt5"]
    cached = predict(SENTS, Seq2SeqScorer(model, tok, name="mt5"), k=15, num_beams=20)
    rerun_scorer = Seq2SeqScorer(model, tok, name="mt5")
    rerun_scorer.beam_cache = False
    rerun = predict(SENTS, rerun_scorer, k=15, num_beams=20)
    assert len(cached) == 30
    pd.testing.assert_frame_equal(cached, rerun, check_exact=False, atol=1e-5)


@pytest.mark.parametrize("length", [1, 2])
def test_shared_encoder_attention_is_attention_over_each_beams_copy(length):
    """The search's cross-attention over keys and values held once per sentence equals transformers'
    SDPA attention over a copy per beam: uneven beams per sentence (one sentence with none), padded
    encoder positions, a position bias, one query per beam (a step) or several (the prefix)."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    torch.manual_seed(0)
    sentences, heads, positions, dim = 3, 2, 5, 4
    rows = torch.tensor([0, 0, 0, 2, 2])
    query = torch.randn(len(rows), heads, length, dim)
    key, value = torch.randn(sentences, heads, positions, dim), torch.randn(sentences, heads, positions, dim)
    mask = torch.ones(sentences, 1, 1, positions, dtype=torch.bool)
    mask[2, ..., 3:] = False
    bias = torch.randn(1, heads, length, positions)
    cross = types.SimpleNamespace(is_causal=False, training=False)
    shared, _ = shared_encoder_attention(
        cross, query, key, value, mask, beam_rows=rows, position_bias=bias, scaling=1.0
    )
    copies, _ = sdpa_attention_forward(
        cross, query, key[rows], value[rows], mask[rows], position_bias=bias, scaling=1.0
    )
    assert shared.shape == copies.shape == (len(rows), length, heads, dim)
    torch.testing.assert_close(shared, copies)


def test_the_search_leaves_the_models_attention_as_it_was(models, monkeypatch):
    model, tok = models["mt5"]
    before = model.config._attn_implementation
    predict(SENTS, Seq2SeqScorer(model, tok, name="mt5"), k=3, num_beams=5)
    assert model.config._attn_implementation == before != SHARED_ENCODER_ATTENTION
    # a model that cannot switch (not written with transformers' attention interface) is named
    monkeypatch.setattr(model, "set_attn_implementation", lambda name: None)
    with pytest.raises(ModelError, match="'mt5' cannot switch its attention implementation"):
        predict(SENTS, Seq2SeqScorer(model, tok, name="mt5"), k=3, num_beams=5)


@pytest.mark.parametrize("kind", ["mt5", "gpt2"])
def test_sentences_searched_together_propose_what_each_does_alone(models, monkeypatch, kind):
    """The batched search (every sentence's beams in one model call per step: mT5's encoder inputs
    right-padded, a causal LM's left contexts left-padded, one with no context at all) returns the
    candidates and log-probabilities of a search of each sentence alone."""
    model, tok = models[kind]
    sentences = pd.concat([SENTS, pd.DataFrame({"s_id": ["3"], "text": ["[MASK] sont réunis hier."]})])
    scorer = scorer_class("seq2seq" if kind == "mt5" else "causal")
    together = predict(sentences, scorer(model, tok, name=kind), k=15, num_beams=20)
    monkeypatch.setattr(beam, "SEARCH_BUDGET_FACTOR", 0)  # a batch of one sentence each
    alone = predict(sentences, scorer(model, tok, name=kind), k=15, num_beams=20)
    assert together["s_id"].nunique() == len(sentences) and len(together) > 30
    pd.testing.assert_frame_equal(together, alone, check_exact=False, atol=1e-5)


def test_seq2seq_answer_score_matches_its_prediction(models):
    model, tok = models["mt5"]
    preds = predict(SENTS.iloc[:1], Seq2SeqScorer(model, tok, name="mt5"), k=3)
    best = preds.iloc[0]
    answers = pd.DataFrame({"s_id": ["1"], "text": [SENTS.text[0]], "answer": [best["candidate"]]})
    scores = score_answers(answers, Seq2SeqScorer(model, tok, name="mt5"))
    # the tokenizer may split the surface form differently from the beam; when it does not, scores agree
    if tok(best["candidate"], add_special_tokens=False)["input_ids"] == tok.convert_tokens_to_ids(
        tok.tokenize(best["candidate"])
    ):
        assert scores.loc[0, "logprob"] == pytest.approx(best["logprob"], abs=1e-4)


def test_seq2seq_answers_batched_score_as_one_at_a_time(models):
    """The answers to a sentence share one encoder pass and go through the decoder together; each
    score equals the one-answer-per-forward-pass score (a batch of one, token budget 1) up to
    float32 rounding of the batched matrix products, and no answer changes rank in its sentence."""
    model, tok = models["mt5"]
    answers = pd.DataFrame(
        {
            "s_id": ["1"] * 5 + ["2"] * 4,
            "text": [SENTS.text[0]] * 5 + [SENTS.text[1]] * 4,
            "answer": [
                "membres",
                "chefs",
                "présidents du comité",
                "x",
                "membres de la commission",
                "adopter",
                "appliquer",
                "changer",
                "a",
            ],
        }
    )
    batched = score_answers(answers, Seq2SeqScorer(model, tok, name="mt5", token_budget=8192))
    single = score_answers(answers, Seq2SeqScorer(model, tok, name="mt5", token_budget=1))
    assert (batched["n_pieces"] == single["n_pieces"]).all() and single["n_pieces"].nunique() > 1
    assert (batched["logprob"] - single["logprob"]).abs().max() < 1e-5
    for s_id in ("1", "2"):
        rank = {
            name: frame[frame["s_id"] == s_id]["logprob"].rank().tolist()
            for name, frame in (("batched", batched), ("single", single))
        }
        assert rank["batched"] == rank["single"]


def test_answer_scores_mlm_multi_piece_and_multiword(models):
    model, tok = models["bert"]
    answers = pd.DataFrame(
        {
            "s_id": ["1", "1", "2"],
            "text": [SENTS.text[0], SENTS.text[0], SENTS.text[1]],
            "answer": ["membres", "Commissionnaires spéciaux", "adopter"],
        }
    )
    s = score_answers(answers, MaskedLMScorer(model, tok, name="bert", uncased=True))
    assert s["multiword"].tolist() == [False, True, False]
    assert (s["n_pieces"] >= 1).all() and s.loc[1, "n_pieces"] > 1
    assert (s["logprob"] < 0).all()
    assert s.loc[0, "answer_norm"] == "membres"


def test_one_mask_per_sentence_required():
    ann = pd.DataFrame({"lang": ["en", "en"], "s_id": ["7", "8"], "text": ["No gap here.", "Two [MASK] [MASK]."]})
    with pytest.raises(DataError, match="language en, s_id 7: the sentence has 0"):
        cloze_sentences(ann, "en")
    with pytest.raises(DataError, match="s_id 8: the sentence has 2"):
        cloze_sentences(ann.iloc[[1]], "en")


def test_models_without_mask_or_sentinels_are_named(models):
    model, tok = models["mt5"]
    with pytest.raises(ModelError, match="model 'mt5' has no mask token"):
        predict(SENTS, MaskedLMScorer(model, tok, name="mt5"))
    bert_model, bert_tok = models["bert"]
    with pytest.raises(ModelError, match="model 'bert' has no sentinel tokens"):
        predict(SENTS, Seq2SeqScorer(bert_model, bert_tok, name="bert"))


def test_too_long_sentences_and_answers_are_skipped_and_counted(tiny_model, tmp_path):
    """As CrowS-Pairs' too_long: a sentence or an answer longer than the model accepts gets no
    prediction or score, its annotations leave the metrics and are counted per group (n_too_long),
    and Table 1 says how many each model skipped."""
    from plmfair.cloze.metrics import metrics_for_models, set_overview
    from plmfair.cloze.scoring_job import score_cloze_set
    from plmfair.cloze.tables import table1
    from plmfair.io.parquet import write_parquet
    from plmfair.rendering.table_format import printed
    from plmfair.scoring.specs import ModelSpec

    path = tiny_model("bert", TEXTS, vocab_size=200, seed=3, max_length=32)
    long_text = "Les [MASK] de " + " ".join(["la commission"] * 40) + "."
    long_answer = " ".join(["membres"] * 40)
    rows = [
        ("1", SENTS.text[0], "membres", "u1", "MN"),
        ("1", SENTS.text[0], long_answer, "u2", "FN"),
        ("2", SENTS.text[1], "adopter", "u1", "MN"),
        ("3", long_text, "membres", "u1", "MN"),
        ("3", long_text, "chefs", "u3", "FNN"),
    ]
    annotations = pd.DataFrame(rows, columns=["s_id", "text", "answer", "u_id", "group"]).assign(lang="fr")
    preds, answers, meta = score_cloze_set(
        annotations, annotations, ModelSpec(name="b", family="mlm", path=str(path)), langs=["fr"], k=5, device="cpu"
    )
    assert set(preds["s_id"]) == {"1", "2"} and "3" not in set(answers["s_id"])
    assert long_answer not in set(answers["answer"]) and {"membres", "adopter"} <= set(answers["answer"])
    assert meta["too_long"] == {"fr": {"sentences": ["3"], "answers": [["1", long_answer]]}}
    write_parquet(preds, tmp_path / "p.parquet", meta=meta)
    write_parquet(answers, tmp_path / "a.parquet", meta=meta)
    metrics, scores = metrics_for_models(
        annotations,
        runs=[{"model": "b", "predictions": tmp_path / "p.parquet", "answer_scores": tmp_path / "a.parquet"}],
        max_unknown=0.05,
    )
    counted = metrics.set_index("group")
    assert counted.loc["all", "n"] == 2 and counted.loc["all", "n_too_long"] == 3
    assert counted.loc["FN", "n_too_long"] == 1 and counted.loc["FNN", "n_too_long"] == 1
    assert counted.loc["MN", "n_too_long"] == 1 and len(scores) == 2
    table = printed(table1(set_overview(annotations, {"b": meta})))
    assert table.iloc[-1].tolist() == ["Skipped, longer than b accepts (sentences and answers)", "2"]


def test_cloze_files_of_another_version_are_refused_with_the_command_that_rebuilds_them(tmp_path):
    """Predictions with log-probabilities stored as text, answer scores without n_pieces, metrics of
    a group this version does not write: each refused at read time, naming the file, the column,
    what was expected and the command that rebuilds it."""
    from plmfair.cloze.schemas import METRICS_SCHEMA, read_cloze_scores, read_metrics
    from plmfair.cloze.scoring_job import ANSWER_DTYPES, PREDICTION_DTYPES
    from plmfair.io.parquet import write_parquet

    preds = pd.DataFrame(
        {"lang": ["en"], "s_id": ["1"], "rank": [1], "candidate": ["x"], "candidate_norm": ["x"], "logprob": ["-1.5"]}
    )
    write_parquet(preds, tmp_path / "p.parquet")
    with pytest.raises(
        DataError,
        match=r"p\.parquet: column 'logprob' holds \w+ values \('-1\.5'\), expected "
        r"number; .* delete it \(rm .*p\.parquet\) and run the workflow again",
    ):
        read_cloze_scores(tmp_path / "p.parquet", PREDICTION_DTYPES)
    answers = pd.DataFrame({c: pd.Series([], dtype=t) for c, t in ANSWER_DTYPES.items() if c != "n_pieces"})
    write_parquet(answers, tmp_path / "a.parquet")
    with pytest.raises(DataError, match=r"a\.parquet: missing columns \['n_pieces'\]"):
        read_cloze_scores(tmp_path / "a.parquet", ANSWER_DTYPES)
    metrics = pd.DataFrame({c: [0.5] for c in METRICS_SCHEMA}).assign(model="m", lang="en", group="M")
    write_parquet(metrics, tmp_path / "metrics.parquet")
    with pytest.raises(DataError, match=r"column 'group' holds 'M' \(row 0\), expected one of MN, FN, MNN, FNN, all"):
        read_metrics(tmp_path / "metrics.parquet")
    read_metrics_ok = metrics.assign(group="MN")
    write_parquet(read_metrics_ok, tmp_path / "metrics.parquet")
    assert read_metrics(tmp_path / "metrics.parquet")["group"].tolist() == ["MN"]


def test_a_new_gap_protocol_is_its_functions_and_one_registry_line(models, monkeypatch):
    """A gap protocol written above the masked LM's primitives in a test module (answers read with
    every piece of the answer masked at once), registered with one line and named by the family,
    scores through the scorer unchanged; checked against a plain forward pass."""
    import dataclasses

    import torch

    from plmfair.scoring import FAMILIES, protocols

    def all_masked(scorer, items):
        copies, n_pieces = [], []
        for text, answer in items:
            ids, span = scorer.filled(text, answer)
            n_pieces.append(len(span))
            copies.append(scorer.masked_copies(ids, [[p, *(q for q in span if q != p)] for p in span]))
        return list(zip(scorer.masked_copies_log_probs(copies, desc="all masked"), n_pieces, strict=True))

    fill_mask = protocols.CLOZE_PROTOCOLS["fill_mask"]
    monkeypatch.setitem(
        protocols.CLOZE_PROTOCOLS,
        "all_masked",
        protocols.ClozeProtocol("all_masked", "a test", fill_mask.predict, all_masked, fill_mask.primitives),
    )
    monkeypatch.setitem(FAMILIES, "mlm", dataclasses.replace(FAMILIES["mlm"], cloze_protocol="all_masked"))
    model, tok = models["bert"]
    scorer = MaskedLMScorer(model, tok, name="bert", uncased=True)
    text, answer = SENTS.text[0], "commissionnaires"
    [(got, n)] = scorer.score_answers([(text, answer)])
    ids, span = scorer.filled(text, answer)
    masked = torch.tensor([[tok.mask_token_id if i in span else t for i, t in enumerate(ids)]])
    with torch.inference_mode():
        logp = torch.log_softmax(model(input_ids=masked).logits[0].float(), dim=-1)
    assert n == len(span) > 1
    assert got == pytest.approx(sum(logp[p, ids[p]].item() for p in span), abs=1e-4)
    assert scorer.predict_gap([text], k=2) == MaskedLMScorer(model, tok, name="bert", uncased=True).predict_gap(
        [text], k=2
    )
