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

Every family encodes a sentence (``encode_sentence``) and cuts one that is too long (``truncate``);
:meth:`plmfair.scoring.base.Scorer.score_sentences` does the rest once for all of them (which pairs
fit, the protocol's scores, rounding, checks). A new protocol is a module with its ``score`` function
and one line in :data:`PROTOCOLS` (``crows_pairs.protocol`` is checked against it).

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

from collections.abc import Callable
from dataclasses import dataclass

from plmfair.scoring import (
    CAUSAL_PROTOCOL,
    aul,
    fill_mask,
    left_context_rerank,
    masking,
    sentence_log_likelihood,
    span_infilling,
)
from plmfair.scoring.masking import MASKING_RULES, Groups, PairScores, TokenizedSentence


@dataclass(frozen=True)
class Protocol:
    """``score(scorer, protocol, pairs, desc)`` gives each pair's two (score, units scored) from the
    family's primitives; ``masking``: a masking rule's groups (the masked-copies protocols);
    ``rounded``: scores rounded to 3 decimals, as Nangia et al.'s metric.py does."""

    name: str
    reference: str
    family: str
    score: Callable[..., PairScores]
    primitives: tuple[str, ...]
    rounded: bool = False
    masking: Callable[[TokenizedSentence, TokenizedSentence, bool], tuple[Groups, Groups]] | None = None


PROTOCOLS: dict[str, Protocol] = {
    **{r.name: Protocol(r.name, r.reference, "mlm", masking.score, masking.PRIMITIVES, r.rounded, masking=r.groups)
       for r in MASKING_RULES.values()},
    "aul": Protocol("aul", aul.REFERENCE, "mlm", aul.score, aul.PRIMITIVES),
    CAUSAL_PROTOCOL: Protocol(CAUSAL_PROTOCOL, sentence_log_likelihood.REFERENCE, "causal",
                              sentence_log_likelihood.score, sentence_log_likelihood.PRIMITIVES, rounded=True),
}


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


CLOZE_PROTOCOLS: dict[str, ClozeProtocol] = {
    name: ClozeProtocol(name, module.REFERENCE, module.predict, module.score_answers, module.PRIMITIVES)
    for name, module in (("fill_mask", fill_mask), ("span_infilling", span_infilling),
                         ("left_context_rerank", left_context_rerank))
}


def family_protocols(family: str) -> list[str]:
    """The protocols written for a family's primitives."""
    return [name for name, protocol in PROTOCOLS.items() if protocol.family == family]
