"""Span infilling with seq2seq models of the T5 family (mT5).

The gap becomes the first sentinel (``<extra_id_0>``). Primitives (read by the gap protocol
:mod:`plmfair.scoring.span_infilling`): the decoder is forced to emit that sentinel, then a span
that is exactly one word (:meth:`Seq2SeqScorer.gap_candidates`, :mod:`plmfair.scoring.beam`):
its first piece starts a word (carries ``▁``), every later piece continues it (no ``▁``:
no word boundary inside), and the span ends with the next sentinel (``<extra_id_1>``) or
the end of sequence. A candidate's score is the log-probability of its pieces and of the
ending token; a given span is scored the same way, log P(<extra_id_0> answer <end>)
(:meth:`Seq2SeqScorer.span_log_likelihoods`).

No CrowS-Pairs protocol is defined for span-infilling models.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import create_position_bias_mask, sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from plmfair.errors import ModelError
from plmfair.scoring import beam
from plmfair.scoring.base import (
    Scorer,
    input_device,
    length_batches,
    progress_bar,
)
from plmfair.scoring.beam import IncrementalDecoder, single_word_beam_searches
from plmfair.scoring.pieces import piece_classes

if TYPE_CHECKING:
    from transformers import BatchEncoding, PreTrainedModel, PreTrainedTokenizerBase

SENTINEL = "<extra_id_0>"
# the longest span the search grows: one word's pieces
MAX_SPAN_PIECES = beam.MAX_WORD_PIECES


# the attention the search's decoder runs with (registered below with transformers' attention interface)
SHARED_ENCODER_ATTENTION = "plmfair_shared_encoder"


def shared_encoder_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    *,
    beam_rows: torch.Tensor | None = None,
    position_bias: torch.Tensor | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """Transformers' SDPA attention, except a cross-attention (``module.is_causal`` false) given
    ``beam_rows``: its keys and values are held once per sentence (``[sentences, heads, L, d]``),
    not once per beam, and ``beam_rows[i]`` is the sentence of query row ``i`` (a sentence's beams
    consecutive). A sentence's beams are then the queries of one attention over its encoder output
    instead of as many attentions over as many copies of it: less memory, and a product per sentence."""
    if beam_rows is None or module.is_causal:
        return sdpa_attention_forward(module, query, key, value, attention_mask, position_bias=position_bias, **kwargs)
    sentences, heads, _, dim = key.shape
    length = query.shape[2]
    counts = torch.bincount(beam_rows, minlength=sentences)
    slot = beam.runs(counts)[1]
    most = int(counts.max())
    grid = query.new_zeros((sentences, most, length, heads, dim))  # each sentence's beams side by side
    grid[beam_rows, slot] = query.transpose(1, 2)
    mask = attention_mask
    if position_bias is not None:  # [1 or sentences, heads, t, L]: the same for each of a sentence's beams
        mask = create_position_bias_mask(position_bias, attention_mask, False, query, key)
        mask = mask[:, :, None].expand(-1, -1, most, -1, -1).flatten(2, 3)
    out = torch.nn.functional.scaled_dot_product_attention(
        grid.flatten(1, 2).transpose(1, 2), key, value, attn_mask=mask, scale=kwargs.get("scaling")
    )
    return out.transpose(1, 2).unflatten(1, (most, length))[beam_rows, slot], None


AttentionInterface.register(SHARED_ENCODER_ATTENTION, shared_encoder_attention)
AttentionMaskInterface.register(SHARED_ENCODER_ATTENTION, sdpa_mask)


@contextlib.contextmanager
def attention_implementation(model: PreTrainedModel, name: str, model_name: str) -> Iterator[None]:
    """``model`` runs with the attention implementation ``name`` inside the block, as before after it."""
    previous = model.config._attn_implementation
    model.set_attn_implementation(name)
    if model.config._attn_implementation != name:
        raise ModelError(
            f"model {model_name!r} cannot switch its attention implementation (transformers' attention interface), "
            "which the seq2seq gap search needs: use a T5-family model of transformers (T5, mT5, umT5)"
        )
    try:
        yield
    finally:
        model.set_attn_implementation(previous)


@dataclass
class SpanVocabulary:
    """The pieces a sentinel's span may hold, as masks over the vocabulary, and the sentinel."""

    start: torch.Tensor  # bool [V]: pieces that start a word with a letter
    cont: torch.Tensor  # bool [V]: pieces that continue a word
    end: torch.Tensor  # bool [V]: tokens that end the span
    sentinel: int


def span_vocabulary(tokenizer: PreTrainedTokenizerBase, vocab_size: int, model_name: str) -> SpanVocabulary:
    """Classify the vocabulary for the single-word constraint; a tokenizer without sentinels stops here."""
    s0 = cast(int, tokenizer.convert_tokens_to_ids(SENTINEL))  # one id for one token
    s1 = cast(int, tokenizer.convert_tokens_to_ids("<extra_id_1>"))
    if s0 is None or s0 == tokenizer.unk_token_id or s1 is None or s1 == tokenizer.unk_token_id:
        raise ModelError(
            f"model {model_name!r} has no sentinel tokens (<extra_id_0>, <extra_id_1>); it cannot fill a gap as a "
            "seq2seq model"
        )
    pieces = piece_classes(tokenizer, vocab_size)
    end = torch.zeros(vocab_size, dtype=torch.bool)
    end[s1] = True
    if tokenizer.eos_token_id is not None:
        end[tokenizer.eos_token_id] = True
    return SpanVocabulary(pieces.marked_start, pieces.cont, end, s0)


class Seq2SeqScorer(Scorer):
    """Gap filling with a T5-style encoder-decoder."""

    family = "seq2seq"

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, **kwargs: Any) -> None:
        super().__init__(model, tokenizer, **kwargs)
        self.vocab = span_vocabulary(tokenizer, model.get_output_embeddings().weight.shape[0], self.name)
        self.device = input_device(model)

    def _encode(self, text: str) -> BatchEncoding:
        left, right = self.split_gap(text)
        return self.tokenizer(left + SENTINEL + right, return_tensors="pt").to(self.device)

    def last_hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model.get_encoder()(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    # The family's primitives, which its gap protocol (plmfair.scoring.span_infilling) reads.

    def gap_candidates(
        self, texts: Sequence[str], *, k: int, num_beams: int | None = None
    ) -> list[list[tuple[str, float]]]:
        """The ``k`` best spans of exactly one word after the sentinel of each text's gap, best
        first: (the word, log P(<extra_id_0> pieces <end>)), by constrained beam search. Sentences
        are searched together, their beams in one decoder call per step (the cross-attention of a
        sentence's beams over its encoder output once: :func:`shared_encoder_attention`), in batches
        whose beams x (encoder length + the longest span) fit the token budget times
        :data:`plmfair.scoring.beam.SEARCH_BUDGET_FACTOR`; each sentence's words are those of a search of it alone."""
        bar = progress_bar(self.progress, total=len(texts), desc=f"{self.name} beam search", unit="sentence")
        encoded = [self._encode(text)["input_ids"][0] for text in texts]
        beams = num_beams or k
        cost = [beams * (len(ids) + MAX_SPAN_PIECES + 2) for ids in encoded]
        out: list = [None] * len(texts)

        @functools.cache  # each distinct span decoded once: the sentences' candidates share many
        def word(pieces: tuple[int, ...]) -> str:
            tokens = cast("list[str]", self.tokenizer.convert_ids_to_tokens(list(pieces)))  # a list for a list
            return self.tokenizer.convert_tokens_to_string(tokens).strip()

        with attention_implementation(self.model, SHARED_ENCODER_ATTENTION, self.name):
            for batch in length_batches(cost, self.token_budget * beam.SEARCH_BUDGET_FACTOR):
                spans = self._best_spans([encoded[i] for i in batch], k=k, num_beams=num_beams)
                for i, found in zip(batch, spans, strict=True):
                    out[i] = [(word(tuple(p)), lp) for p, lp in found]
                if bar is not None:
                    bar.update(len(batch))
        if bar is not None:
            bar.close()
        return out

    def _best_spans(self, encoded: Sequence[torch.Tensor], *, k: int, num_beams: int | None) -> list:
        """The constrained search of several sentences at once (their encoder inputs right-padded)."""
        ids = torch.nn.utils.rnn.pad_sequence(
            list(encoded), batch_first=True, padding_value=self.tokenizer.pad_token_id
        )
        mask = torch.nn.utils.rnn.pad_sequence([torch.ones_like(e) for e in encoded], batch_first=True)
        ids, mask = ids.to(self.device), mask.to(self.device)
        with torch.inference_mode():
            enc_out = self.model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state

        encoder_mask = mask[:, None, None, :].bool()  # once per sentence; a 4-D mask passes through as it is

        def forward(new: torch.Tensor, cache: Any, rows: torch.Tensor) -> tuple[torch.Tensor, Any]:
            out = self.model(
                encoder_outputs=(enc_out,),
                attention_mask=encoder_mask,
                decoder_input_ids=new,
                past_key_values=cache,
                use_cache=self.beam_cache,
                beam_rows=rows,  # read by shared_encoder_attention
            )
            return out.logits, out.past_key_values

        def reorder(cache: Any, parents: torch.Tensor) -> None:  # the cross-attention's stay once per sentence
            cache.self_attention_cache.reorder_cache(parents)

        decoder = IncrementalDecoder(
            forward,
            [self.model.config.decoder_start_token_id, self.vocab.sentinel],
            self.device,
            use_cache=self.beam_cache,
            sentences=len(encoded),
            reorder=reorder,
        )
        return single_word_beam_searches(
            decoder,
            len(encoded),
            start=self.vocab.start,
            cont=self.vocab.cont,
            end=self.vocab.end,
            k=k,
            num_beams=num_beams,
            max_pieces=MAX_SPAN_PIECES,
        )

    def span_log_likelihoods(self, items: Sequence[tuple[str, str]]) -> list[tuple[float, int]]:
        """For each ``(text with the gap, answer)``: log P(<extra_id_0> answer <end>), over the
        answer's pieces and the ending token, and the number of pieces. The encoder runs once per
        sentence; the answers to a sentence go through the decoder together, in batches of equal
        length under the token budget (no padding: a padded batch would change the products'
        shapes and so the last bits of the scores)."""
        by_text: dict[str, list[int]] = {}
        for i, (text, _) in enumerate(items):
            by_text.setdefault(text, []).append(i)
        out: list = [None] * len(items)
        start_id = self.model.config.decoder_start_token_id
        end = self.vocab.end.to(self.device)
        bar = progress_bar(self.progress, total=len(items), desc=f"{self.name} answers", unit="answer")
        for text, idx in by_text.items():
            enc = self._encode(text)
            pieces = [self.tokenizer(self.prepare(items[i][1]), add_special_tokens=False)["input_ids"] for i in idx]
            with torch.inference_mode():
                enc_out = self.model.get_encoder()(**enc).last_hidden_state
                # max_padding 0: a batch holds answers of one length only
                for batch in length_batches([len(p) + 2 for p in pieces], self.token_budget, max_padding=0.0):
                    dec = torch.tensor([[start_id, self.vocab.sentinel, *pieces[j]] for j in batch], device=self.device)
                    n = len(batch)
                    logits = self.model(
                        encoder_outputs=(enc_out.expand(n, -1, -1),),
                        attention_mask=enc["attention_mask"].expand(n, -1),
                        decoder_input_ids=dec,
                    ).logits
                    lp = torch.log_softmax(logits.float(), dim=-1)
                    for r, j in enumerate(batch):
                        span = pieces[j]
                        total = 0.0
                        for t, piece in enumerate(span):
                            total += lp[r, 1 + t, piece].item()
                        total += torch.logsumexp(lp[r, 1 + len(span), end], dim=0).item()
                        out[idx[j]] = (total, len(span))
                    if bar is not None:
                        bar.update(n)
        if bar is not None:
            bar.close()
        return out
