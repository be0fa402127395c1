"""The single-word beam search against exhaustive enumeration on a model whose next-piece
distribution is a fixed random function of the pieces so far."""

from __future__ import annotations

import itertools
import zlib

import pytest
import torch

from plmfair.scoring.beam import single_word_beam_search

# vocabulary: 0-1 start a word, 2-3 continue it, 4 ends it, 5 is none of these
START = torch.tensor([True, True, False, False, False, False])
CONT = torch.tensor([False, False, True, True, False, False])
END = torch.tensor([False, False, False, False, True, False])
MAX_PIECES = 3


def log_probs_after(pieces: tuple[int, ...]) -> torch.Tensor:
    """A fixed, different distribution after every sequence of pieces."""
    generator = torch.Generator().manual_seed(zlib.crc32(repr(pieces).encode()))
    return torch.log_softmax(3 * torch.randn(6, generator=generator), dim=-1)


class TableDecoder:
    """Called as IncrementalDecoder is: (None, None), then (parents, pieces) of the surviving beams."""

    def __init__(self):
        self.seqs: list[tuple[int, ...]] = []

    def __call__(self, parents, pieces):
        if parents is None:
            self.seqs = [()]
        else:
            self.seqs = [self.seqs[p] + (i,) for p, i in zip(parents.tolist(), pieces.tolist(), strict=True)]
        return torch.stack([log_probs_after(s) for s in self.seqs])


def every_word() -> list[tuple[list[int], float]]:
    """Every word of 1..MAX_PIECES pieces with its log-probability (pieces, then the ending), best first."""
    words = []
    for n in range(1, MAX_PIECES + 1):
        for word in itertools.product([0, 1], *[[2, 3]] * (n - 1)):
            lp = sum(float(log_probs_after(word[:i])[p]) for i, p in enumerate(word))
            lp += float(torch.logsumexp(log_probs_after(word)[END], dim=0))
            words.append((list(word), lp))
    return sorted(words, key=lambda w: -w[1])


def search(k: int, num_beams: int) -> list[tuple[list[int], float]]:
    return single_word_beam_search(
        TableDecoder(), start=START, cont=CONT, end=END, k=k, num_beams=num_beams, max_pieces=MAX_PIECES
    )


def test_a_beam_wide_enough_finds_every_word_with_its_exact_score():
    expected = every_word()
    assert len(expected) == 2 + 4 + 8  # words of 1, 2 and 3 pieces, none longer
    found = search(k=len(expected), num_beams=len(expected))
    assert [w for w, _ in found] == [w for w, _ in expected]
    assert [lp for _, lp in found] == pytest.approx([lp for _, lp in expected], abs=1e-5)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_early_stopping_keeps_the_k_best_words(k):
    expected = every_word()[:k]
    found = search(k=k, num_beams=16)
    assert [w for w, _ in found] == [w for w, _ in expected]


def test_a_narrow_beam_scores_what_it_finds_exactly():
    exact = {tuple(w): lp for w, lp in every_word()}
    found = search(k=4, num_beams=2)
    assert len(found) == 4 and [lp for _, lp in found] == sorted((lp for _, lp in found), reverse=True)
    for word, lp in found:
        assert lp == pytest.approx(exact[tuple(word)], abs=1e-5)


class SentencesDecoder:
    """Sentences searched together, each with its own fixed distributions (seeded by its id): called
    as IncrementalDecoder is, with one row per sentence first."""

    def __init__(self, ids: list[int]):
        self.ids = ids
        self.rows: list[tuple[int, tuple[int, ...]]] = []

    def __call__(self, parents, pieces):
        if parents is None:
            self.rows = [(s, ()) for s in self.ids]
        else:
            self.rows = [
                (self.rows[p][0], self.rows[p][1] + (i,))
                for p, i in zip(parents.tolist(), pieces.tolist(), strict=True)
            ]
        return torch.stack([log_probs_after((100 * (s + 1), *seq)) for s, seq in self.rows])


@pytest.mark.parametrize("k, num_beams", [(3, 3), (5, 16), (14, 14)])
def test_sentences_searched_together_find_what_each_finds_alone(k, num_beams):
    from plmfair.scoring.beam import single_word_beam_searches

    together = single_word_beam_searches(
        SentencesDecoder([0, 1, 2, 3]),
        4,
        start=START,
        cont=CONT,
        end=END,
        k=k,
        num_beams=num_beams,
        max_pieces=MAX_PIECES,
    )
    for s in range(4):
        alone = single_word_beam_search(
            SentencesDecoder([s]), start=START, cont=CONT, end=END, k=k, num_beams=num_beams, max_pieces=MAX_PIECES
        )
        assert [w for w, _ in together[s]] == [w for w, _ in alone]
        assert [lp for _, lp in together[s]] == pytest.approx([lp for _, lp in alone], abs=1e-6)
    assert together[0] != together[1]  # each sentence its own words
