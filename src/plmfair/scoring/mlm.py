"""Batched scoring of masked positions in masked language models.

The unit of work is a *masked copy*: a token sequence in which some positions hold
the mask token, and one *query* position whose output distribution is wanted.
Nangia et al.'s CrowS-Pairs protocol, all-token and within-word pseudo-log-likelihoods,
and cloze predictions are all sets of masked copies.

Two things make this fast without changing the numbers:

- copies of similar length are batched together, sorted by length and capped by a
  token budget (batch size x padded length), so a long sentence cannot run out of
  memory and little work is spent on padding;
- the encoder runs on the whole batch but the language-model head (the projection
  onto a 30k-250k vocabulary, most of the arithmetic of a plain loop) is applied only
  at the query positions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from plmfair.errors import ModelError

log = logging.getLogger(__name__)


@dataclass
class MLMParts:
    """An encoder returning hidden states and a head mapping hidden states to vocabulary logits."""

    encoder: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    head: Callable[[torch.Tensor], torch.Tensor]
    head_only: bool


def split_mlm(model: nn.Module) -> MLMParts:
    """Split a ``*ForMaskedLM`` model into its encoder and its LM head.

    Known heads: BERT (``cls``), RoBERTa/XLM-R/CamemBERT (``lm_head``), ALBERT
    (``predictions``), FlauBERT/XLM (``pred_layer``), DistilBERT. Any other masked LM
    falls back to the full forward pass (correct, just slower), with a warning.
    """
    base = getattr(model, "base_model", None)

    def encoder(input_ids, attention_mask):
        return base(input_ids=input_ids, attention_mask=attention_mask)[0]

    if base is not None and base is not model:
        if hasattr(model, "cls"):
            return MLMParts(encoder, model.cls, True)
        if hasattr(model, "lm_head"):
            return MLMParts(encoder, model.lm_head, True)
        if hasattr(model, "predictions") and hasattr(model, "albert"):
            return MLMParts(encoder, model.predictions, True)
        if hasattr(model, "pred_layer") and not getattr(model.pred_layer, "asm", False):
            return MLMParts(encoder, lambda h: model.pred_layer(h)[0], True)
        if hasattr(model, "vocab_projector"):
            def distil_head(h):
                h = model.activation(model.vocab_transform(h))
                return model.vocab_projector(model.vocab_layer_norm(h))

            return MLMParts(encoder, distil_head, True)
    log.warning("no known LM head on %s: using the full forward pass (slower)", type(model).__name__)

    def full_logits(input_ids, attention_mask):
        return model(input_ids=input_ids, attention_mask=attention_mask).logits

    return MLMParts(full_logits, lambda h: h, False)


def length_batches(lengths: Sequence[int], token_budget: int) -> list[list[int]]:
    """Indices grouped into batches of similar length whose padded size stays within ``token_budget``.

    Indices are sorted by length (longest first, stable), so padding is small; a single
    sequence longer than the budget gets a batch of its own.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    width = 0
    for i in order:
        new_width = max(width, lengths[i])
        if current and new_width * (len(current) + 1) > token_budget:
            batches.append(current)
            current, new_width = [], lengths[i]
        current.append(i)
        width = new_width
    if current:
        batches.append(current)
    return batches


def query_logits(
    model: nn.Module,
    sequences: Sequence[Sequence[int]],
    positions: Sequence[int],
    *,
    pad_id: int,
    token_budget: int = 8192,
    progress: bool = False,
    desc: str = "scoring",
) -> Iterator[tuple[list[int], torch.Tensor]]:
    """Yield ``(indices, logits)`` with the vocabulary logits (float32, ``[len(indices), V]``)
    at ``positions[i]`` of ``sequences[i]`` for every index, batch by batch."""
    if len(sequences) != len(positions):
        raise ValueError("one query position per sequence")
    parts = split_mlm(model)
    device = next(model.parameters()).device
    batches = length_batches([len(s) for s in sequences], token_budget)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(sequences), desc=desc, unit="copy", mininterval=2.0)
    with torch.inference_mode():
        for idx in batches:
            width = max(len(sequences[i]) for i in idx)
            ids = torch.full((len(idx), width), pad_id, dtype=torch.long)
            att = torch.zeros((len(idx), width), dtype=torch.long)
            for row, i in enumerate(idx):
                ids[row, : len(sequences[i])] = torch.as_tensor(sequences[i])
                att[row, : len(sequences[i])] = 1
            ids, att = ids.to(device), att.to(device)
            pos = torch.as_tensor([positions[i] for i in idx], device=device)
            hidden = parts.encoder(ids, att)
            picked = hidden[torch.arange(len(idx), device=device), pos]
            yield idx, parts.head(picked).float()
            if bar is not None:
                bar.update(len(idx))
    if bar is not None:
        bar.close()


def target_log_probs(
    model: nn.Module,
    sequences: Sequence[Sequence[int]],
    positions: Sequence[int],
    targets: Sequence[int],
    **kwargs,
) -> list[float]:
    """log P(targets[i] | sequences[i]) at positions[i], for every masked copy (log-softmax in float32)."""
    out = [0.0] * len(sequences)
    for idx, logits in query_logits(model, sequences, positions, **kwargs):
        # logit[target] - logsumexp(logits) is log_softmax at the target without materialising
        # a second [batch, vocabulary] tensor.
        tgt = torch.as_tensor([targets[i] for i in idx], device=logits.device)
        picked = logits[torch.arange(len(idx), device=logits.device), tgt]
        vals = (picked - torch.logsumexp(logits, dim=-1)).tolist()
        for i, v in zip(idx, vals, strict=True):
            out[i] = v
    return out


def mask_token_id(tokenizer, model_name: str) -> int:
    """The tokenizer's mask token id; a model without one cannot be scored as a masked LM."""
    if tokenizer.mask_token is None or tokenizer.mask_token_id is None:
        raise ModelError(f"model {model_name!r} has no mask token; it cannot be scored as a masked LM (family: mlm)")
    return int(tokenizer.mask_token_id)


def pad_token_id(tokenizer) -> int:
    """The padding id. It must be the model's own: FlauBERT derives sequence lengths from it."""
    for cand in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id):
        if cand is not None:
            return int(cand)
    return 0


def word_start_rule(tokenizer) -> str:
    """How the tokenizer marks words: ``wordpiece`` (continuations start with ``##``),
    ``metaspace`` (word starts carry ``▁``: SentencePiece, XLM-R, mT5), ``bytelevel`` (word
    starts carry ``Ġ``: RoBERTa), ``suffix`` (word ends carry ``</w>``: FlauBERT)."""
    model = tokenizer.backend_tokenizer.model
    kind = type(model).__name__
    if kind == "WordPiece":
        return "wordpiece"
    vocab = tokenizer.get_vocab()
    if any(t.startswith("▁") for t in vocab):
        return "metaspace"
    if any(t.startswith("Ġ") for t in vocab):
        return "bytelevel"
    if any(t.endswith("</w>") for t in vocab):
        return "suffix"
    raise ModelError(f"cannot tell word boundaries of a {kind} tokenizer (no ##, ▁, Ġ or </w> markers)")


def whole_word_vocabulary(tokenizer) -> dict[int, str]:
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
        if surface and any(ch.isalpha() for ch in surface) and all(ch.isalpha() or ch in "-'’" for ch in surface):
            out[tid] = surface
    return out
