"""Beam search over word pieces constrained to exactly one word (seq2seq and causal families).

The first piece must start a word, every later piece must continue it, and a candidate is
finished by one of the tokens that may end it (the next sentinel or the end of sequence
for mT5; anything that does not continue the word for a causal LM). A candidate's score
is the log-probability of its pieces and of the ending.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

NextLogProbs = Callable[[list[list[int]]], torch.Tensor]


def single_word_beam_search(next_log_probs: NextLogProbs, *, start: torch.Tensor, cont: torch.Tensor,
                            end: torch.Tensor, k: int, num_beams: int | None = None,
                            max_pieces: int = 8) -> list[tuple[list[int], float]]:
    """The ``k`` best single words: ``(piece ids, log-prob)``, best first.

    ``next_log_probs(beams)`` returns the log-probabilities (float32, ``[len(beams), V]``)
    of the next piece after each beam's pieces; ``start``/``cont``/``end`` are boolean masks
    over the vocabulary. Early stopping: the search ends when ``k`` words are finished and
    no open beam can still beat the worst of them (log-probabilities only fall as a word grows).
    """
    num_beams = num_beams or k
    beams: list[tuple[list[int], float]] = [([], 0.0)]
    finished: list[tuple[list[int], float]] = []
    with torch.inference_mode():
        for step in range(max_pieces):
            if not beams:
                break
            lp = next_log_probs([b for b, _ in beams])
            device = lp.device
            base = torch.tensor([s for _, s in beams], device=device)[:, None]
            if step > 0:
                # every open beam ended here, in one reduction and one copy to the host
                end_lps = torch.logsumexp(lp[:, end.to(device)], dim=1).tolist()
                finished.extend((b, s + e) for (b, s), e in zip(beams, end_lps, strict=True))
            allowed = (start if step == 0 else cont).to(device)
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
