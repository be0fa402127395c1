"""Text normalisation shared by the scoring jobs, the metrics and the breakdowns.

Standard library only, so a scoring job (which matches answers to candidates) does not import
the statistics stack.

- :func:`base_normalise`: Unicode NFC, trimmed, lower-cased (how answers and candidates are
  compared, whatever the model);
- :func:`normalise`: that, then the model tokenizer's own normalisation
  (:func:`plmfair.scoring.tokenization.normaliser`), so that mBERT uncased's accent-less
  predictions match accented answers;
- :func:`normalise_whitespace`: runs of white space as one space, trimmed (how the bitext join
  matches pivot sentences).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

# The literal gap of a cloze sentence, in MozArt's files and in constructed sets.
MASK = "[MASK]"


def base_normalise(text: str) -> str:
    """NFC, trimmed, lower-cased."""
    return unicodedata.normalize("NFC", str(text)).strip().lower()


def normalise(text: str, tokenizer_norm: Callable[[str], str] | None = None) -> str:
    """:func:`base_normalise`, then the tokenizer's normalisation and :func:`base_normalise` again."""
    s = base_normalise(text)
    if tokenizer_norm is not None:
        s = base_normalise(tokenizer_norm(s))
    return s


def normalise_whitespace(sentence: str) -> str:
    """Runs of white space as one space, trimmed."""
    return " ".join(sentence.split())
