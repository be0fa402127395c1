"""The sentence log-likelihood of causal LMs, the CrowS-Pairs convention of lm-evaluation-harness's
``crows_pairs`` tasks (protocol ``sentence_log_likelihood``).

The sentence is tokenized without special tokens and read after the tokenizer's BOS token (its EOS
token when it has no BOS), :meth:`plmfair.scoring.causal.CausalLMScorer.encode_sentences`;

    log P(sentence) = sum over its tokens t_i of log P(t_i | BOS, t_1 .. t_{i-1}),

through the causal LM's left-to-right primitive
(:meth:`~plmfair.scoring.causal.CausalLMScorer.sequence_log_likelihoods`). Scores are rounded to 3
decimals and equal rounded scores are neutral, as under Nangia et al.'s protocol. Torch-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from plmfair.scoring import CAUSAL_PROTOCOL
from plmfair.scoring.protocols import PairScores, Protocol, TokenizedSentence, paired

if TYPE_CHECKING:  # the scorer's type only: a protocol module is read before any model
    from plmfair.scoring.causal import CausalLMScorer

REFERENCE = "lm-evaluation-harness crows_pairs tasks, sentence log-likelihood after BOS"
PRIMITIVES = ("encode_sentences", "sequence_log_likelihoods")


def score(
    scorer: CausalLMScorer,
    protocol: Protocol,
    pairs: Sequence[tuple[TokenizedSentence, TokenizedSentence, bool]],
    desc: str,
) -> PairScores:
    """Each sentence's log-likelihood and the number of tokens it predicts (all but the BOS)."""
    sentences = [t for more, less, _ in pairs for t in (more, less)]
    totals = scorer.sequence_log_likelihoods([t.ids for t in sentences], desc=desc)
    return paired(totals, [len(t.ids) - 1 for t in sentences])


PROTOCOL = Protocol(CAUSAL_PROTOCOL, REFERENCE, "causal", score, PRIMITIVES, rounded=True)
