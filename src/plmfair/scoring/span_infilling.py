"""MozArt's gap protocol for span-infilling seq2seq models of the T5 family (mT5; registered as
``span_infilling``).

The gap becomes the first sentinel (``<extra_id_0>``), the models' own pretraining objective, so
the protocol is the family's two primitives read as they are: predictions are the ``k`` best spans
of exactly one word that the decoder writes after that sentinel, found by constrained beam search
(:meth:`~plmfair.scoring.seq2seq.Seq2SeqScorer.gap_candidates`, :mod:`plmfair.scoring.beam`), each
scored log P(<extra_id_0> pieces <end>); an answer is scored the same way
(:meth:`~plmfair.scoring.seq2seq.Seq2SeqScorer.span_log_likelihoods`). Torch-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from plmfair.scoring.protocols import ClozeProtocol

if TYPE_CHECKING:  # the scorer's type only: a protocol module is read before any model
    from plmfair.scoring.seq2seq import Seq2SeqScorer

REFERENCE = "MozArt (Cabello Piqueras & Søgaard 2022): mT5 single-word constrained beam search at the sentinel"
PRIMITIVES = ("gap_candidates", "span_log_likelihoods")


def predict(
    scorer: Seq2SeqScorer, texts: Sequence[str], *, k: int, num_beams: int | None
) -> list[list[tuple[str, float]]]:
    """The k best one-word spans at each text's sentinel, best first."""
    return scorer.gap_candidates(texts, k=k, num_beams=num_beams)


def score_answers(scorer: Seq2SeqScorer, items: Sequence[tuple[str, str]]) -> list[tuple[float, int]]:
    """log P(<extra_id_0> answer <end>) of each answer, and the tokens it takes."""
    return scorer.span_log_likelihoods(items)


PROTOCOL = ClozeProtocol("span_infilling", REFERENCE, predict, score_answers, PRIMITIVES)
