"""Beam search over word pieces constrained to exactly one word (seq2seq and causal families).

The first piece must start a word, every later piece must continue it, and a candidate is
finished by one of the tokens that may end it (the next sentinel or the end of sequence
for mT5; anything that does not continue the word for a causal LM). A candidate's score
is the log-probability of its pieces and of the ending.

The model is asked for the next piece's log-probabilities through :class:`IncrementalDecoder`:
the prefix every beam shares (mT5: decoder start and sentinel; causal: the left context) runs
once, and each step runs only the newest piece of each beam against a key-value cache that
follows the beams (reordered by their parents, as transformers' own beam search does). Without
the cache every step would rerun every beam's whole prefix, and its cross-attention over the
encoder output.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

# forward(new token ids [n, t], cache or None) -> (logits [n, t, V], cache): one model call that
# extends the sequences in ``cache`` (None: nothing seen yet) by ``t`` tokens
Forward = Callable[[torch.Tensor, object], tuple[torch.Tensor, object]]
# next_log_probs(parents, pieces) -> [n, V]: called as IncrementalDecoder is
NextLogProbs = Callable[[torch.Tensor | None, torch.Tensor | None], torch.Tensor]


class IncrementalDecoder:
    """Next-piece log-probabilities (float32) of beams that grow by one piece per step.

    ``decoder(None, None)`` gives ``[1, V]`` after the shared prefix; ``decoder(parents,
    pieces)`` gives ``[n, V]`` for beams ``i`` = (beam ``parents[i]`` of the previous call,
    then ``pieces[i]``). With ``use_cache=False`` every call reruns the beams' whole sequences,
    the reference the cached path is tested and timed against (equal up to float32 rounding of
    the differently shaped products).
    """

    def __init__(self, forward: Forward, prefix: list[int], device, *, use_cache: bool = True):
        self.forward, self.device, self.use_cache = forward, device, use_cache
        self.prefix = torch.tensor([prefix], device=device)
        self.seqs: torch.Tensor | None = None  # [n, length]: the beams' sequences so far
        self.cache = None

    def __call__(self, parents: torch.Tensor | None, pieces: torch.Tensor | None) -> torch.Tensor:
        if parents is None:
            self.seqs, new = self.prefix, self.prefix
            self.cache = None
        else:
            parents, pieces = parents.to(self.device), pieces.to(self.device)
            self.seqs = torch.cat([self.seqs[parents], pieces[:, None]], dim=1)
            if self.use_cache:
                self.cache.reorder_cache(parents)
                new = pieces[:, None]
            else:
                new = self.seqs
        logits, cache = self.forward(new, self.cache if self.use_cache else None)
        if self.use_cache:
            self.cache = cache
        return torch.log_softmax(logits[:, -1].float(), dim=-1)


def single_word_beam_search(
    next_log_probs: NextLogProbs,
    *,
    start: torch.Tensor,
    cont: torch.Tensor,
    end: torch.Tensor,
    k: int,
    num_beams: int | None = None,
    max_pieces: int = 8,
) -> list[tuple[list[int], float]]:
    """The ``k`` best single words: ``(piece ids, log-prob)``, best first.

    ``next_log_probs`` is called as :class:`IncrementalDecoder` is: first with ``(None, None)``,
    then with each step's surviving beams as (parent index, new piece); ``start``/``cont``/``end``
    are boolean masks over the vocabulary. Early stopping: the search ends when ``k`` words are
    finished and no open beam can still beat the worst of them (log-probabilities only fall as a
    word grows). Words have at most ``max_pieces`` pieces.
    """
    num_beams = num_beams or k
    beams: list[tuple[list[int], float]] = [([], 0.0)]
    finished: list[tuple[list[int], float]] = []
    parents = pieces = None
    with torch.inference_mode():
        for step in range(max_pieces + 1):  # step s ends the words of s pieces and grows them by one
            if not beams:
                break
            lp = next_log_probs(parents, pieces)
            device = lp.device
            base = torch.tensor([s for _, s in beams], device=device)[:, None]
            if step > 0:
                # every open beam ended here, in one reduction and one copy to the host
                end_lps = torch.logsumexp(lp[:, end.to(device)], dim=1).tolist()
                finished.extend((b, s + e) for (b, s), e in zip(beams, end_lps, strict=True))
            if step == max_pieces:
                break
            allowed = (start if step == 0 else cont).to(device)
            scores = (base + lp).masked_fill(~allowed[None, :], float("-inf"))
            # the best continuations overall are among each beam's best: a top-k per row, then over
            # those (one top-k over the flat [beams x vocabulary] scores is about 10x slower on a CPU)
            row_top = torch.topk(scores, min(num_beams, scores.shape[1]), dim=1)
            n_keep = min(num_beams, int(torch.isfinite(row_top.values).sum()))
            if n_keep == 0:
                break
            top = torch.topk(row_top.values.view(-1), n_keep)
            parents = top.indices // row_top.values.shape[1]
            pieces = row_top.indices.view(-1)[top.indices]
            beams = [
                (beams[p][0] + [i], float(v))
                for v, p, i in zip(top.values.tolist(), parents.tolist(), pieces.tolist(), strict=True)
            ]
            finished.sort(key=lambda x: -x[1])
            if len(finished) >= k and beams and beams[0][1] < finished[k - 1][1]:
                break
        finished.sort(key=lambda x: -x[1])
    return finished[:k]
