"""How much of its input a model can read: unknown pieces, and items it cannot tell apart.

A tokenizer turns every piece of text it has no entry for into its unknown token ([UNK], <unk>).
A model scored on a language its vocabulary does not cover (an English BERT on Chinese), or with
its tokenizer files missing (transformers then builds a tokenizer of a handful of entries), reads
most of its input as that one token: two sentences of a minimal pair become the same ids and get
equal scores, answers become indistinguishable, and the published numbers are artefacts.

Every scoring job counts, per language, as the model reads its input (:class:`Coverage`):

- ``pieces`` and ``unknown_pieces``: the tokens of the texts scored (special tokens left out) and
  those that are the unknown token;
- ``items``: minimal pairs (CrowS-Pairs) or distinct answers (cloze sets) looked at;
  ``identical_items``: pairs whose two sentences, or answers of one sentence, have the same ids
  (a pair is then skipped as identical, as a pair identical as text is); ``unknown_items``: answers
  made of unknown pieces only.

The counts go into the scoring output's metadata (``coverage``); the jobs that publish numbers
(:func:`plmfair.crows_pairs.summary.summarise_pairs`, :func:`plmfair.cloze.metrics.metrics_for_models`)
carry :func:`warning` beside them when a share passes ``coverage.max_unknown``, and stop with it
under ``coverage.strict`` (:func:`check`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields

from plmfair.errors import DataError

log = logging.getLogger(__name__)


@dataclass
class Coverage:
    """Counts of one scoring job in one language (see the module's docstring)."""

    pieces: int = 0
    unknown_pieces: int = 0
    items: int = 0
    identical_items: int = 0
    unknown_items: int = 0

    def read(self, ids: Iterable[int], unknown_id: int | None) -> tuple[int, int]:
        """Count the pieces of one text; returns (pieces, unknown pieces) of that text."""
        ids = list(ids)
        unknown = sum(1 for i in ids if i == unknown_id) if unknown_id is not None else 0
        self.pieces += len(ids)
        self.unknown_pieces += unknown
        return len(ids), unknown

    @property
    def unknown_share(self) -> float:
        """Unknown pieces over pieces (0 when nothing was read)."""
        return self.unknown_pieces / self.pieces if self.pieces else 0.0

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping | None) -> Coverage | None:
        """The counts a scoring output recorded (None when it recorded none: written before they were)."""
        if not values:
            return None
        return cls(**{f.name: int(values.get(f.name, 0)) for f in fields(cls)})


def unknown_id(tokenizer: object) -> int | None:
    """The id of the tokenizer's unknown token; None for a tokenizer that has none (byte-level BPE
    reads every text)."""
    value = getattr(tokenizer, "unk_token_id", None)
    return None if value is None else int(value)


def warning(coverage: Coverage | None, *, model: str, what: str, max_unknown: float, item_kind: str) -> str:
    """The warning that goes beside a model's numbers on ``what`` (a data set, a language) when it
    reads more than ``max_unknown`` of its pieces as unknown, or cannot tell that share of its
    ``item_kind`` apart; empty when it reads its input."""
    if coverage is None:
        return ""
    problems = []
    if coverage.unknown_share > max_unknown:
        problems.append(f"reads {100 * coverage.unknown_share:.1f}% of the pieces of {what} as unknown")
    if coverage.items:
        for count, how in (
            (coverage.identical_items, "identical as it reads them"),
            (coverage.unknown_items, "made of unknown pieces only"),
        ):
            if count / coverage.items > max_unknown:
                problems.append(f"{count} of {coverage.items} {item_kind} {how}")
    if not problems:
        return ""
    return f"{model} {'; '.join(problems)}: scores not meaningful"


def columns(coverage: Coverage | None, *, model: str, what: str, max_unknown: float, item_kind: str) -> dict:
    """The values of :data:`COVERAGE_COLUMNS` for a model's numbers on ``what`` (NaN and None when the
    scoring output recorded no counts)."""
    return {
        "unknown_share": float("nan") if coverage is None else coverage.unknown_share,
        "identical_items": None if coverage is None else coverage.identical_items,
        "coverage_warning": warning(coverage, model=model, what=what, max_unknown=max_unknown, item_kind=item_kind),
    }


def distinct(warnings: Iterable) -> list[str]:
    """The warnings of a column of ``coverage_warning`` values, each once, in order (empty and
    missing values left out): what a table, the run record and :func:`check` say."""
    return [w for w in dict.fromkeys(warnings) if isinstance(w, str) and w]


def check(warnings: Iterable[str], *, strict: bool, max_unknown: float) -> list[str]:
    """Log each warning; under ``strict`` stop with them instead (nothing is published). Returns the
    warnings that are not empty."""
    found = distinct(warnings)
    if found and strict:
        raise DataError(
            f"{'; '.join(found)} (more than coverage.max_unknown = {max_unknown:g}); the model cannot "
            f"read this text: leave it out of this study, or set coverage.strict: false to publish its "
            f"scores with this warning"
        )
    for w in found:
        log.warning("%s", w)
    return found


COVERAGE_COLUMNS = {
    "unknown_share": "share of the pieces the model read that are its unknown token ([UNK], <unk>)",
    "identical_items": "pairs whose sentences (CrowS-Pairs) or answers of one sentence (cloze) have the same token ids",
    "coverage_warning": "empty, or why these scores are not meaningful (coverage.max_unknown passed): see "
    "plmfair.scoring.coverage",
}
