"""Tiny random-weight models with real trained tokenizers, for tests and the offline demo.

No pretrained model can be downloaded on the development and CI machines, so the
workflow builds its own: a tokenizer trained (``tokenizers`` library) on the given
text, of the kind each real model family uses, and a model of the real
architecture with a few layers and random weights. Their scores mean nothing;
what they exercise is every code path the real models take.

Kinds: ``bert`` (WordPiece, uncased and accent-stripping like mBERT uncased),
``xlmr`` (SentencePiece-style Unigram with the ``▁`` word marker, like XLM-R and
CamemBERT), ``roberta`` (byte-level BPE), ``albert`` (Unigram, lower-cased),
``flaubert`` (BPE with ``</w>`` word ends, ``<special1>`` mask), ``mt5``
(Unigram seq2seq with ``<extra_id_N>`` sentinels), and two decoder-only LMs: ``gpt2``
(byte-level BPE whose one special token ``<|endoftext|>`` is BOS, EOS and padding) and
``llama`` (SentencePiece-style BPE with the ``▁`` marker on the first word too, BOS ``<s>``
added by the tokenizer, no padding token).

A build is reproducible: the same text gives the same files. The weights are drawn from a
seeded generator; the tokenizers are trained with byte-level or Metaspace BPE, whose
training is deterministic, and the WordPiece and Unigram vocabularies take their pieces
from such a BPE run (the ``tokenizers`` WordPiece and Unigram trainers break ties in hash
map order, so two runs differ). The FlauBERT-style suffix BPE trainer is not reproducible
either; that kind is used by tests that compare two implementations on one build only.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Iterable
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

from plmfair.io import atomic_dir

log = logging.getLogger(__name__)

TINY_KINDS = ("bert", "xlmr", "roberta", "albert", "flaubert", "mt5", "gpt2", "llama")
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
) -> Path:
    """Train a tokenizer of ``kind`` on ``texts`` and save it with a random model of that architecture."""
    import transformers as tf

    if kind not in TINY_KINDS:
        raise ValueError(f"unknown tiny model kind {kind!r}; choose one of {TINY_KINDS}")
    texts = [t for t in texts if t and t.strip()]
    if not texts:
        raise ValueError("no text to train the tokenizer on")
    torch.manual_seed(seed)
    out = Path(out_dir)
    inter = hidden_size * 2
    common = {"model_max_length": max_length}
    if kind == "bert":
        tok = _train_wordpiece(texts, vocab_size)
        hf_tok = tf.BertTokenizer(
            tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
            mask_token="[MASK]", do_lower_case=True, **common,
        )
        model = tf.BertForMaskedLM(tf.BertConfig(
            vocab_size=len(hf_tok), hidden_size=hidden_size, num_hidden_layers=num_layers,
            num_attention_heads=num_heads, intermediate_size=inter, max_position_embeddings=max_length,
            pad_token_id=hf_tok.pad_token_id,
        ))
    elif kind in ("xlmr", "albert"):
        specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"] if kind == "xlmr" else ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
        tok = _train_unigram(texts, vocab_size, specials, lowercase=kind == "albert")
        if kind == "xlmr":
            _template(tok, "<s>", "</s>")
            hf_tok = tf.PreTrainedTokenizerFast(
                tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>",
                cls_token="<s>", sep_token="</s>", mask_token="<mask>", **common,
            )
            model = tf.XLMRobertaForMaskedLM(tf.XLMRobertaConfig(
                vocab_size=len(hf_tok), hidden_size=hidden_size, num_hidden_layers=num_layers,
                num_attention_heads=num_heads, intermediate_size=inter, max_position_embeddings=max_length + 2,
                pad_token_id=hf_tok.pad_token_id, bos_token_id=hf_tok.bos_token_id, eos_token_id=hf_tok.eos_token_id,
            ))
        else:
            _template(tok, "[CLS]", "[SEP]")
            hf_tok = tf.PreTrainedTokenizerFast(
                tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", cls_token="[CLS]", sep_token="[SEP]",
                mask_token="[MASK]", do_lower_case=True, **common,
            )
            model = tf.AlbertForMaskedLM(tf.AlbertConfig(
                vocab_size=len(hf_tok), embedding_size=max(8, hidden_size // 2), hidden_size=hidden_size,
                num_hidden_layers=num_layers, num_attention_heads=num_heads, intermediate_size=inter,
                max_position_embeddings=max_length, pad_token_id=hf_tok.pad_token_id,
            ))
    elif kind == "roberta":
        tok = _train_bytelevel_bpe(texts, vocab_size)
        hf_tok = tf.PreTrainedTokenizerFast(
            tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>",
            cls_token="<s>", sep_token="</s>", mask_token="<mask>", **common,
        )
        model = tf.RobertaForMaskedLM(tf.RobertaConfig(
            vocab_size=len(hf_tok), hidden_size=hidden_size, num_hidden_layers=num_layers,
            num_attention_heads=num_heads, intermediate_size=inter, max_position_embeddings=max_length + 2,
            pad_token_id=hf_tok.pad_token_id, bos_token_id=hf_tok.bos_token_id, eos_token_id=hf_tok.eos_token_id,
        ))
    elif kind == "flaubert":
        tok = _train_suffix_bpe(texts, vocab_size)
        hf_tok = tf.PreTrainedTokenizerFast(
            tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>",
            cls_token="<s>", sep_token="</s>", mask_token="<special1>", **common,
        )
        model = tf.FlaubertWithLMHeadModel(tf.FlaubertConfig(
            vocab_size=len(hf_tok), emb_dim=hidden_size, n_layers=num_layers, n_heads=num_heads,
            max_position_embeddings=max_length, causal=False, bos_index=hf_tok.bos_token_id,
            eos_index=hf_tok.eos_token_id, pad_index=hf_tok.pad_token_id, unk_index=hf_tok.unk_token_id,
            mask_index=hf_tok.mask_token_id, pad_token_id=hf_tok.pad_token_id, mask_token_id=hf_tok.mask_token_id,
        ))
    elif kind == "gpt2":
        tok = _train_bytelevel_bpe(texts, vocab_size, specials=("<|endoftext|>",))
        hf_tok = tf.PreTrainedTokenizerFast(
            tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>",
            **common,
        )
        end = hf_tok.eos_token_id
        model = tf.GPT2LMHeadModel(tf.GPT2Config(
            vocab_size=len(hf_tok), n_positions=max_length, n_embd=hidden_size, n_layer=num_layers, n_head=num_heads,
            n_inner=inter, bos_token_id=end, eos_token_id=end,
        ))
    elif kind == "llama":
        tok = _train_metaspace_bpe(texts, vocab_size)
        hf_tok = tf.PreTrainedTokenizerFast(
            tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", **common,
        )
        model = tf.LlamaForCausalLM(tf.LlamaConfig(
            vocab_size=len(hf_tok), hidden_size=hidden_size, intermediate_size=inter, num_hidden_layers=num_layers,
            num_attention_heads=num_heads, num_key_value_heads=num_heads, max_position_embeddings=max_length,
            bos_token_id=hf_tok.bos_token_id, eos_token_id=hf_tok.eos_token_id, tie_word_embeddings=False,
        ))
    else:  # mt5
        sentinels = [f"<extra_id_{i}>" for i in range(N_SENTINELS)]
        tok = _train_unigram(texts, vocab_size, ["<pad>", "</s>", "<unk>"])
        tok.add_special_tokens(sentinels)
        tok.post_processor = processors.TemplateProcessing(
            single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))]
        )
        hf_tok = tf.PreTrainedTokenizerFast(
            tokenizer_object=tok, eos_token="</s>", unk_token="<unk>", pad_token="<pad>",
            additional_special_tokens=sentinels, **common,
        )
        model = tf.MT5ForConditionalGeneration(tf.MT5Config(
            vocab_size=len(hf_tok), d_model=hidden_size, d_kv=max(8, hidden_size // num_heads), d_ff=inter,
            num_layers=num_layers, num_decoder_layers=num_layers, num_heads=num_heads,
            pad_token_id=hf_tok.pad_token_id, eos_token_id=hf_tok.eos_token_id, decoder_start_token_id=hf_tok.pad_token_id,
            tie_word_embeddings=False,
        ))
    model.eval()
    with atomic_dir(out) as tmp:
        hf_tok.save_pretrained(tmp)
        model.save_pretrained(tmp, safe_serialization=True)
    log.info("built tiny %s model in %s (vocabulary %d)", kind, out, len(hf_tok))
    return out


def corpus_texts(paths: Iterable[str | os.PathLike]) -> list[str]:
    """Every sentence of ingested Parquet files (MozArt texts with answers filled in, CrowS-Pairs pairs)."""
    from plmfair.data import MASK
    from plmfair.io import read_parquet

    texts: list[str] = []
    for path in paths:
        df = read_parquet(path)
        if "sent_more" in df.columns:
            texts += [t for col in ("sent_more", "sent_less") for t in df[col].dropna().tolist()]
        elif "text" in df.columns:
            filled = [t.replace(MASK, a) for t, a in zip(df["text"], df["answer"], strict=True)]
            texts += list(dict.fromkeys(filled))
    return texts
