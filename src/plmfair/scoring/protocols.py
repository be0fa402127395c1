"""CrowS-Pairs protocols of masked language models, registered by name (``crows_pairs.protocol``).

A protocol says how a masked LM scores each sentence of a minimal pair, through one of the two
primitives of :class:`plmfair.scoring.mlm.MaskedLMScorer`:

- *masked copies* (:meth:`~plmfair.scoring.mlm.MaskedLMScorer.masked_copies_log_probs`): one copy
  per masking group, the log-probability of the group's first token read in it, summed over the
  groups; the groups are a masking rule's (:mod:`plmfair.scoring.masking`: ``nangia``,
  ``all_tokens``, ``within_word_l2r``);
- *one unmasked pass* (:meth:`~plmfair.scoring.mlm.MaskedLMScorer.unmasked_log_probs`): the
  log-probability of chosen positions' own tokens with nothing masked, summed or averaged
  (``aul``, :mod:`plmfair.scoring.aul`).

A new protocol is a module that says which positions it reads and how, and one line in
:data:`PROTOCOLS`. Torch-free: the configuration is checked against :data:`PROTOCOLS` before any
model library is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from plmfair.scoring import aul
from plmfair.scoring.masking import MASKING_RULES, Groups, TokenizedSentence


@dataclass(frozen=True)
class Protocol:
    """How a masked LM scores the sentences of a pair: through masked copies (``masking``: the
    groups of a pair's two sentences) or one unmasked pass (``positions``: the positions of a
    sentence read from it); the sentence score is the sum over its units, or their mean
    (``mean``); ``rounded``: scores rounded to 3 decimals, as Nangia et al.'s metric.py does."""

    name: str
    reference: str
    rounded: bool = False
    masking: Callable[[TokenizedSentence, TokenizedSentence, bool], tuple[Groups, Groups]] | None = None
    positions: Callable[[TokenizedSentence], list[int]] | None = None
    mean: bool = False


PROTOCOLS: dict[str, Protocol] = {
    **{r.name: Protocol(r.name, r.reference, r.rounded, masking=r.groups) for r in MASKING_RULES.values()},
    "aul": Protocol("aul", aul.REFERENCE, positions=aul.positions, mean=True),
}
