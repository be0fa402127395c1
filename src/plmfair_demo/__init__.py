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

Not part of the library (:mod:`plmfair` never imports it): the demo's build rule and the tests
and benchmarks do. By job: :mod:`plmfair_demo.tokenizers` (training), :mod:`plmfair_demo.architectures`
(random models), :mod:`plmfair_demo.training` (a few steps on answers), :mod:`plmfair_demo.replicas`
(real repository layouts); this module holds the kinds and the build."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import torch

from plmfair.io.atomic import atomic_dir
from plmfair.io.parquet import read_parquet
from plmfair.registry import Registry
from plmfair.text import MASK
from plmfair_demo.architectures import (
    Built,
    Sizes,
    albert,
    bert,
    flaubert,
    gpt2,
    llama,
    mt5,
    roberta,
    save_pretrained,
    xlmr,
)
from plmfair_demo.replicas import (
    albert_spiece,
    camembert_spiece,
    flaubert_bpe,
    t5_spiece,
    xlmr_spiece,
)
from plmfair_demo.training import train_briefly

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TinyKind:
    """A kind of tiny model: its family, what it mirrors, and how it is built. ``tokenizer``
    builders train a ``tokenizers`` tokenizer and return it with a random model (saved by
    ``save_pretrained``: tokenizer.json and safetensors); ``files`` builders write a real
    repository's layout themselves."""

    name: str
    family: str
    mirrors: str
    tokenizer: Callable[[list[str], Sizes], Built] | None = None
    files: Callable[[list[str], Sizes, Path], None] | None = None


TINY_KINDS: Registry[TinyKind] = Registry(
    "tiny model kind",
    error=ValueError,
    entries={
        k.name: k
        for k in (
            TinyKind("bert", "mlm", "BERT/mBERT uncased: WordPiece, lower-casing and accent stripping", tokenizer=bert),
            TinyKind("xlmr", "mlm", "XLM-R/CamemBERT: SentencePiece-style Unigram with the ▁ marker", tokenizer=xlmr),
            TinyKind("roberta", "mlm", "RoBERTa: byte-level BPE", tokenizer=roberta),
            TinyKind("albert", "mlm", "ALBERT: lower-cased Unigram", tokenizer=albert),
            TinyKind(
                "flaubert",
                "mlm",
                "FlauBERT: BPE with </w> word ends, <special1> mask (Rust-backed)",
                tokenizer=flaubert,
            ),
            TinyKind("mt5", "seq2seq", "mT5: Unigram with <extra_id_N> sentinels (Rust-backed)", tokenizer=mt5),
            TinyKind("gpt2", "causal", "GPT-2: byte-level BPE, <|endoftext|> as BOS, EOS and padding", tokenizer=gpt2),
            TinyKind("llama", "causal", "Llama: Metaspace BPE, BOS <s>, no padding token", tokenizer=llama),
            TinyKind(
                "t5_spiece",
                "seq2seq",
                "google/mt5-base's files: spiece.model, T5Tokenizer, pytorch_model.bin",
                files=t5_spiece,
            ),
            TinyKind(
                "albert_spiece",
                "mlm",
                "qwant/fralbert-base's files: spiece.model + spiece.vocab, AlbertTokenizer, pytorch_model.bin",
                files=albert_spiece,
            ),
            TinyKind(
                "xlmr_spiece",
                "mlm",
                "xlm-roberta-base's files without tokenizer.json: sentencepiece.bpe.model",
                files=xlmr_spiece,
            ),
            TinyKind(
                "camembert_spiece",
                "mlm",
                "camembert-base's files: sentencepiece.bpe.model + tokenizer.json, CamembertTokenizer",
                files=camembert_spiece,
            ),
            TinyKind(
                "flaubert_bpe",
                "mlm",
                "flaubert/flaubert_base_cased's files: vocab.json + merges.txt, the Python "
                "FlaubertTokenizer (sacremoses), pytorch_model.bin",
                files=flaubert_bpe,
            ),
        )
    },
)


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
    threads: int | None = None,
) -> Path:
    """Train a tokenizer of ``kind`` (:data:`TINY_KINDS`) on ``texts`` and save it with a random model
    of that architecture in ``out_dir`` (atomically); with ``train_steps``, the model is first
    trained that many steps on the cloze items ``gaps`` (:func:`train_briefly`; kinds with a
    tokenizer.json), on ``threads`` CPU threads (its job's; None: torch's default, every core)."""
    texts = [t for t in texts if t and t.strip()]
    if not texts:
        raise ValueError("no text to train the tokenizer on")
    spec = TINY_KINDS[kind]  # an unknown kind: a ValueError naming the kinds there are
    gaps = [(text, answer) for text, answer in gaps if answer and answer.strip()]
    if train_steps and (spec.files is not None or not gaps):
        raise ValueError(
            f"train_steps: kind {kind!r} cannot be trained (only kinds with a tokenizer.json: "
            f"{sorted(k for k, v in TINY_KINDS.items() if v.files is None)}) or there is no text"
        )
    sizes = Sizes(vocab_size, hidden_size, num_layers, num_heads, max_length)
    if threads:  # as a scoring job: the cores its job was given, not every core of the machine beside others
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    out = Path(out_dir)
    with atomic_dir(out) as tmp:
        if spec.files is not None:
            spec.files(texts, sizes, tmp)
        elif spec.tokenizer is not None:
            tokenizer, model = spec.tokenizer(texts, sizes)
            if train_steps:
                losses = train_briefly(tokenizer, model, spec.family, gaps, steps=train_steps, seed=seed)
                log.info(
                    "trained %d steps on %d answers: loss %.2f -> %.2f",
                    train_steps,
                    len(gaps),
                    losses[0],
                    sum(losses[-10:]) / len(losses[-10:]),
                )
            save_pretrained(tokenizer, model, tmp)
        else:
            raise ValueError(f"tiny model kind {kind!r} has no builder: give it a tokenizer or a files builder")
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
