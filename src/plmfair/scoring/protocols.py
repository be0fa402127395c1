"""Protocols, registered by name: how a model scores each sentence of a minimal pair (CrowS-Pairs,
:data:`PROTOCOLS`) and how it fills a cloze gap and scores given answers (MozArt and the cloze sets,
:data:`CLOZE_PROTOCOLS`).

A protocol is written once, in its own module, above the primitives of a model family (each names
the methods it reads, ``primitives``; a test holds every family to the primitives of its protocols).

CrowS-Pairs protocols apply to one family (``family``):

- masked LMs (:class:`plmfair.scoring.mlm.MaskedLMScorer`): *masked copies*
  (:meth:`~plmfair.scoring.mlm.MaskedLMScorer.masked_copies_log_probs`) for the masking rules of
  :mod:`plmfair.scoring.masking` (``nangia``, ``all_tokens``, ``within_word_l2r``), or *one unmasked
  pass* (:meth:`~plmfair.scoring.mlm.MaskedLMScorer.unmasked_log_probs`) for ``aul``
  (:mod:`plmfair.scoring.aul`);
- causal LMs (:class:`plmfair.scoring.causal.CausalLMScorer`): the *left-to-right* log-likelihood
  (:meth:`~plmfair.scoring.causal.CausalLMScorer.sequence_log_likelihoods`) for
  ``sentence_log_likelihood`` (:mod:`plmfair.scoring.sentence_log_likelihood`).

Every family encodes sentences (``encode_sentences``) and cuts one that is too long (``truncate``);
:meth:`plmfair.scoring.base.Scorer.score_sentences` does the rest once for all of them (which pairs
fit, the protocol's scores, rounding, checks). A new protocol is a module with its ``score`` function
and one line in :data:`PROTOCOLS` naming it (``crows_pairs.protocol`` is checked against it). The
registries name each protocol lazily, so this module, which holds the types every protocol uses,
imports none of them.

Gap protocols (:class:`ClozeProtocol`) give a gap's top-k whole-word candidates (``predict``) and
the log-probability of given answers in it (``score_answers``); each family names the one it is
scored with (``Family.cloze_protocol`` in :data:`plmfair.scoring.FAMILIES`):

- ``fill_mask`` (:mod:`plmfair.scoring.fill_mask`): masked LMs, as MozArt scores mBERT and XLM-R;
- ``span_infilling`` (:mod:`plmfair.scoring.span_infilling`): T5-style seq2seq models, as MozArt
  scores mT5;
- ``left_context_rerank`` (:mod:`plmfair.scoring.left_context_rerank`): causal LMs.

:meth:`plmfair.scoring.base.Scorer.predict_gap` and :meth:`~plmfair.scoring.base.Scorer.score_answers`
check what a gap protocol returns, once for every family. Torch-free: the configuration is checked
against the registries before any model library is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from plmfair.registry import Registry
from plmfair.scoring import CAUSAL_PROTOCOL

Groups = list[list[int]]
# A protocol's scores of each pair's two sentences: ((score, units scored), (score, units scored))
PairScores = list[tuple[tuple[float, int], tuple[float, int]]]


@dataclass(frozen=True)
class TokenizedSentence:
    """Token ids of a sentence with special tokens, and the word index of each (None for specials)."""

    ids: list[int]
    word_ids: list[int | None]
    special_ids: frozenset[int]

    def content_positions(self) -> list[int]:
        return [i for i, t in enumerate(self.ids) if t not in self.special_ids]


def paired(totals: Sequence[float], units: Sequence[int]) -> PairScores:
    """Sentence scores listed pair by pair (more, less, more, less, ...) as each pair's two."""
    return [((totals[k], units[k]), (totals[k + 1], units[k + 1])) for k in range(0, len(totals), 2)]


@dataclass(frozen=True)
class Protocol:
    """``score(scorer, protocol, pairs, desc)`` gives each pair's two (score, units scored) from the
    family's primitives; ``masking``: a masking rule's groups (the masked-copies protocols);
    ``rounded``: Nangia et al.'s score of the protocol compares scores rounded to 3 decimals, as their
    metric.py does (the other estimands compare them at full precision)."""

    name: str
    reference: str
    family: str
    score: Callable[..., PairScores]
    primitives: tuple[str, ...]
    rounded: bool = False
    masking: Callable[[TokenizedSentence, TokenizedSentence, bool], tuple[Groups, Groups]] | None = None


PROTOCOLS: Registry[Protocol] = Registry(
    "CrowS-Pairs protocol",
    {
        "nangia": "plmfair.scoring.masking:NANGIA",
        "all_tokens": "plmfair.scoring.masking:ALL_TOKENS",
        "within_word_l2r": "plmfair.scoring.masking:WITHIN_WORD_L2R",
        "aul": "plmfair.scoring.aul:PROTOCOL",
        CAUSAL_PROTOCOL: "plmfair.scoring.sentence_log_likelihood:PROTOCOL",
    },
)


@dataclass(frozen=True)
class ClozeProtocol:
    """``predict(scorer, texts, k=, num_beams=)``: each gap's best whole words, best first, as
    (word, log-probability); ``score_answers(scorer, items)``: for each (text with the gap, answer),
    the answer's log-probability there and the number of tokens it takes."""

    name: str
    reference: str
    predict: Callable[..., list[list[tuple[str, float]]]]
    score_answers: Callable[..., list[tuple[float, int]]]
    primitives: tuple[str, ...]


CLOZE_PROTOCOLS: Registry[ClozeProtocol] = Registry(
    "gap protocol",
    {
        "fill_mask": "plmfair.scoring.fill_mask:PROTOCOL",
        "span_infilling": "plmfair.scoring.span_infilling:PROTOCOL",
        "left_context_rerank": "plmfair.scoring.left_context_rerank:PROTOCOL",
    },
)


def family_protocols(family: str) -> list[str]:
    """The protocols written for a family's primitives."""
    return [name for name, protocol in PROTOCOLS.items() if protocol.family == family]
