"""A few training steps on the annotators' answers, so that the demo's figures show something."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from plmfair.text import MASK

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


def _pad(rows: list[list[int]], value: int) -> torch.Tensor:
    width = max(map(len, rows))
    return torch.tensor([row + [value] * (width - len(row)) for row in rows])


def _batch(tokenizer: PreTrainedTokenizerBase, family: str, gaps: list[tuple[str, str]]) -> dict[str, torch.Tensor]:
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
    return {
        "input_ids": _pad(ids, 0),
        "attention_mask": _pad([[1] * len(row) for row in ids], 0),
        "labels": _pad(labels, -100),
    }


def train_briefly(
    tokenizer: PreTrainedTokenizerBase,
    model: PreTrainedModel,
    family: str,
    gaps: list[tuple[str, str]],
    *,
    steps: int,
    seed: int,
    batch_size: int = 16,
    learning_rate: float = 1e-2,
) -> list[float]:
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
