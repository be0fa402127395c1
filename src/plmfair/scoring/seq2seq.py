"""Span infilling with seq2seq models of the T5 family (mT5): constrained beam search and span scores.

The gap is the first sentinel (``<extra_id_0>``). The decoder is forced to emit that
sentinel, then a span that is exactly one word: its first piece starts a word (carries
``▁``), every later piece continues it (no ``▁``: no word boundary inside), and the span
ends with the next sentinel (``<extra_id_1>``) or the end of sequence. A candidate's
score is the log-probability of its pieces and of the ending token.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from plmfair.errors import ModelError


@dataclass
class SpanVocabulary:
    start: torch.Tensor  # bool [V]: pieces that start a word with a letter
    cont: torch.Tensor  # bool [V]: pieces that continue a word
    end_ids: list[int]  # tokens that end the span
    sentinel: int
    decoder_start: int


def span_vocabulary(tokenizer, vocab_size: int, model_name: str) -> SpanVocabulary:
    """Classify the vocabulary for the single-word constraint; a tokenizer without sentinels stops here."""
    s0 = tokenizer.convert_tokens_to_ids("<extra_id_0>")
    s1 = tokenizer.convert_tokens_to_ids("<extra_id_1>")
    if s0 is None or s0 == tokenizer.unk_token_id or s1 is None or s1 == tokenizer.unk_token_id:
        raise ModelError(f"model {model_name!r} has no sentinel tokens (<extra_id_0>, <extra_id_1>); it cannot fill a gap as a seq2seq model")
    start = torch.zeros(vocab_size, dtype=torch.bool)
    cont = torch.zeros(vocab_size, dtype=torch.bool)
    special = set(tokenizer.all_special_ids)
    for token, tid in tokenizer.get_vocab().items():
        if tid >= vocab_size or tid in special or token.startswith("<extra_id_"):
            continue
        if token.startswith("▁"):
            body = token[1:]
            if body and body[0].isalpha() and all(ch.isalpha() or ch in "-'’" for ch in body):
                start[tid] = True
        elif token and all(ch.isalpha() or ch in "-'’" for ch in token):
            cont[tid] = True
    ends = [s1] + ([tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else [])
    return SpanVocabulary(start, cont, ends, s0, 0)


def _decoder_logprobs(model, enc_out, enc_mask, prefixes: torch.Tensor) -> torch.Tensor:
    out = model(encoder_outputs=(enc_out,), attention_mask=enc_mask, decoder_input_ids=prefixes)
    return torch.log_softmax(out.logits[:, -1].float(), dim=-1)


def constrained_beam_search(
    model, tokenizer, text: str, *, vocab: SpanVocabulary, k: int = 100, num_beams: int | None = None,
    max_pieces: int = 8,
) -> list[tuple[list[int], float]]:
    """The ``k`` best single-word spans for the sentinel in ``text``: ``(piece ids, log-prob)``, best first.

    Beam search with early stopping: it ends when ``k`` spans are finished and no open
    beam can still beat the worst of them (log-probabilities only fall as a span grows).
    """
    device = next(model.parameters()).device
    num_beams = num_beams or k
    enc = tokenizer(text, return_tensors="pt").to(device)
    start_id = model.config.decoder_start_token_id
    start_mask, cont_mask = vocab.start.to(device), vocab.cont.to(device)
    with torch.inference_mode():
        enc_out = model.get_encoder()(**enc).last_hidden_state
        beams: list[tuple[list[int], float]] = [([], 0.0)]
        finished: list[tuple[list[int], float]] = []
        for step in range(max_pieces):
            if not beams:
                break
            prefixes = torch.tensor([[start_id, vocab.sentinel] + b for b, _ in beams], device=device)
            n = len(beams)
            lp = _decoder_logprobs(model, enc_out.expand(n, -1, -1), enc["attention_mask"].expand(n, -1), prefixes)
            base = torch.tensor([s for _, s in beams], device=device)[:, None]
            if step > 0:
                for i, (b, s) in enumerate(beams):
                    end_lp = torch.logsumexp(lp[i, vocab.end_ids], dim=0).item()
                    finished.append((b, s + end_lp))
            allowed = start_mask if step == 0 else cont_mask
            scores = (base + lp).masked_fill(~allowed[None, :], float("-inf"))
            flat = scores.view(-1)
            n_keep = min(num_beams, int(torch.isfinite(flat).sum()))
            if n_keep == 0:
                break
            top = torch.topk(flat, n_keep)
            vsize = lp.shape[-1]
            beams = [
                (beams[int(i) // vsize][0] + [int(i) % vsize], float(v))
                for v, i in zip(top.values.tolist(), top.indices.tolist(), strict=True)
            ]
            finished.sort(key=lambda x: -x[1])
            if len(finished) >= k and beams and beams[0][1] < finished[k - 1][1]:
                break
        finished.sort(key=lambda x: -x[1])
    return finished[:k]


def span_log_prob(model, tokenizer, text: str, span: str, *, vocab: SpanVocabulary) -> tuple[float, int]:
    """log P(<extra_id_0> span <end>) for a given answer ``span``: the pieces and the ending token."""
    device = next(model.parameters()).device
    pieces = tokenizer(span, add_special_tokens=False)["input_ids"]
    enc = tokenizer(text, return_tensors="pt").to(device)
    start_id = model.config.decoder_start_token_id
    dec = torch.tensor([[start_id, vocab.sentinel] + pieces], device=device)
    with torch.inference_mode():
        logits = model(**enc, decoder_input_ids=dec).logits[0].float()
        lp = torch.log_softmax(logits, dim=-1)
    total = 0.0
    for j, piece in enumerate(pieces):
        total += lp[1 + j, piece].item()
    total += torch.logsumexp(lp[1 + len(pieces), vocab.end_ids], dim=0).item()
    return total, len(pieces)
