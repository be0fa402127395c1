"""CrowS-Pairs protocols, registered by name: how a model scores each sentence of a minimal pair.

A protocol is written once, above the primitives of the model family it applies to (``family``):

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
and one line in :data:`PROTOCOLS` (and, for masked LMs, one value in the schema's
``crows_pairs.protocol`` enum, which a test keeps equal to the masked-LM protocols here). Torch-free:
the configuration is checked against :data:`PROTOCOLS` before any model library is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from plmfair.scoring import CAUSAL_PROTOCOL, aul, masking, sentence_log_likelihood
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
    rounded: bool = False
    masking: Callable[[TokenizedSentence, TokenizedSentence, bool], tuple[Groups, Groups]] | None = None


PROTOCOLS: dict[str, Protocol] = {
    **{r.name: Protocol(r.name, r.reference, "mlm", masking.score, r.rounded, masking=r.groups)
       for r in MASKING_RULES.values()},
    "aul": Protocol("aul", aul.REFERENCE, "mlm", aul.score),
    CAUSAL_PROTOCOL: Protocol(CAUSAL_PROTOCOL, sentence_log_likelihood.REFERENCE, "causal",
                              sentence_log_likelihood.score, rounded=True),
}


def family_protocols(family: str) -> list[str]:
    """The protocols written for a family's primitives."""
    return [name for name, protocol in PROTOCOLS.items() if protocol.family == family]
