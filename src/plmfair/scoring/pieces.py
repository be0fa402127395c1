"""Which vocabulary entries are whole words, start a word, or continue one.

Tokenizers mark word boundaries in four ways
(:func:`plmfair.scoring.tokenization.word_start_rule`): WordPiece marks
continuations (``##``); SentencePiece (XLM-R, mT5, Llama) and byte-level BPE (RoBERTa,
GPT-2, Qwen) mark word starts (``▁``; ``Ġ``, a leading space once decoded); FlauBERT's
BPE marks word ends (``</w>``). Masked LMs predict one token, so their candidates are the
tokens that are whole words (:func:`whole_word_vocabulary`); families that generate a
word piece by piece (seq2seq span infilling, causal LMs) need to know which pieces may
start a word and which may continue it (:func:`piece_classes`).
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from plmfair.errors import ModelError
from plmfair.scoring.tokenization import word_start_rule

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

WORD_CHARS = "-'’"


def whole_word_vocabulary(tokenizer: PreTrainedTokenizerBase) -> dict[int, str]:
    """Token id -> surface form, for the tokens that are whole words by themselves.

    Dropped: special tokens, subword continuations (``##x`` in WordPiece; pieces without
    the word marker in SentencePiece and byte-level BPE) and tokens with no letter. The
    word marker is stripped from the surface form. For end-of-word BPE (FlauBERT) a
    token ending in ``</w>`` counts as a word.
    """
    rule = word_start_rule(tokenizer)
    special = set(tokenizer.all_special_ids)
    out: dict[int, str] = {}
    for token, tid in tokenizer.get_vocab().items():
        if tid in special:
            continue
        if rule == "wordpiece":
            if token.startswith("##"):
                continue
            surface = token
        elif rule == "metaspace":
            if not token.startswith("▁"):
                continue
            surface = token[1:]
        elif rule == "bytelevel":
            if not token.startswith("Ġ"):
                continue
            surface = tokenizer.convert_tokens_to_string([token]).strip()
        else:
            if not token.endswith("</w>"):
                continue
            surface = token[: -len("</w>")]
        if surface and any(ch.isalpha() for ch in surface) and all(ch.isalpha() or ch in WORD_CHARS for ch in surface):
            out[tid] = surface
    return out


@dataclass(frozen=True)
class PieceClasses:
    """Boolean masks over the model's vocabulary for generating one word piece by piece.

    ``marked_start``: pieces that start a word after white space (``▁word``, ``Ġword``);
    ``bare_start``: unmarked pieces that can start a word glued to what precedes it (after
    an apostrophe, or at the start of a text whose tokenizer adds no marker there);
    ``cont``: unmarked pieces that continue a word. Starts begin with a letter; every
    character of a piece is a letter, a hyphen or an apostrophe.
    """

    marked_start: torch.Tensor
    bare_start: torch.Tensor
    cont: torch.Tensor


def piece_classes(
    tokenizer: PreTrainedTokenizerBase, vocab_size: int, *, exclude: Set[int] = frozenset()
) -> PieceClasses:
    """Classify the first ``vocab_size`` ids (SentencePiece or byte-level BPE vocabularies)."""
    rule = word_start_rule(tokenizer)
    if rule not in ("metaspace", "bytelevel"):
        raise ModelError(
            f"generating words piece by piece needs a SentencePiece or byte-level BPE tokenizer, not {rule}"
        )
    marked_start = torch.zeros(vocab_size, dtype=torch.bool)
    bare_start = torch.zeros(vocab_size, dtype=torch.bool)
    cont = torch.zeros(vocab_size, dtype=torch.bool)
    skip = set(tokenizer.all_special_ids) | set(exclude)
    for token, tid in tokenizer.get_vocab().items():
        if tid >= vocab_size or tid in skip:
            continue
        if rule == "metaspace":
            marked = token.startswith("▁")
            body = token[1:] if marked else token
        else:
            surface = tokenizer.convert_tokens_to_string([token])
            marked = surface.startswith(" ")
            body = surface[1:] if marked else surface
        if not body or not all(ch.isalpha() or ch in WORD_CHARS for ch in body):
            continue
        if marked:
            marked_start[tid] = body[0].isalpha()
        else:
            cont[tid] = True
            bare_start[tid] = body[0].isalpha()
    return PieceClasses(marked_start, bare_start, cont)


def marks_text_start(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Whether the tokenizer puts a word marker on the first word of a text (SentencePiece's
    dummy prefix, byte-level BPE with ``add_prefix_space``)."""
    first = tokenizer.tokenize("word")[0]
    return first.startswith(("▁", "Ġ"))
