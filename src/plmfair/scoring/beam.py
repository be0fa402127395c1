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
from typing import Any, cast

import torch

# the search's key-value entries a batch of sentences may hold, per token of the scorer's token budget:
# a step reads one new piece per beam, so its memory, not its arithmetic, bounds a batch
SEARCH_BUDGET_FACTOR = 16

# forward(new token ids [n, t], cache or None, rows [n]) -> (logits [n, t, V], cache): one model call that
# extends the sequences in ``cache`` (None: nothing seen yet) by ``t`` tokens; ``rows`` says which of
# the searched sentences each sequence belongs to (a seq2seq model reads that sentence's encoder output)
Forward = Callable[[torch.Tensor, object, torch.Tensor], tuple[torch.Tensor, object]]
# the longest word a search grows, in pieces
MAX_WORD_PIECES = 8
# next_log_probs(parents, pieces) -> [n, V]: called as IncrementalDecoder is
NextLogProbs = Callable[[torch.Tensor | None, torch.Tensor | None], torch.Tensor]
Words = list[tuple[list[int], float]]


class IncrementalDecoder:
    """Next-piece log-probabilities (float32) of beams that grow by one piece per step.

    ``decoder(None, None)`` gives ``[sentences, V]`` after the prefix of each sentence (one for all,
    or each its own: left-padded, ``prefix_mask`` marking its positions);
    ``decoder(parents, pieces)`` gives ``[n, V]`` for beams ``i`` = (beam ``parents[i]`` of the
    previous call, then ``pieces[i]``), the beams of every sentence in one model call. With
    ``use_cache=False`` every call reruns the beams' whole sequences, the reference the cached path
    is tested and timed against (equal up to float32 rounding of the differently shaped products).
    """

    def __init__(
        self,
        forward: Forward,
        prefix: list[int] | list[list[int]],
        device: torch.device | str,
        *,
        use_cache: bool = True,
        sentences: int = 1,
        reorder: Callable[[Any, torch.Tensor], None] | None = None,
    ):
        self.forward, self.device, self.use_cache = forward, device, use_cache
        # reorder(cache, parents): the cache's rows to the beams' parents
        self.reorder = reorder or (lambda cache, parents: cache.reorder_cache(parents))
        # one prefix for every sentence, or each its own, left-padded (with its first id) to the longest:
        # prefix_mask marks each sentence's own positions, what a model with positions reads
        prefixes = cast(list[list[int]], [prefix] * sentences if prefix and isinstance(prefix[0], int) else prefix)
        width = max(len(p) for p in prefixes)
        self.prefix = torch.tensor([[p[0]] * (width - len(p)) + list(p) for p in prefixes], device=device)
        self.prefix_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prefixes], device=device)
        self.seqs: torch.Tensor | None = None  # [n, length]: the beams' sequences so far
        self.rows: torch.Tensor | None = None  # [n]: the sentence of each beam
        self.cache: Any = None  # the model's past keys and values

    def __call__(self, parents: torch.Tensor | None, pieces: torch.Tensor | None) -> torch.Tensor:
        if parents is None:
            self.seqs, new = self.prefix, self.prefix
            self.rows = torch.arange(len(self.prefix), device=self.device)
            self.cache = None
        else:
            assert pieces is not None and self.seqs is not None and self.rows is not None  # after the first step
            parents, pieces = parents.to(self.device), pieces.to(self.device)
            self.seqs = torch.cat([self.seqs[parents], pieces[:, None]], dim=1)
            self.rows = self.rows[parents]
            if self.use_cache:
                self.reorder(self.cache, parents)
                new = pieces[:, None]
            else:
                new = self.seqs
        logits, cache = self.forward(new, self.cache if self.use_cache else None, self.rows)
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
    max_pieces: int = MAX_WORD_PIECES,
) -> Words:
    """The ``k`` best single words of one sentence: :func:`single_word_beam_searches` of one."""
    return single_word_beam_searches(
        next_log_probs, 1, start=start, cont=cont, end=end, k=k, num_beams=num_beams, max_pieces=max_pieces
    )[0]


def single_word_beam_searches(
    next_log_probs: NextLogProbs,
    sentences: int,
    *,
    start: torch.Tensor,
    cont: torch.Tensor,
    end: torch.Tensor,
    k: int,
    num_beams: int | None = None,
    max_pieces: int = MAX_WORD_PIECES,
) -> list[Words]:
    """For each of ``sentences`` searched together, the ``k`` best single words: ``(piece ids,
    log-prob)``, best first.

    ``next_log_probs`` is called as :class:`IncrementalDecoder` is: first with ``(None, None)``
    (one row per sentence), then with each step's surviving beams of every sentence as (parent row,
    new piece), a sentence's beams in consecutive rows; ``start``/``cont``/``end`` are boolean masks
    over the vocabulary (``start`` one for all sentences, or ``[sentences, V]``, each its own). Each
    sentence keeps its own ``num_beams`` beams, chosen among its own
    continuations only, so its words are those of a search of it alone. Early stopping, per
    sentence: its search ends when ``k`` words are finished and no open beam can still beat the
    worst of them (log-probabilities only fall as a word grows); its beams then leave the batch.
    Words have at most ``max_pieces`` pieces. The bookkeeping is done on tensors, a step at a time
    for every sentence at once (a Python loop over the beams cost more than the model on a CPU).
    """
    num_beams = num_beams or k
    owner = torch.arange(sentences)  # the sentence of each open beam (row)
    history = torch.zeros((sentences, 0), dtype=torch.long)  # the pieces of each open beam
    score = torch.zeros(sentences)  # the log-probability of each open beam
    # the k best finished scores of each sentence so far (-inf: fewer than k), for early stopping
    kth_best = torch.full((sentences, k), float("-inf"))
    finished: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []  # (owner, pieces, log-prob) per step
    parents = pieces = None
    # the pieces that may come first and next (the others never enter a beam), and those that end a word
    first, then = torch.nonzero(start.reshape(-1, start.shape[-1]).any(0)).flatten(), torch.nonzero(cont).flatten()
    with torch.inference_mode():
        for step in range(max_pieces + 1):  # step s ends the words of s pieces and grows them by one
            if not len(owner):
                break
            lp = next_log_probs(parents, pieces)
            if step == 0:
                first, then, end = first.to(lp.device), then.to(lp.device), end.to(lp.device)
            if step > 0:  # every open beam ended here
                ended = score + torch.logsumexp(lp[:, end], dim=1).float().cpu()
                finished.append((owner, history, ended))
                kth_best = _best_per_sentence(kth_best, owner, ended, k)
            if step == max_pieces:
                break
            allowed = first if step == 0 else then
            scores = lp.index_select(1, allowed).add_(score.to(lp.device)[:, None])
            if step == 0 and start.dim() == 2:  # each sentence's own first pieces (one row per sentence)
                scores = scores.masked_fill(~start.to(lp.device)[:, allowed], float("-inf"))
            value, parent, column = _best_continuations(scores, owner, num_beams)
            sentence_ids = torch.unique_consecutive(owner)
            # a beam below its sentence's k-th best finished word can never enter the k best (log-probabilities
            # only fall as a word grows): it leaves; a sentence whose beams all left stops
            keep = torch.isfinite(value) & ~(value < kth_best[sentence_ids, k - 1][:, None])
            parents = parent[keep]
            pieces = allowed.cpu()[column[keep]]
            owner = sentence_ids[:, None].expand_as(keep)[keep]
            history = torch.cat([history[parents], pieces[:, None]], dim=1)
            score = value[keep]
    return _words(finished, sentences, k)


def runs(counts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """For items that come in consecutive runs of ``counts`` (a sentence's beams, its candidates):
    each item's run, its position within the run, and each run's first item."""
    offsets = torch.cumsum(counts, 0) - counts
    run = torch.repeat_interleave(torch.arange(len(counts), device=counts.device), counts)
    return run, torch.arange(len(run), device=counts.device) - offsets[run], offsets


def _best_continuations(
    scores: torch.Tensor, owner: torch.Tensor, num_beams: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each open sentence's ``num_beams`` best continuations among its rows' ``scores`` ([rows, pieces],
    a sentence's rows consecutive, as ``owner`` says): (score, parent row, column), each
    ``[sentences, num_beams]`` on the CPU, -inf where a sentence has fewer. One top-k over each
    sentence's rows side by side (padded with -inf rows where sentences hold different numbers)."""
    _, counts = torch.unique_consecutive(owner, return_counts=True)
    slot, position, first = runs(counts.to(scores.device))
    width, most = scores.shape[1], int(counts.max())
    if bool((counts == most).all()):
        grid = scores.reshape(len(counts), most * width)
    else:
        grid = scores.new_full((len(counts), most, width), float("-inf"))
        grid[slot, position] = scores
        grid = grid.reshape(len(counts), most * width)
    top = torch.topk(grid, min(num_beams, grid.shape[1]), dim=1)
    value, index = top.values.float().cpu(), top.indices.cpu()
    return value, first.cpu()[:, None] + torch.div(index, width, rounding_mode="floor"), index % width


def _best_per_sentence(best: torch.Tensor, owner: torch.Tensor, scores: torch.Tensor, k: int) -> torch.Tensor:
    """The ``k`` best of each sentence's previous best and its new ``scores``."""
    _, counts = torch.unique_consecutive(owner, return_counts=True)
    new = torch.full((best.shape[0], int(counts.max())), float("-inf"))
    new[owner, runs(counts)[1]] = scores
    return torch.topk(torch.cat([best, new], dim=1), k, dim=1).values


def _words(finished: list, sentences: int, k: int) -> list[Words]:
    """Each sentence's ``k`` best finished words, best first, as (piece ids, log-prob): ranked on
    tensors, only the winners copied out."""
    owner = torch.cat([o for o, _, _ in finished]) if finished else torch.zeros(0, dtype=torch.long)
    scores = torch.cat([s for _, _, s in finished]) if finished else torch.zeros(0)
    step = torch.cat([torch.full((len(o),), i) for i, (o, _, _) in enumerate(finished)]) if finished else owner
    row = torch.cat([torch.arange(len(o)) for o, _, _ in finished]) if finished else owner
    order = torch.argsort(scores, descending=True, stable=True)
    order = order[torch.argsort(owner[order], stable=True)]  # by sentence, best first within it
    rank = runs(torch.bincount(owner, minlength=sentences))[1]
    chosen = order[rank < k]
    pieces: list = [None] * len(chosen)
    for i, (_, history, _) in enumerate(finished):  # each step's winners copied out in one call
        at = torch.nonzero(step[chosen] == i).flatten()
        for j, word in zip(at.tolist(), history[row[chosen[at]]].tolist(), strict=True):
            pieces[j] = word
    out: list[Words] = [[] for _ in range(sentences)]
    for sentence, word, value in zip(owner[chosen].tolist(), pieces, scores[chosen].tolist(), strict=True):
        out[sentence].append((word, value))
    return out
