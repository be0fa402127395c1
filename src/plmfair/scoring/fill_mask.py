"""MozArt's gap protocol for masked LMs (mBERT, XLM-R; registered as ``fill_mask``).

The gap becomes the mask token. Predictions: the ``k`` whole words the model finds most probable
at the mask, with their log-probabilities (the family's one-pass primitive
:meth:`~plmfair.scoring.mlm.MaskedLMScorer.gap_candidates`; a whole word is a vocabulary entry
that starts and ends a word, :func:`plmfair.scoring.pieces.whole_word_vocabulary`). An answer of
several tokens fills the gap with as many masks and is scored by within-word left-to-right
pseudo-log-likelihood (Kauf & Ivanova 2023): token j is read with tokens j.. of the answer masked,
through the masked copies primitive
(:meth:`~plmfair.scoring.mlm.MaskedLMScorer.masked_copies_log_probs`). Torch-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from plmfair.errors import DataError
from plmfair.scoring.protocols import ClozeProtocol

if TYPE_CHECKING:  # the scorer's type only: a protocol module is read before any model
    from plmfair.scoring.mlm import MaskedLMScorer

REFERENCE = "MozArt (Cabello Piqueras & Søgaard 2022): top-k whole words at the mask; answers by within-word l2r PLL"
PRIMITIVES = ("gap_candidates", "masked_copies", "masked_copies_log_probs")


def predict(
    scorer: MaskedLMScorer, texts: Sequence[str], *, k: int, num_beams: int | None
) -> list[list[tuple[str, float]]]:
    """The top-k whole words at each text's mask (no search: ``num_beams`` does not apply)."""
    return scorer.gap_candidates(texts, k=k)


def score_answers(scorer: MaskedLMScorer, items: Sequence[tuple[str, str]]) -> list[tuple[float, int]]:
    """Within-word left-to-right PLL of each answer in its gap, and the tokens it takes."""
    copies, n_pieces = [], []
    for text, answer in items:
        ids, span = scorer.filled(text, answer)
        if not span:
            raise DataError(f"model {scorer.name!r}: answer {answer!r} disappeared in tokenization of {text!r}")
        n_pieces.append(len(span))
        # one copy per answer token j: tokens j.. masked, token j read
        copies.append(scorer.masked_copies(ids, [span[j:] for j in range(len(span))]))
    totals = scorer.masked_copies_log_probs(copies, desc=f"{scorer.name} answers")
    return list(zip(totals, n_pieces, strict=True))


PROTOCOL = ClozeProtocol("fill_mask", REFERENCE, predict, score_answers, PRIMITIVES)
