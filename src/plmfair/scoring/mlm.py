"""Masked language models: batched scoring of masked positions.

The unit of work is a *masked copy*: a token sequence in which some positions hold
the mask token, and one *query* position whose output distribution is wanted.
The family's primitives are sets of masked copies (:meth:`MaskedLMScorer.masked_copies_log_probs`),
one unmasked pass (:meth:`MaskedLMScorer.unmasked_log_probs`) and the whole words most probable at
a gap's mask (:meth:`MaskedLMScorer.gap_candidates`); the protocols are written above them: the
CrowS-Pairs masking rules (:mod:`plmfair.scoring.masking`) and AUL (:mod:`plmfair.scoring.aul`),
MozArt's gap predictions and answer scores (:mod:`plmfair.scoring.fill_mask`).

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
from typing import TYPE_CHECKING, Any

import torch

from plmfair.errors import ModelError
from plmfair.scoring.base import (
    Scorer,
    input_device,
    length_batches,
    per_sequence,
    progress_bar,
    right_padded,
    to_device,
)
from plmfair.scoring.pieces import whole_word_vocabulary
from plmfair.scoring.protocols import TokenizedSentence
from plmfair.scoring.tokenization import encode_with_words

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

log = logging.getLogger(__name__)


@dataclass
class MLMParts:
    """An encoder returning hidden states and a head mapping hidden states to vocabulary logits."""

    encoder: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    head: Callable[[torch.Tensor], torch.Tensor]
    head_only: bool


def split_mlm(model: Any) -> MLMParts:
    """Split a ``*ForMaskedLM`` model into its encoder and its LM head.

    Known heads: BERT (``cls``), RoBERTa/XLM-R/CamemBERT (``lm_head``), ALBERT
    (``predictions``), FlauBERT/XLM (``pred_layer``), DistilBERT. Any other masked LM
    falls back to the full forward pass (correct, just slower), with a warning.
    """
    base: Any = getattr(model, "base_model", None)

    def encoder(input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
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

            def distil_head(h: torch.Tensor) -> torch.Tensor:
                h = model.activation(model.vocab_transform(h))
                return model.vocab_projector(model.vocab_layer_norm(h))

            return MLMParts(encoder, distil_head, True)
    log.warning("no known LM head on %s: using the full forward pass (slower)", type(model).__name__)

    def full_logits(input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return model(input_ids=input_ids, attention_mask=attention_mask).logits

    return MLMParts(full_logits, lambda h: h, False)


def query_logits(
    model: PreTrainedModel,
    sequences: Sequence[Sequence[int]],
    positions: Sequence[int],
    *,
    pad_id: int,
    token_budget: int,
    progress: bool = False,
    desc: str = "scoring",
) -> Iterator[tuple[list[int], torch.Tensor]]:
    """Yield ``(indices, logits)`` with the vocabulary logits (float32, ``[len(indices), V]``)
    at ``positions[i]`` of ``sequences[i]`` for every index, batch by batch."""
    if len(sequences) != len(positions):
        raise ValueError("one query position per sequence")
    parts = split_mlm(model)
    device = input_device(model)
    batches = length_batches([len(s) for s in sequences], token_budget)
    # a unit is one masked copy of a sentence (one position to predict: a token, or a gap)
    bar = progress_bar(progress, total=len(sequences), desc=desc, unit="masked copy")
    with torch.inference_mode():
        for idx in batches:
            ids, att = right_padded(sequences, idx, pad_id=pad_id, device=device)
            pos = to_device([positions[i] for i in idx], device)
            hidden = parts.encoder(ids, att)
            # the last layer may sit on another device than the first (device_map)
            picked = hidden[torch.arange(len(idx), device=hidden.device), pos.to(hidden.device)]
            yield idx, parts.head(picked).float()
            if bar is not None:
                bar.update(len(idx))
    if bar is not None:
        bar.close()


def target_log_probs(
    model: PreTrainedModel,
    sequences: Sequence[Sequence[int]],
    positions: Sequence[int],
    targets: Sequence[int],
    **kwargs: Any,
) -> list[float]:
    """log P(targets[i] | sequences[i]) at positions[i], for every masked copy (log-softmax in float32)."""
    batches: list[list[int]] = []
    chunks: list[torch.Tensor] = []
    for idx, logits in query_logits(model, sequences, positions, **kwargs):
        # logit[target] - logsumexp(logits) is log_softmax at the target without materialising
        # a second [batch, vocabulary] tensor.
        tgt = to_device([targets[i] for i in idx], logits.device)
        picked = logits[torch.arange(len(idx), device=logits.device), tgt]
        chunks.append(picked - torch.logsumexp(logits, dim=-1))
        batches.append(idx)
    return [value for (value,) in per_sequence(chunks, batches, [1] * len(sequences))]


def mask_token_id(tokenizer: PreTrainedTokenizerBase, model_name: str) -> int:
    """The tokenizer's mask token id; a model without one cannot be scored as a masked LM."""
    if getattr(tokenizer, "mask_token", None) is None or getattr(tokenizer, "mask_token_id", None) is None:
        raise ModelError(f"model {model_name!r} has no mask token; it cannot be scored as a masked LM (family: mlm)")
    return int(tokenizer.mask_token_id)


def pad_token_id(tokenizer: PreTrainedTokenizerBase) -> int:
    """The padding id. It must be the model's own: FlauBERT derives sequence lengths from it."""
    for cand in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id):
        if cand is not None:
            return int(cand)
    return 0


@dataclass
class _Copies:
    """Masked copies of one sentence: (masked ids, query position, original token)."""

    copies: list[tuple[list[int], int, int]]


def _masked(ids: list[int], positions: Sequence[int], mask_id: int) -> list[int]:
    masked = list(ids)
    for p in positions:
        masked[p] = mask_id
    return masked


def _copies(ids: list[int], groups: list[list[int]], mask_id: int) -> _Copies:
    """One masked copy per group: mask every position of the group, query its first."""
    return _Copies([(_masked(ids, group, mask_id), group[0], ids[group[0]]) for group in groups])


def _truncate(ids: list, max_len: int) -> list:
    """Keep the first max_len - 1 entries and the final one (the closing special token)."""
    return ids[: max_len - 1] + ids[-1:]


class MaskedLMScorer(Scorer):
    """Pseudo-log-likelihoods and gap predictions of a masked language model."""

    family = "mlm"

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, **kwargs: Any) -> None:
        super().__init__(model, tokenizer, **kwargs)
        self.mask_id = mask_token_id(tokenizer, self.name)
        self.pad_id = pad_token_id(tokenizer)

    def last_hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model.base_model(input_ids=input_ids, attention_mask=attention_mask)[0]

    # The family's primitives, which its protocols (plmfair.scoring.protocols) are written with.

    def masked_copies_log_probs(self, copies: Sequence[_Copies], desc: str) -> list[float]:
        """Sum of log P(original token) over each sentence's masked copies, batched across all of them."""
        seqs, positions, targets, owner = [], [], [], []
        for k, sent in enumerate(copies):
            for masked, pos, tgt in sent.copies:
                seqs.append(masked)
                positions.append(pos)
                targets.append(tgt)
                owner.append(k)
        logps = target_log_probs(
            self.model,
            seqs,
            positions,
            targets,
            pad_id=self.pad_id,
            token_budget=self.token_budget,
            progress=self.progress,
            desc=desc,
        )
        totals = [0.0] * len(copies)
        # Summation in the order of the copies, as the reference loop does, so float rounding matches.
        for k, v in zip(owner, logps, strict=True):
            totals[k] += v
        return totals

    def unmasked_log_probs(
        self, sequences: Sequence[Sequence[int]], positions: Sequence[Sequence[int]], desc: str, head_rows: int = 1024
    ) -> list[list[float]]:
        """log P(token at p | the whole sequence, nothing masked) for every position ``p`` of
        ``positions[i]`` in ``sequences[i]``: one forward pass per sequence, batched by length under
        the token budget; the LM head runs on the read positions only, ``head_rows`` at a time (a
        vocabulary of 250,000 rows over every position of a batch would not fit)."""
        parts = split_mlm(self.model)
        device = input_device(self.model)
        bar = progress_bar(self.progress, total=len(sequences), desc=desc, unit="sentence")
        batches = length_batches([len(s) for s in sequences], self.token_budget)
        values = []
        with torch.inference_mode():
            for idx in batches:
                ids, att = right_padded(sequences, idx, pad_id=self.pad_id, device=device)
                hidden = parts.encoder(ids, att)
                rows = to_device([r for r, i in enumerate(idx) for _ in positions[i]], hidden.device, torch.long)
                cols = to_device([p for i in idx for p in positions[i]], hidden.device, torch.long)
                picked, targets = hidden[rows, cols], ids.to(hidden.device)[rows, cols]
                for a in range(0, len(rows), head_rows):
                    logits = parts.head(picked[a : a + head_rows]).float()
                    tgt = targets[a : a + head_rows].to(logits.device)
                    values.append(logits.gather(1, tgt[:, None])[:, 0] - torch.logsumexp(logits, dim=-1))
                if bar is not None:
                    bar.update(len(idx))
            out = per_sequence(values, batches, [len(p) for p in positions])
        if bar is not None:
            bar.close()
        return out

    def masked_copies(self, ids: list[int], groups: list[list[int]]) -> _Copies:
        """One masked copy of ``ids`` per group: every position of the group masked, its first read."""
        return _copies(ids, groups, self.mask_id)

    def encode_sentences(self, texts: Sequence[str], *, unknown_tokens: str = "scored") -> list[TokenizedSentence]:
        # an unknown piece is a special token of the tokenizer's, but a piece of the sentence to its protocols
        unk = {self.tokenizer.unk_token_id} if unknown_tokens == "scored" else set()
        special = frozenset(self.tokenizer.all_special_ids) - unk
        return [
            TokenizedSentence(ids, words, special)
            for ids, words in encode_with_words(self.tokenizer, [self.prepare(t) for t in texts])
        ]

    def truncate(self, sentence: TokenizedSentence, max_len: int) -> TokenizedSentence:
        # the closing special token ([SEP], </s>) stays
        return TokenizedSentence(
            _truncate(sentence.ids, max_len), _truncate(sentence.word_ids, max_len), sentence.special_ids
        )

    def gap_candidates(self, texts: Sequence[str], *, k: int) -> list[list[tuple[str, float]]]:
        """The ``k`` whole words (:func:`~plmfair.scoring.pieces.whole_word_vocabulary`) most probable
        at the mask token put in each text's gap, best first, with their log-probabilities: one
        forward pass per text, batched under the token budget, the head at the mask only."""
        words = whole_word_vocabulary(self.tokenizer)
        vocab_size = self.model.get_output_embeddings().weight.shape[0]
        allowed = torch.zeros(vocab_size, dtype=torch.bool)
        allowed[[i for i in words if i < vocab_size]] = True
        seqs, positions = [], []
        for text in texts:
            left, right = self.split_gap(text)
            ids = self.tokenizer(left + self.tokenizer.mask_token + right)["input_ids"]
            seqs.append(ids)
            positions.append(ids.index(self.mask_id))
        out: list[list[tuple[str, float]]] = [[] for _ in texts]
        for idx, logits in query_logits(
            self.model,
            seqs,
            positions,
            pad_id=self.pad_id,
            token_budget=self.token_budget,
            progress=self.progress,
            desc=f"{self.name} predictions",
        ):
            logp = torch.log_softmax(logits, dim=-1).masked_fill(~allowed.to(logits.device)[None, :], float("-inf"))
            top = torch.topk(logp, min(k, int(allowed.sum())), dim=-1)
            for row, i in enumerate(idx):
                out[i] = [
                    (words[tid], v) for v, tid in zip(top.values[row].tolist(), top.indices[row].tolist(), strict=True)
                ]
        return out
