"""The gap protocol of causal LMs (GPT-2, Llama, ...; registered as ``left_context_rerank``).

A causal LM sees only the text left of the gap, so candidates are proposed there and judged on the
whole sentence: the family's beam search over word pieces, constrained to one word
(:meth:`~plmfair.scoring.causal.CausalLMScorer.gap_candidates`), proposes ``k`` distinct words
after the left context; each is re-ranked by the left-to-right log-likelihood of the whole
sentence with the word in the gap (:meth:`~plmfair.scoring.causal.CausalLMScorer.sequence_log_likelihoods`,
after the BOS token), which is the candidate's log-probability. An answer is scored by the same
whole-sentence log-likelihood. Torch-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from plmfair.scoring.protocols import ClozeProtocol

if TYPE_CHECKING:  # the scorer's type only: a protocol module is read before any model
    from plmfair.scoring.causal import CausalLMScorer

REFERENCE = "candidates after the left context, re-ranked by the sentence log-likelihood with the word in the gap"
PRIMITIVES = ("gap_candidates", "sequence_log_likelihoods")
# Gaps whose filled sentences are re-ranked together: enough for full batches across gaps, few enough
# that a large cloze set's filled sentences (k per gap) and their token ids are never all in memory.
RERANK_GAPS = 512


def predict(
    scorer: CausalLMScorer, texts: Sequence[str], *, k: int, num_beams: int | None
) -> list[list[tuple[str, float]]]:
    """The beam's words for each gap, best first by the log-likelihood of the filled sentence. The
    filled sentences of :data:`RERANK_GAPS` gaps at a time are scored together, in batches across
    gaps under the token budget."""
    words = [[word for word, _ in found] for found in scorer.gap_candidates(texts, k=k, num_beams=num_beams)]
    lls: list[float] = []
    for start in range(0, len(texts), RERANK_GAPS):
        filled = []
        for text, candidates in zip(
            texts[start : start + RERANK_GAPS], words[start : start + RERANK_GAPS], strict=True
        ):
            left, right = scorer.split_gap(text)
            filled += [left + w + right for w in candidates]
        lls += scorer.sequence_log_likelihoods(scorer.after_prefix(filled), desc=f"{scorer.name} re-ranking")
    out, start = [], 0
    for candidates in words:
        ranked = zip(candidates, lls[start : start + len(candidates)], strict=True)
        out.append(sorted(ranked, key=lambda x: -x[1])[:k])
        start += len(candidates)
    return out


def score_answers(scorer: CausalLMScorer, items: Sequence[tuple[str, str]]) -> list[tuple[float, int]]:
    """The log-likelihood of each sentence with its answer in the gap, and the tokens the answer takes."""
    seqs, n_pieces = [], []
    for text, answer in items:
        ids, span = scorer.filled(text, answer, add_special_tokens=False)
        n_pieces.append(len(span))
        seqs.append([scorer.prefix_id] + ids)
    return list(zip(scorer.sequence_log_likelihoods(seqs, desc=f"{scorer.name} answers"), n_pieces, strict=True))


PROTOCOL = ClozeProtocol("left_context_rerank", REFERENCE, predict, score_answers, PRIMITIVES)
