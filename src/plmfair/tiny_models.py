"""Tiny random-weight models with real trained tokenizers, for tests and the offline demo.

No pretrained model can be downloaded on the development and CI machines, so the
workflow builds its own: a tokenizer trained (``tokenizers`` library) on the given
text, of the kind each real model family uses, and a model of the real
architecture with a few layers and random weights. Their scores mean nothing;
what they exercise is every code path the real models take. The demo's models are then
trained for a few hundred steps to fill MozArt's gaps with the annotators' answers
(:func:`train_briefly`), so that its figures show non-zero precision and group differences.

Kinds (:data:`TINY_KINDS`): ``bert`` (WordPiece, uncased and accent-stripping like mBERT
uncased), ``xlmr`` (SentencePiece-style Unigram with the ``▁`` word marker, like XLM-R and
CamemBERT), ``roberta`` (byte-level BPE), ``albert`` (Unigram, lower-cased), ``flaubert``
(BPE with ``</w>`` word ends, ``<special1>`` mask), ``mt5`` (Unigram seq2seq with
``<extra_id_N>`` sentinels), and two decoder-only LMs: ``gpt2`` (byte-level BPE whose one
special token ``<|endoftext|>`` is BOS, EOS and padding) and ``llama`` (SentencePiece-style
BPE with the ``▁`` marker on the first word too, BOS ``<s>`` added by the tokenizer, no
padding token). These save a ``tokenizer.json`` and safetensors.

Replicas of real repository layouts, for the models whose Hub files differ from that:
``t5_spiece`` (google/mt5-base: a bare ``spiece.model`` and pickle weights),
``albert_spiece`` (qwant/fralbert-base: ``spiece.model`` + ``spiece.vocab``),
``xlmr_spiece`` and ``camembert_spiece`` (``sentencepiece.bpe.model`` without and with
``tokenizer.json``) and ``flaubert_bpe`` (``vocab.json`` + ``merges.txt`` read by the Python
``FlaubertTokenizer``). Their SentencePiece models are trained by the ``sentencepiece``
library; loading them needs sentencepiece and protobuf (and sacremoses for FlauBERT), as the
real ones do.

A build is reproducible: the same text gives the same files. The weights are drawn from a
seeded generator; the tokenizers are trained with byte-level or Metaspace BPE, whose
training is deterministic, and the WordPiece and Unigram vocabularies take their pieces
from such a BPE run (the ``tokenizers`` WordPiece and Unigram trainers break ties in hash
map order, so two runs differ). The FlauBERT-style suffix BPE trainer is not reproducible
either; that kind is used by tests that compare two implementations on one build only.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import torch
from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from plmfair.atomic import atomic_dir
from plmfair.core import MASK
from plmfair.io import read_parquet

log = logging.getLogger(__name__)

N_SENTINELS = 100


def _template(tok: Tokenizer, bos: str, eos: str) -> None:
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} $B {eos}",
        special_tokens=[(bos, tok.token_to_id(bos)), (eos, tok.token_to_id(eos))],
    )


def _bpe_pieces(texts: list[str], vocab_size: int, normalizer, pre_tokenizer) -> tuple[list[str], Tokenizer]:
    """The vocabulary a plain BPE run learns on ``texts`` (in the order learnt: the alphabet, then
    the merges), and that BPE tokenizer. Plain BPE training is reproducible run to run; the
    WordPiece and Unigram trainers of ``tokenizers`` are not (their ties and sums follow a hash
    map's order), so those two kinds take their pieces from here."""
    bpe = Tokenizer(models.BPE())
    bpe.normalizer = normalizer
    bpe.pre_tokenizer = pre_tokenizer
    bpe.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False))
    vocab = bpe.get_vocab()
    return sorted(vocab, key=vocab.get), bpe


def _train_wordpiece(texts: list[str], vocab_size: int) -> Tokenizer:
    """A WordPiece tokenizer (BERT uncased) whose pieces, word-initial and ``##`` continuations,
    are those a BPE run learns on the text."""
    normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces, _ = _bpe_pieces(texts, vocab_size, normalizer, pre_tokenizers.BertPreTokenizer())
    vocab = list(specials)
    for piece in pieces:
        vocab += [piece, f"##{piece}"]
    vocab = list(dict.fromkeys(vocab))[:vocab_size]
    tok = Tokenizer(models.WordPiece({p: i for i, p in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    _template(tok, "[CLS]", "[SEP]")
    tok.decoder = decoders.WordPiece()
    return tok


def _train_unigram(texts: list[str], vocab_size: int, specials: list[str], *, lowercase: bool = False) -> Tokenizer:
    """A SentencePiece-style Unigram tokenizer (``▁`` word marker): the pieces a BPE run learns on the
    text, scored by the log of their relative frequency in the text as that BPE run splits it."""
    from collections import Counter

    norm = [normalizers.NFKC()] + ([normalizers.Lowercase()] if lowercase else [])
    metaspace = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    pieces, bpe = _bpe_pieces(texts, vocab_size - len(specials), normalizers.Sequence(norm), metaspace)
    counts = Counter(t for enc in bpe.encode_batch(texts) for t in enc.tokens)
    total = sum(counts.values()) + len(pieces)
    unk = "<unk>" if "<unk>" in specials else "[UNK]"
    vocab = [(sp, 0.0) for sp in specials] + [(p, math.log((counts[p] + 1) / total)) for p in pieces]
    tok = Tokenizer(models.Unigram(vocab, unk_id=specials.index(unk)))
    tok.normalizer = normalizers.Sequence(norm)
    tok.pre_tokenizer = metaspace
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.add_special_tokens(specials)
    return tok


def _train_bytelevel_bpe(texts: list[str], vocab_size: int,
                         specials: tuple[str, ...] = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=list(specials),
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    if "<s>" in specials:
        tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                          ("<s>", tok.token_to_id("<s>")))
    return tok


def _train_metaspace_bpe(texts: list[str], vocab_size: int) -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"]))
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", tok.token_to_id("<s>"))]
    )
    return tok


def _train_suffix_bpe(texts: list[str], vocab_size: int) -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    tok.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=["<s>", "</s>", "<pad>", "<unk>", "<special1>"],
            end_of_word_suffix="</w>",
        ),
    )
    _template(tok, "<s>", "</s>")
    return tok


@dataclass(frozen=True)
class Sizes:
    """The shape of a tiny model (``models.<name>.build`` in the config)."""

    vocab_size: int = 2000
    hidden_size: int = 32
    num_layers: int = 2
    num_heads: int = 2
    max_length: int = 128

    @property
    def inter(self) -> int:
        return self.hidden_size * 2


def _bert(texts: list[str], z: Sizes):
    import transformers as tf

    hf_tok = tf.BertTokenizer(
        tokenizer_object=_train_wordpiece(texts, z.vocab_size), unk_token="[UNK]", pad_token="[PAD]",
        cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]", do_lower_case=True, model_max_length=z.max_length,
    )
    model = tf.BertForMaskedLM(tf.BertConfig(
        vocab_size=len(hf_tok), hidden_size=z.hidden_size, num_hidden_layers=z.num_layers,
        num_attention_heads=z.num_heads, intermediate_size=z.inter, max_position_embeddings=z.max_length,
        pad_token_id=hf_tok.pad_token_id,
    ))
    return hf_tok, model


def _xlmr(texts: list[str], z: Sizes):
    import transformers as tf

    tok = _train_unigram(texts, z.vocab_size, ["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    _template(tok, "<s>", "</s>")
    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>",
        cls_token="<s>", sep_token="</s>", mask_token="<mask>", model_max_length=z.max_length,
    )
    return hf_tok, _xlmr_model(hf_tok, z)


def _xlmr_model(hf_tok, z: Sizes):
    import transformers as tf

    return tf.XLMRobertaForMaskedLM(tf.XLMRobertaConfig(
        vocab_size=len(hf_tok), hidden_size=z.hidden_size, num_hidden_layers=z.num_layers,
        num_attention_heads=z.num_heads, intermediate_size=z.inter, max_position_embeddings=z.max_length + 2,
        pad_token_id=hf_tok.pad_token_id, bos_token_id=hf_tok.bos_token_id, eos_token_id=hf_tok.eos_token_id,
    ))


def _albert(texts: list[str], z: Sizes):
    import transformers as tf

    tok = _train_unigram(texts, z.vocab_size, ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"], lowercase=True)
    _template(tok, "[CLS]", "[SEP]")
    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]", do_lower_case=True, model_max_length=z.max_length,
    )
    return hf_tok, _albert_model(hf_tok, z)


def _albert_model(hf_tok, z: Sizes):
    import transformers as tf

    return tf.AlbertForMaskedLM(tf.AlbertConfig(
        vocab_size=len(hf_tok), embedding_size=max(8, z.hidden_size // 2), hidden_size=z.hidden_size,
        num_hidden_layers=z.num_layers, num_attention_heads=z.num_heads, intermediate_size=z.inter,
        max_position_embeddings=z.max_length, pad_token_id=hf_tok.pad_token_id,
    ))


def _roberta(texts: list[str], z: Sizes):
    import transformers as tf

    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=_train_bytelevel_bpe(texts, z.vocab_size), bos_token="<s>", eos_token="</s>",
        unk_token="<unk>", pad_token="<pad>", cls_token="<s>", sep_token="</s>", mask_token="<mask>",
        model_max_length=z.max_length,
    )
    model = tf.RobertaForMaskedLM(tf.RobertaConfig(
        vocab_size=len(hf_tok), hidden_size=z.hidden_size, num_hidden_layers=z.num_layers,
        num_attention_heads=z.num_heads, intermediate_size=z.inter, max_position_embeddings=z.max_length + 2,
        pad_token_id=hf_tok.pad_token_id, bos_token_id=hf_tok.bos_token_id, eos_token_id=hf_tok.eos_token_id,
    ))
    return hf_tok, model


def _flaubert(texts: list[str], z: Sizes):
    import transformers as tf

    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=_train_suffix_bpe(texts, z.vocab_size), bos_token="<s>", eos_token="</s>",
        unk_token="<unk>", pad_token="<pad>", cls_token="<s>", sep_token="</s>", mask_token="<special1>",
        model_max_length=z.max_length,
    )
    return hf_tok, _flaubert_model(hf_tok, z)


def _flaubert_model(hf_tok, z: Sizes):
    import transformers as tf

    # FlaubertTokenizer has no EOS token: </s> is its separator
    eos = hf_tok.eos_token_id if hf_tok.eos_token_id is not None else hf_tok.sep_token_id
    return tf.FlaubertWithLMHeadModel(tf.FlaubertConfig(
        vocab_size=len(hf_tok), emb_dim=z.hidden_size, n_layers=z.num_layers, n_heads=z.num_heads,
        max_position_embeddings=z.max_length, causal=False, bos_index=hf_tok.bos_token_id,
        eos_index=eos, pad_index=hf_tok.pad_token_id, unk_index=hf_tok.unk_token_id,
        mask_index=hf_tok.mask_token_id, pad_token_id=hf_tok.pad_token_id, mask_token_id=hf_tok.mask_token_id,
    ))


def _gpt2(texts: list[str], z: Sizes):
    import transformers as tf

    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=_train_bytelevel_bpe(texts, z.vocab_size, specials=("<|endoftext|>",)),
        bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>", model_max_length=z.max_length,
    )
    end = hf_tok.eos_token_id
    model = tf.GPT2LMHeadModel(tf.GPT2Config(
        vocab_size=len(hf_tok), n_positions=z.max_length, n_embd=z.hidden_size, n_layer=z.num_layers,
        n_head=z.num_heads, n_inner=z.inter, bos_token_id=end, eos_token_id=end,
    ))
    return hf_tok, model


def _llama(texts: list[str], z: Sizes):
    import transformers as tf

    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=_train_metaspace_bpe(texts, z.vocab_size), bos_token="<s>", eos_token="</s>",
        unk_token="<unk>", model_max_length=z.max_length,
    )
    model = tf.LlamaForCausalLM(tf.LlamaConfig(
        vocab_size=len(hf_tok), hidden_size=z.hidden_size, intermediate_size=z.inter, num_hidden_layers=z.num_layers,
        num_attention_heads=z.num_heads, num_key_value_heads=z.num_heads, max_position_embeddings=z.max_length,
        bos_token_id=hf_tok.bos_token_id, eos_token_id=hf_tok.eos_token_id, tie_word_embeddings=False,
    ))
    return hf_tok, model


def _mt5(texts: list[str], z: Sizes):
    import transformers as tf

    sentinels = [f"<extra_id_{i}>" for i in range(N_SENTINELS)]
    tok = _train_unigram(texts, z.vocab_size, ["<pad>", "</s>", "<unk>"])
    tok.add_special_tokens(sentinels)
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))]
    )
    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="</s>", unk_token="<unk>", pad_token="<pad>",
        additional_special_tokens=sentinels, model_max_length=z.max_length,
    )
    return hf_tok, _mt5_model(hf_tok, z)


def _mt5_model(hf_tok, z: Sizes, vocab_size: int | None = None):
    import transformers as tf

    return tf.MT5ForConditionalGeneration(tf.MT5Config(
        vocab_size=vocab_size or len(hf_tok), d_model=z.hidden_size, d_kv=max(8, z.hidden_size // z.num_heads),
        d_ff=z.inter, num_layers=z.num_layers, num_decoder_layers=z.num_layers, num_heads=z.num_heads,
        pad_token_id=hf_tok.pad_token_id, eos_token_id=hf_tok.eos_token_id, decoder_start_token_id=hf_tok.pad_token_id,
        tie_word_embeddings=False,
    ))


def _save_pretrained(tokenizer, model, out: Path, *, weights: str = "safetensors") -> None:
    """The tokenizer's files and the model's config and weights, as ``save_pretrained`` writes them;
    ``weights: pickle`` writes ``pytorch_model.bin`` instead of safetensors (repositories that
    hold only pickles)."""
    model.eval()
    if tokenizer is not None:
        tokenizer.save_pretrained(out)
    if weights == "pickle":
        model.config.save_pretrained(out)
        torch.save(model.state_dict(), out / "pytorch_model.bin")
    else:
        model.save_pretrained(out)


# ---- A few training steps, so that the demo's figures show something.


def _pad(rows: list[list[int]], value: int) -> torch.Tensor:
    width = max(map(len, rows))
    return torch.tensor([row + [value] * (width - len(row)) for row in rows])


def _batch(tokenizer, family: str, gaps: list[tuple[str, str]]) -> dict[str, torch.Tensor]:
    """One batch of cloze items (text with ``[MASK]``, answer) in the family's own form: the answer's
    tokens masked and predicted (masked LM), the sentence with the answer filled in (causal LM), or
    the answer filled in for a sentinel (seq2seq)."""

    if family == "seq2seq":
        sources = [text.replace(MASK, "<extra_id_0>") for text, _ in gaps]
        targets = [f"<extra_id_0> {answer}<extra_id_1>" for _, answer in gaps]  # as the scorer ends a span
        batch = tokenizer(sources, padding=True, return_tensors="pt")
        labels = tokenizer(text_target=targets, padding=True, return_tensors="pt")["input_ids"]
        return {**batch, "labels": labels.masked_fill(labels == tokenizer.pad_token_id, -100)}
    ids, labels = [], []
    for text, answer in gaps:
        start = text.index(MASK)
        end = start + len(answer)
        enc = tokenizer(text.replace(MASK, answer, 1), return_offsets_mapping=True)
        in_answer = [a < end and b > start for a, b in enc["offset_mapping"]]
        row = list(enc["input_ids"])
        if family == "mlm":
            labels.append([t if inside else -100 for t, inside in zip(row, in_answer, strict=True)])
            row = [tokenizer.mask_token_id if inside else t for t, inside in zip(row, in_answer, strict=True)]
        else:  # a causal LM ranks a filled gap by the whole sentence's likelihood: it learns them all
            labels.append(row)
        ids.append(row)
    return {"input_ids": _pad(ids, 0), "attention_mask": _pad([[1] * len(row) for row in ids], 0),
            "labels": _pad(labels, -100)}


def train_briefly(tokenizer, model, family: str, gaps: list[tuple[str, str]], *, steps: int, seed: int,
                  batch_size: int = 16, learning_rate: float = 1e-2) -> list[float]:
    """``steps`` AdamW steps on batches drawn (seeded) from cloze items (text with ``[MASK]``, the
    answer an annotator gave): a tiny model then predicts the demo's
    answers, more often the more annotators gave them, so that the demo's precision, rank and
    group figures show non-zero quantities. Returns the losses."""
    import random

    rng = random.Random(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model.train()
    losses = []
    for _ in range(steps):
        loss = model(**_batch(tokenizer, family, rng.sample(gaps, min(batch_size, len(gaps))))).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
        losses.append(loss.item())
    model.eval()
    return losses


# ---- Replicas of real repository layouts: tokenizer files of the real kinds, trained locally.


def _sentencepiece(texts: list[str], out: Path, prefix: str, z: Sizes, *, keep_vocab: bool = False, **options) -> Path:
    """Train a SentencePiece model on ``texts`` (the ``sentencepiece`` library itself, one thread, so
    a build is reproducible) and write ``<prefix>.model`` to ``out`` (and ``<prefix>.vocab``, its
    pieces and scores as text, with ``keep_vocab``)."""
    import sentencepiece as spm

    corpus = out / f".{prefix}.train.txt"
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(out / prefix), vocab_size=z.vocab_size, hard_vocab_limit=False,
        character_coverage=1.0, num_threads=1, shuffle_input_sentence=False, minloglevel=2, **options,
    )
    corpus.unlink()
    if not keep_vocab:
        (out / f"{prefix}.vocab").unlink()
    return out / f"{prefix}.model"


def _tokenizer_config(out: Path, tokenizer_class: str, **fields) -> None:
    (out / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": tokenizer_class, **fields}, indent=1) + "\n", encoding="utf-8")


def _reloaded(out: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(out)


def _t5_spiece(texts: list[str], z: Sizes, out: Path) -> None:
    """google/mt5-base's layout: ``spiece.model`` (SentencePiece Unigram; pad 0, eos 1, unk 2) and
    ``T5Tokenizer`` with 100 sentinels, no tokenizer.json; ``pytorch_model.bin`` only."""
    _sentencepiece(texts, out, "spiece", z, model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
    _tokenizer_config(out, "T5Tokenizer", extra_ids=N_SENTINELS, model_max_length=z.max_length)
    tok = _reloaded(out)
    # the real config's vocabulary is larger than the tokenizer's (250,112 rows for 250,100 pieces)
    _save_pretrained(None, _mt5_model(tok, z, vocab_size=len(tok) + 12), out, weights="pickle")


def _albert_spiece(texts: list[str], z: Sizes, out: Path) -> None:
    """qwant/fralbert-base's layout (ALBERT's): ``spiece.model`` + ``spiece.vocab`` (Unigram; <pad>,
    <unk>, [CLS], [SEP], [MASK] first), ``AlbertTokenizer`` lower-casing, no tokenizer.json;
    ``pytorch_model.bin`` only."""
    _sentencepiece(texts, out, "spiece", z, keep_vocab=True, model_type="unigram", pad_id=0, unk_id=1, bos_id=-1,
                   eos_id=-1, control_symbols=["[CLS]", "[SEP]", "[MASK]"])
    _tokenizer_config(out, "AlbertTokenizer", do_lower_case=True, keep_accents=False, model_max_length=z.max_length)
    _save_pretrained(None, _albert_model(_reloaded(out), z), out, weights="pickle")


def _xlmr_spiece(texts: list[str], z: Sizes, out: Path, *, tokenizer_class: str = "XLMRobertaTokenizer",
                 tokenizer_json: bool = False) -> None:
    """xlm-roberta-base's and camembert-base's layout: ``sentencepiece.bpe.model`` (a SentencePiece
    Unigram model, whatever its name says), read with fairseq's offsets by ``XLMRobertaTokenizer``/``CamembertTokenizer``, with or
    without the converted ``tokenizer.json``; safetensors weights."""
    _sentencepiece(texts, out, "sentencepiece.bpe", z, model_type="unigram")
    _tokenizer_config(out, tokenizer_class, model_max_length=z.max_length)
    tok = _reloaded(out)
    if tokenizer_json:
        tok.save_pretrained(out)
    _save_pretrained(None, _xlmr_model(tok, z), out)


def _camembert_spiece(texts: list[str], z: Sizes, out: Path) -> None:
    _xlmr_spiece(texts, z, out, tokenizer_class="CamembertTokenizer", tokenizer_json=True)


def _flaubert_bpe(texts: list[str], z: Sizes, out: Path) -> None:
    """flaubert/flaubert_base_cased's layout: ``vocab.json`` + ``merges.txt`` (XLM's BPE with
    ``</w>`` word ends, learnt on Moses-tokenized text; <s>, </s>, <pad>, <unk>, <special0-9>
    first), read by the Python ``FlaubertTokenizer`` (sacremoses); no tokenizer.json nor
    tokenizer_config.json; ``pytorch_model.bin`` only."""
    import transformers as tf
    from sacremoses import MosesTokenizer

    moses = MosesTokenizer(lang="fr")
    words = [" ".join(moses.tokenize(t, escape=False)) for t in texts]
    specials = ["<s>", "</s>", "<pad>", "<unk>"] + [f"<special{i}>" for i in range(10)]
    bpe = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    bpe.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    bpe.train_from_iterator(words, trainers.BpeTrainer(vocab_size=z.vocab_size, special_tokens=specials,
                                                       end_of_word_suffix="</w>", show_progress=False))
    bpe.model.save(str(out))  # vocab.json and merges.txt
    tok = tf.FlaubertTokenizer(vocab_file=str(out / "vocab.json"), merges_file=str(out / "merges.txt"),
                               model_max_length=z.max_length)
    _save_pretrained(None, _flaubert_model(tok, z), out, weights="pickle")


@dataclass(frozen=True)
class TinyKind:
    """A kind of tiny model: its family, what it mirrors, and how it is built. ``tokenizer``
    builders train a ``tokenizers`` tokenizer and return it with a random model (saved by
    ``save_pretrained``: tokenizer.json and safetensors); ``files`` builders write a real
    repository's layout themselves."""

    name: str
    family: str
    mirrors: str
    tokenizer: Callable | None = None
    files: Callable | None = None


TINY_KINDS: dict[str, TinyKind] = {k.name: k for k in (
    TinyKind("bert", "mlm", "BERT/mBERT uncased: WordPiece, lower-casing and accent stripping", tokenizer=_bert),
    TinyKind("xlmr", "mlm", "XLM-R/CamemBERT: SentencePiece-style Unigram with the ▁ marker", tokenizer=_xlmr),
    TinyKind("roberta", "mlm", "RoBERTa: byte-level BPE", tokenizer=_roberta),
    TinyKind("albert", "mlm", "ALBERT: lower-cased Unigram", tokenizer=_albert),
    TinyKind("flaubert", "mlm", "FlauBERT: BPE with </w> word ends, <special1> mask (Rust-backed)", tokenizer=_flaubert),
    TinyKind("mt5", "seq2seq", "mT5: Unigram with <extra_id_N> sentinels (Rust-backed)", tokenizer=_mt5),
    TinyKind("gpt2", "causal", "GPT-2: byte-level BPE, <|endoftext|> as BOS, EOS and padding", tokenizer=_gpt2),
    TinyKind("llama", "causal", "Llama: Metaspace BPE, BOS <s>, no padding token", tokenizer=_llama),
    TinyKind("t5_spiece", "seq2seq", "google/mt5-base's files: spiece.model, T5Tokenizer, pytorch_model.bin",
             files=_t5_spiece),
    TinyKind("albert_spiece", "mlm", "qwant/fralbert-base's files: spiece.model + spiece.vocab, AlbertTokenizer, "
             "pytorch_model.bin", files=_albert_spiece),
    TinyKind("xlmr_spiece", "mlm", "xlm-roberta-base's files without tokenizer.json: sentencepiece.bpe.model",
             files=_xlmr_spiece),
    TinyKind("camembert_spiece", "mlm", "camembert-base's files: sentencepiece.bpe.model + tokenizer.json, "
             "CamembertTokenizer", files=_camembert_spiece),
    TinyKind("flaubert_bpe", "mlm", "flaubert/flaubert_base_cased's files: vocab.json + merges.txt, the Python "
             "FlaubertTokenizer (sacremoses), pytorch_model.bin", files=_flaubert_bpe),
)}


def build_tiny_model(
    kind: str,
    texts: Iterable[str],
    out_dir: str | os.PathLike,
    *,
    vocab_size: int = 2000,
    hidden_size: int = 32,
    num_layers: int = 2,
    num_heads: int = 2,
    max_length: int = 128,
    seed: int = 0,
    gaps: Iterable[tuple[str, str]] = (),
    train_steps: int = 0,
) -> Path:
    """Train a tokenizer of ``kind`` (:data:`TINY_KINDS`) on ``texts`` and save it with a random model
    of that architecture in ``out_dir`` (atomically); with ``train_steps``, the model is first
    trained that many steps on the cloze items ``gaps`` (:func:`train_briefly`; kinds with a
    tokenizer.json)."""
    if kind not in TINY_KINDS:
        raise ValueError(f"unknown tiny model kind {kind!r}; choose one of {sorted(TINY_KINDS)}")
    texts = [t for t in texts if t and t.strip()]
    if not texts:
        raise ValueError("no text to train the tokenizer on")
    spec = TINY_KINDS[kind]
    gaps = [(text, answer) for text, answer in gaps if answer and answer.strip()]
    if train_steps and (spec.files is not None or not gaps):
        raise ValueError(f"train_steps: kind {kind!r} cannot be trained (only kinds with a tokenizer.json: "
                         f"{sorted(k for k, v in TINY_KINDS.items() if v.files is None)}) or there is no text")
    sizes = Sizes(vocab_size, hidden_size, num_layers, num_heads, max_length)
    torch.manual_seed(seed)
    out = Path(out_dir)
    with atomic_dir(out) as tmp:
        if spec.files is not None:
            spec.files(texts, sizes, tmp)
        else:
            tokenizer, model = spec.tokenizer(texts, sizes)
            if train_steps:
                losses = train_briefly(tokenizer, model, spec.family, gaps, steps=train_steps, seed=seed)
                log.info("trained %d steps on %d answers: loss %.2f -> %.2f", train_steps, len(gaps),
                         losses[0], sum(losses[-10:]) / len(losses[-10:]))
            _save_pretrained(tokenizer, model, tmp)
    log.info("built tiny %s model in %s", kind, out)
    return out


def corpus_texts(paths: Iterable[str | os.PathLike]) -> list[str]:
    """Every sentence of ingested Parquet files (MozArt texts with answers filled in, CrowS-Pairs pairs)."""

    texts: list[str] = []
    for path in paths:
        df = read_parquet(path)
        if "sent_more" in df.columns:
            texts += [t for col in ("sent_more", "sent_less") for t in df[col].dropna().tolist()]
        elif "text" in df.columns:
            filled = [t.replace(MASK, a) for t, a in zip(df["text"], df["answer"], strict=True)]
            texts += list(dict.fromkeys(filled))
    return texts


def answered_gaps(paths: Iterable[str | os.PathLike]) -> list[tuple[str, str]]:
    """Every (text with ``[MASK]``, answer) of ingested MozArt-format answers, one per annotation."""

    gaps: list[tuple[str, str]] = []
    for path in paths:
        df = read_parquet(path)
        if "answer" in df.columns:
            df = df.dropna(subset=["answer"])
            gaps += list(zip(df["text"], df["answer"].str.strip(), strict=True))
    return gaps
