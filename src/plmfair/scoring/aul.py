"""All Unmasked Likelihood (AUL; Kaneko & Bollegala, "Unmasking the Mask - Evaluating Social
Biases in Masked Language Models", AAAI 2022).

Nothing is masked: one forward pass per sentence, and every token but the special ones is
predicted from the whole sentence, itself included. A sentence's score is the mean
log-probability of its tokens,

    AUL(S) = 1/|S| sum_i log P(w_i | S),

so that sentences of different lengths compare (the pair's outcome is decided by which of the
two scores is higher, as under Nangia et al.'s protocol). It costs one forward pass per
sentence where pseudo-log-likelihoods cost one per token, and it does not depend on which
tokens the two sentences share. Registered as ``aul`` in :data:`plmfair.scoring.protocols.PROTOCOLS`;
the forward pass is :meth:`plmfair.scoring.mlm.MaskedLMScorer.unmasked_log_probs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from plmfair.scoring.protocols import PairScores, Protocol, TokenizedSentence, paired

if TYPE_CHECKING:  # the scorer's type only: a protocol module is read before any model
    from plmfair.scoring.mlm import MaskedLMScorer

REFERENCE = "Kaneko & Bollegala (2022), All Unmasked Likelihood"
PRIMITIVES = ("encode_sentences", "unmasked_log_probs")


def positions(sentence: TokenizedSentence) -> list[int]:
    """The positions AUL reads: every token of the sentence but the special ones ([CLS], [SEP], <s>)."""
    return sentence.content_positions()


def score(
    scorer: MaskedLMScorer,
    protocol: Protocol,
    pairs: Sequence[tuple[TokenizedSentence, TokenizedSentence, bool]],
    desc: str,
) -> PairScores:
    """AUL of each sentence: the mean of the unmasked log-probabilities of the positions it reads (the
    masked LM's one-pass primitive); 0 for a sentence with nothing to read."""
    sentences = [t for more, less, _ in pairs for t in (more, less)]
    read = [positions(t) for t in sentences]
    values = scorer.unmasked_log_probs([t.ids for t in sentences], read, desc=desc)
    return paired([sum(v) / len(v) if v else 0.0 for v in values], [len(r) for r in read])


PROTOCOL = Protocol("aul", REFERENCE, "mlm", score, PRIMITIVES)
