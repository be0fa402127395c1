"""Decoder-only (causal) language models: GPT-2, Llama, Qwen, Mistral.

Primitives: the left-to-right log-likelihood of token sequences
(:meth:`CausalLMScorer.sequence_log_likelihoods`) and the words proposed for a gap after its left
context (:meth:`CausalLMScorer.gap_candidates`: a beam search over word pieces constrained to one
word, :mod:`plmfair.scoring.beam`; a word ends with any token that does not continue it). The
protocols are written above them: the CrowS-Pairs protocol ``sentence_log_likelihood``
(:mod:`plmfair.scoring.sentence_log_likelihood`, the convention of lm-evaluation-harness's
``crows_pairs`` tasks: the sentence after the tokenizer's BOS token, its EOS token when it has no
BOS, rounded to 3 decimals) and the gap protocol ``left_context_rerank``
(:mod:`plmfair.scoring.left_context_rerank`: candidates re-ranked by the whole sentence's
log-likelihood).

Batches are right-padded with an attention mask and capped by the token budget. The decoder
stack runs on the batch; the output layer only at the real tokens' positions (never at
padding), in chunks of :data:`LOGITS_BUDGET` logits, so the full ``[batch, length, vocabulary]``
tensor is never built; log-softmax in float32. That split is used when the model's logits are
exactly its output layer applied to its last hidden states (checked once on a probe input at
load: a model that scales or caps its logits gets the full forward pass, with a warning).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import torch

from plmfair.errors import ModelError
from plmfair.scoring import beam
from plmfair.scoring.base import (
    Scorer,
    input_device,
    length_batches,
    padding_id,
    per_sequence,
    progress_bar,
    right_padded,
    to_device,
)
from plmfair.scoring.beam import IncrementalDecoder, single_word_beam_searches
from plmfair.scoring.pieces import PieceClasses, marks_text_start, piece_classes
from plmfair.scoring.protocols import TokenizedSentence

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

log = logging.getLogger(__name__)

# Logit entries (tokens x vocabulary) computed at once: 2^26 float32 values are 256 MiB, about 1,300
# positions with GPT-2's vocabulary, 440 with Qwen's.
LOGITS_BUDGET = 2**26
# Padding a batch may add to its longest sentence's width: every padded position costs a full pass
# through the decoder stack.
MAX_PADDING = 0.25


def split_causal(model: PreTrainedModel, probe_ids: list[int]) -> tuple[Any, Any] | None:
    """``(decoder stack, output layer)`` of a causal LM when its logits are exactly the output layer
    of the stack's last hidden states (tested on ``probe_ids``), else None."""
    body, head = getattr(model, "base_model", None), model.get_output_embeddings()
    if body is None or body is model or head is None:
        return None
    ids = torch.tensor([probe_ids], device=input_device(model))
    with torch.inference_mode():
        full = model(input_ids=ids).logits
        split = head(body(input_ids=ids)[0])
    if full.shape != split.shape or not torch.equal(full, split):
        log.warning(
            "%s: its logits are not its output layer of the last hidden states (scaled or capped); "
            "using the full forward pass (slower)",
            type(model).__name__,
        )
        return None
    return body, head


class CausalLMScorer(Scorer):
    """Left-to-right log-likelihoods and gap predictions of a decoder-only LM."""

    family = "causal"
    # the padding a batch may add (:data:`MAX_PADDING`); a benchmark may set another on an instance
    max_padding = MAX_PADDING

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, **kwargs: Any) -> None:
        super().__init__(model, tokenizer, **kwargs)
        prefix = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        if prefix is None:
            raise ModelError(
                f"model {self.name!r}: its tokenizer has neither a BOS nor an EOS token to start a "
                f"sentence with; it cannot be scored as a causal LM"
            )
        self.prefix_id = int(prefix)
        self.pad_id = int(padding_id(tokenizer))
        self.device = input_device(model)
        self.vocab_size = model.get_output_embeddings().weight.shape[0]
        self.parts = split_causal(model, self.after_prefix(["a probe sentence."])[0][:8])

    def last_hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True).hidden_states[
            -1
        ]

    def after_prefix(self, texts: Sequence[str]) -> list[list[int]]:
        """The ids of each text (as given: already prepared; no special tokens) after the prefix token,
        as :meth:`sequence_log_likelihoods` reads a sentence: one call of the tokenizer for all (a
        Rust-backed tokenizer encodes them in parallel)."""
        if not texts:
            return []
        return [[self.prefix_id, *ids] for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]

    def sequence_log_likelihoods(self, sequences: Sequence[Sequence[int]], *, desc: str = "scoring") -> list[float]:
        """sum_i log P(seq[i] | seq[:i]) for i >= 1, for each sequence (its first token is the prefix)."""
        bar = progress_bar(self.progress, total=len(sequences), desc=desc, unit="sentence")
        batches = self.batches(sequences)
        token_lps = []
        with torch.inference_mode():
            for idx in batches:
                ids, att = right_padded(sequences, idx, pad_id=self.pad_id, device=self.device)
                # the positions that predict a real token: 0 .. len - 2 of each row, row by row
                rows = to_device(
                    torch.cat([torch.full((len(sequences[i]) - 1,), r) for r, i in enumerate(idx)]), self.device
                )
                cols = to_device(torch.cat([torch.arange(len(sequences[i]) - 1) for i in idx]), self.device)
                token_lps.append(self._token_log_probs(ids, att, rows, cols))
                if bar is not None:
                    bar.update(len(idx))
            per_token = per_sequence(token_lps, batches, [len(s) - 1 for s in sequences])
        if bar is not None:
            bar.close()
        # Python float summation in token order, as a plain per-token loop does.
        return [sum(values) for values in per_token]

    def batches(self, sequences: Sequence[Sequence[int]]) -> list[list[int]]:
        """The batches :meth:`sequence_log_likelihoods` runs ``sequences`` in: indices of similar length
        under the token budget, each padded by at most :attr:`max_padding` of its width."""
        return length_batches([len(s) for s in sequences], self.token_budget, max_padding=self.max_padding)

    def _token_log_probs(
        self, ids: torch.Tensor, att: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor
    ) -> torch.Tensor:
        """log P(ids[r, c + 1] | ids[r, :c + 1]) at every (row, col), float32."""
        targets = ids[rows, cols + 1]
        if self.parts is None:
            logits = self.model(input_ids=ids, attention_mask=att).logits[rows, cols].float()
            return logits.gather(-1, targets[:, None]).squeeze(-1) - torch.logsumexp(logits, dim=-1)
        body, head = self.parts
        hidden = body(input_ids=ids, attention_mask=att)[0][rows, cols]
        chunk = max(1, LOGITS_BUDGET // self.vocab_size)
        parts = []
        for b in range(0, len(hidden), chunk):
            logits = head(hidden[b : b + chunk]).float()
            picked = logits.gather(-1, targets[b : b + chunk, None]).squeeze(-1)
            parts.append(picked - torch.logsumexp(logits, dim=-1))
        return torch.cat(parts) if parts else torch.zeros(0, device=ids.device)

    def encode_sentences(self, texts: Sequence[str], *, unknown_tokens: str = "scored") -> list[TokenizedSentence]:
        """Each sentence's tokens without special tokens, after the prefix (BOS, else EOS); each token is
        its own word (the sentence log-likelihood reads every token, an unknown one too, and groups none)."""
        special = frozenset({self.prefix_id})
        return [
            TokenizedSentence(ids, [None, *range(len(ids) - 1)], special)
            for ids in self.after_prefix([self.prepare(t) for t in texts])
        ]

    def gap_candidates(
        self, texts: Sequence[str], *, k: int, num_beams: int | None = None
    ) -> list[list[tuple[str, float]]]:
        """Up to ``k`` distinct whole words the model proposes after the left context of each text's
        gap, best first, with the beam's log-probability of their pieces there (the right context
        is not read: :mod:`plmfair.scoring.left_context_rerank` re-ranks them on the whole sentence).
        Sentences are searched together, their contexts left-padded and their beams in one model call
        per step, in batches whose beams' key-value entries fit the token budget times
        :data:`plmfair.scoring.beam.SEARCH_BUDGET_FACTOR`; each sentence's words are those of a search
        of it alone."""
        pieces = piece_classes(self.tokenizer, self.vocab_size)
        text_start_marked = marks_text_start(self.tokenizer)
        contexts = [self._context(text, pieces, text_start_marked) for text in texts]
        beams = num_beams or k
        cost = [beams * (len(prefix) + beam.MAX_WORD_PIECES) for prefix, _ in contexts]
        bar = progress_bar(self.progress, total=len(texts), desc=f"{self.name} beam search", unit="sentence")
        out: list = [None] * len(texts)
        for batch in length_batches(cost, self.token_budget * beam.SEARCH_BUDGET_FACTOR):
            found = self._candidate_words([contexts[i] for i in batch], pieces, k=k, num_beams=num_beams)
            for i, words in zip(batch, found, strict=True):
                out[i] = words
            if bar is not None:
                bar.update(len(batch))
        if bar is not None:
            bar.close()
        return out

    def _context(self, text: str, pieces: PieceClasses, text_start_marked: bool) -> tuple[list[int], torch.Tensor]:
        """A text's left context as the search reads it (the prefix token, then the context's ids) and
        the pieces that may start the gap's word there (after white space: those with a start marker)."""
        left, _ = self.split_gap(text)
        context = left.rstrip()
        marked = context != left if context else text_start_marked
        start = pieces.marked_start if marked else pieces.bare_start
        if not bool(start.any()):
            raise ModelError(
                f"model {self.name!r}: no vocabulary entry can start a word {'after white space' if marked else 'here'}"
                f"; its tokenizer cannot propose whole words for a gap"
            )
        return self.after_prefix([context])[0] if context else [self.prefix_id], start

    def _candidate_words(
        self,
        contexts: Sequence[tuple[list[int], torch.Tensor]],
        pieces: PieceClasses,
        *,
        k: int,
        num_beams: int | None,
    ) -> list[list[tuple[str, float]]]:
        """Distinct whole words the model proposes after each context (best first), with their beam
        scores: the contexts' beams searched together."""

        def forward(ids: torch.Tensor, cache: Any, rows: torch.Tensor) -> tuple[torch.Tensor, Any]:
            # each row's positions: its sentence's own context (left padding masked), then its pieces
            past = cache.get_seq_length() if cache is not None else 0
            own = decoder.prefix_mask[rows]
            mask = torch.cat([own, own.new_ones(len(rows), past + ids.shape[1] - own.shape[1])], dim=1)
            positions = (mask.cumsum(1) - 1).clamp(min=0)[:, past:]
            out = self.model(
                input_ids=ids,
                attention_mask=mask,
                position_ids=positions,
                past_key_values=cache,
                use_cache=self.beam_cache,
            )
            return out.logits, out.past_key_values

        decoder = IncrementalDecoder(
            forward, [prefix for prefix, _ in contexts], self.device, use_cache=self.beam_cache, sentences=len(contexts)
        )
        spans = single_word_beam_searches(
            decoder,
            len(contexts),
            start=torch.stack([start for _, start in contexts]),
            cont=pieces.cont,
            end=~pieces.cont,
            k=k,
            num_beams=num_beams,
        )
        out = []
        for found in spans:
            words: dict[str, float] = {}
            for p, lp in found:
                words.setdefault(cast(str, self.tokenizer.decode(p)).strip(), lp)  # one text for one sequence
            out.append([(w, lp) for w, lp in words.items() if w])
        return out
