"""The contract every model family implements, documented once.

A :class:`Scorer` wraps one loaded model and its tokenizer (see
:func:`plmfair.scoring.loader.load`) and answers the three questions the studies ask:

- :meth:`Scorer.score_sentences` (CrowS-Pairs): the score of each sentence of a minimal
  pair under a protocol (:mod:`plmfair.scoring.protocols`, written above the family's primitives);
- :meth:`Scorer.predict_gap` (MozArt and constructed cloze sets): the top-k whole-word
  candidates for the gap ``[MASK]`` of a sentence, with their log-probabilities;
- :meth:`Scorer.score_answers` (the same studies): the log-probability of given answers
  in the gap, and how many tokens each takes.

Texts reach a scorer as the data has them (with the literal gap ``[MASK]`` for cloze
sentences); a scorer lower-cases them first when its model is uncased. A family implements its
primitives (masked copies, one unmasked pass and the whole words at a mask for masked LMs; the
left-to-right likelihood and the words proposed after a left context for causal LMs; the one-word
spans at a sentinel and their likelihoods for seq2seq models; ``encode_sentences``/``truncate`` for
CrowS-Pairs), and the protocols of :mod:`plmfair.scoring.protocols` are written above them once.
Batching is capped by ``token_budget`` (tokens per forward pass) so that a long input cannot run out
of memory.
"""

from __future__ import annotations

import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from plmfair.errors import DataError, ModelError
from plmfair.scoring import FAMILIES
from plmfair.scoring.protocols import (
    CLOZE_PROTOCOLS,
    PROTOCOLS,
    ClozeProtocol,
    Protocol,
    TokenizedSentence,
    family_protocols,
)
from plmfair.scoring.tokenization import filled_span, normaliser
from plmfair.text import MASK

if TYPE_CHECKING:  # types only: the plan and the DAG read this module without torch
    import numpy as np
    import torch
    from tqdm.auto import tqdm
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

log = logging.getLogger(__name__)

TOO_LONG = ("skip", "truncate")


@dataclass(frozen=True)
class MinimalPair:
    """A CrowS-Pairs pair: the more and the less stereotyping sentence, and whether the more
    stereotyping one is stereotypical (``stereo``) or anti-stereotypical."""

    more: str
    less: str
    stereo: bool


@dataclass(frozen=True)
class PairScore:
    """The scores of the two sentences of a minimal pair.

    ``n_more``/``n_less``: units scored per sentence (masked copies for masked LMs,
    predicted tokens for causal LMs). ``status``: ``ok``, ``truncated`` (scored after
    truncation to the model's maximum length) or ``skipped_too_long`` (scores None).
    """

    more: float | None
    less: float | None
    n_more: int
    n_less: int
    status: str


class Scorer(ABC):
    """One loaded model of one family, answering the studies' questions."""

    family: ClassVar[str]
    # Gap beam searches (seq2seq, causal) keep a key-value cache that follows the beams; False reruns
    # every beam's whole sequence at each step, the reference tests and benchmarks compare it with.
    beam_cache: bool = True

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        *,
        name: str,
        uncased: bool = False,
        token_budget: int = 0,
        progress: bool = False,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.uncased = uncased
        # tokens per forward pass; 0: the device's default, the one place it is decided
        self.token_budget = token_budget or default_token_budget(input_device(model).type, self.family)
        self.progress = progress

    def prepare(self, text: str) -> str:
        """The text as the model reads it: lower-cased for uncased models (as Nangia et al. do)."""
        return text.lower() if self.uncased else text

    def read_ids(self, text: str) -> list[int]:
        """The token ids of a text as the model reads it (prepared, no special tokens): what
        :mod:`plmfair.scoring.coverage` counts."""
        return list(self.tokenizer(self.prepare(text), add_special_tokens=False)["input_ids"])

    def split_gap(self, text: str) -> tuple[str, str]:
        """The text left and right of the gap, prepared for the model."""
        if text.count(MASK) != 1:
            raise DataError(f"model {self.name!r}: expected exactly one {MASK} in {text!r}")
        left, right = text.split(MASK)
        return self.prepare(left), self.prepare(right)

    def filled(self, text: str, word: str, *, add_special_tokens: bool = True) -> tuple[list[int], list[int]]:
        """The ids of the text with ``word`` in its gap, and the positions of the tokens that cover
        the word (empty if tokenization lost it); for Rust-backed and Python tokenizers alike
        (:func:`plmfair.scoring.tokenization.filled_span`)."""
        left, right = self.split_gap(text)
        return filled_span(self.tokenizer, left, self.prepare(word), right, add_special_tokens=add_special_tokens)

    def sentence_length(self, text: str) -> int:
        """Tokens of a cloze sentence in the model's tokenizer: the text left and right of the gap,
        no special tokens, the gap counted as one token (MozArt's Table 1)."""
        left, right = self.split_gap(text)
        return len(self.tokenizer.tokenize(left.strip())) + 1 + len(self.tokenizer.tokenize(right.strip()))

    def input_length(self, text: str, answer: str | None = None) -> int:
        """Tokens the model takes for a cloze item: the sentence with its gap and two special tokens,
        or, with ``answer``, the sentence with the answer in the gap (what :meth:`max_length` bounds)."""
        if answer is None:
            return self.sentence_length(text) + 2
        return len(self.filled(text, answer)[0])

    def normaliser(self) -> Callable[[str], str]:
        """The tokenizer's own normalisation, for matching answers to candidates
        (:func:`plmfair.scoring.tokenization.normaliser`)."""
        return normaliser(self.tokenizer)

    def max_length(self) -> int:
        """The longest input the model accepts (:func:`max_input_length`)."""
        return max_input_length(self.model, self.tokenizer)

    def word_vectors(self, items: Sequence[tuple[str, str]]) -> np.ndarray:
        """For each ``(text with the gap, word)``: the model's last-layer vector of the word put in
        the gap, averaged over the word's tokens (float32 array ``[len(items), hidden]``); the vectors
        the t-SNE maps of MozArt's appendix B project (:meth:`last_hidden` gives the layer)."""
        # torch and numpy wait until a model is scored: the plan and the DAG read this module
        import numpy as np
        import torch

        seqs, spans = [], []
        for text, word in items:
            ids, span = self.filled(text, word)
            if not span:
                raise DataError(f"model {self.name!r}: word {word!r} disappeared in tokenization of {text!r}")
            seqs.append(ids)
            spans.append(span)
        device = input_device(self.model)
        out: list = [None] * len(items)
        with torch.inference_mode():
            for idx in length_batches([len(s) for s in seqs], self.token_budget):
                batch, att = right_padded(seqs, idx, pad_id=padding_id(self.tokenizer), device=device)
                hidden = self.last_hidden(batch, att).float()
                # one copy to the host per batch, not one per word
                means = torch.stack([hidden[row, spans[i]].mean(dim=0) for row, i in enumerate(idx)]).cpu().numpy()
                for row, i in enumerate(idx):
                    out[i] = means[row]
        return np.stack(out) if out else np.zeros((0, 0), dtype="float32")

    @abstractmethod
    def last_hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """The last layer's hidden states ``[batch, length, hidden]`` of a batch of token ids (the
        encoder's for masked and seq2seq models, the decoder stack's for causal ones)."""

    # The studies' three questions. Each checks what its protocol returns: a NaN or infinite
    # log-probability (broken weights, an overflow in half precision) stops the job rather than
    # becoming a result.

    def score_sentences(
        self, pairs: Sequence[MinimalPair], *, protocol: str, too_long: str = "skip", unknown_tokens: str = "scored"
    ) -> list[PairScore]:
        """Score both sentences of every minimal pair under ``protocol``, one of the family's
        (:data:`plmfair.scoring.protocols.PROTOCOLS`).

        A protocol may depend on both sentences and the direction (Nangia et al.'s masking rule
        does). A pair with a sentence longer than the model accepts is skipped
        (``too_long='skip'``) or truncated (``'truncate'``). A piece the tokenizer does not know is scored
        as the published protocols score it (``unknown_tokens='scored'``) or left out of what a masked LM's
        protocols read (``'left_out'``; :data:`UNKNOWN_TOKENS`). Scores are at full precision (the
        3-decimal rounding of Nangia et al.'s score is the study's, :mod:`plmfair.crows_pairs.scoring_job`).
        """
        rule = self.protocol(protocol)
        check_too_long(too_long)
        if unknown_tokens not in UNKNOWN_TOKENS:
            raise ValueError(f"unknown_tokens must be one of {UNKNOWN_TOKENS}, got {unknown_tokens!r}")
        max_len = self.max_length()
        scores: list[PairScore | None] = [None] * len(pairs)
        work: list[tuple[int, str, TokenizedSentence, TokenizedSentence]] = []
        encoded = self.encode_sentences(
            [text for pair in pairs for text in (pair.more, pair.less)], unknown_tokens=unknown_tokens
        )
        for i in range(len(pairs)):
            more, less = encoded[2 * i], encoded[2 * i + 1]
            status = "ok"
            if max(len(more.ids), len(less.ids)) > max_len:
                if too_long == "skip":
                    scores[i] = PairScore(None, None, 0, 0, "skipped_too_long")
                    continue
                more, less, status = self.truncate(more, max_len), self.truncate(less, max_len), "truncated"
            work.append((i, status, more, less))
        values = rule.score(
            self, rule, [(more, less, pairs[i].stereo) for i, _, more, less in work], f"{self.name} ({rule.name})"
        )
        for (i, status, _, _), ((s1, n1), (s2, n2)) in zip(work, values, strict=True):
            scores[i] = PairScore(s1, s2, n1, n2, status)
        for pair, score in zip(pairs, scores, strict=True):
            assert score is not None  # every pair is skipped or scored above
            for sentence, value in ((pair.more, score.more), (pair.less, score.less)):
                self._require_finite(value, sentence)
        return scores  # type: ignore[return-value]

    def protocol(self, name: str) -> Protocol:
        """The registered protocol ``name``, if it is written for this model's family."""
        if name not in PROTOCOLS:
            raise ModelError(f"model {self.name!r}: unknown CrowS-Pairs protocol {name!r}; known: {sorted(PROTOCOLS)}")
        own = family_protocols(self.family)
        if not own:
            raise ModelError(
                f"model {self.name!r} is a {self.family} model; no CrowS-Pairs protocol is defined for "
                f"its family (use a masked or causal LM)"
            )
        if PROTOCOLS[name].family != self.family:
            raise ModelError(
                f"model {self.name!r} is a {self.family} model: its CrowS-Pairs protocols are {own}, not {name!r}"
            )
        return PROTOCOLS[name]

    def cloze_protocol(self) -> ClozeProtocol:
        """The gap protocol this model's family is scored with (``Family.cloze_protocol``)."""
        return CLOZE_PROTOCOLS[FAMILIES[self.family].cloze_protocol]

    def encode_sentences(self, texts: Sequence[str], *, unknown_tokens: str = "scored") -> list[TokenizedSentence]:
        """CrowS-Pairs sentences as the family's protocols read them: token ids (with the special
        tokens the family adds) and the word of each; all of them in one call of the tokenizer; an
        unknown piece read (``unknown_tokens='scored'``) or not (:meth:`Scorer.score_sentences`)."""
        raise ModelError(f"model {self.name!r}: its family has no CrowS-Pairs encoding")

    def truncate(self, sentence: TokenizedSentence, max_len: int) -> TokenizedSentence:
        """The first ``max_len`` tokens of an encoded sentence (a family whose encoding ends with a
        special token keeps it)."""
        return TokenizedSentence(sentence.ids[:max_len], sentence.word_ids[:max_len], sentence.special_ids)

    def predict_gap(
        self, texts: Sequence[str], *, k: int, num_beams: int | None = None
    ) -> list[list[tuple[str, float]]]:
        """The ``k`` best whole-word candidates for the gap of each text, best first:
        ``(surface form, log-probability)``. ``num_beams`` applies to families that search."""
        for text in texts:
            self._require_fits(self.input_length(text), text)
        candidates = self.cloze_protocol().predict(self, texts, k=k, num_beams=num_beams)
        for text, best in zip(texts, candidates, strict=True):
            if k > 0 and not best:  # a search drops the beams whose scores are NaN
                raise ModelError(
                    f"model {self.name!r} gives no candidate for {text[:120]!r}: its log-probabilities "
                    f"are not finite (broken weights or precision) or no piece of its vocabulary starts "
                    f"a word; no prediction is written"
                )
            for word, value in best:
                self._require_finite(value, f"{text} (candidate {word!r})")
        return candidates

    def score_answers(self, items: Sequence[tuple[str, str]]) -> list[tuple[float, int]]:
        """For each ``(text with the gap, answer)``: the log-probability of the answer in the
        gap and the number of tokens the answer takes."""
        for text, answer in items:
            self._require_fits(self.input_length(text, answer), f"{text} (answer {answer[:60]!r})")
        scores = self.cloze_protocol().score_answers(self, items)
        for (text, answer), (value, _) in zip(items, scores, strict=True):
            self._require_finite(value, f"{text} (answer {answer!r})")
        return scores

    def _require_fits(self, n_tokens: int, item: str) -> None:
        limit = self.max_length()
        if n_tokens > limit:
            raise DataError(
                f"model {self.name!r}: {item[:120]!r} takes {n_tokens} tokens, more than the {limit} the "
                f"model accepts (its position embeddings and tokenizer); shorten or remove that sentence "
                f"or answer in the data"
            )

    def _require_finite(self, value: float | None, item: str) -> None:
        if value is not None and not math.isfinite(value):
            raise ModelError(
                f"model {self.name!r} gives a non-finite log-probability ({value}) for {item[:120]!r}: "
                f"its weights or its precision are broken (NaN or overflow); no score is written"
            )


def padding_id(tokenizer: PreTrainedTokenizerBase) -> int:
    """The id that pads a batch for models scored without a padding convention of their own: the
    tokenizer's pad token, else its end-of-sequence token (GPT-2 has no pad), else 0. Padded
    positions are masked, so the choice only has to be a valid id."""
    return next((t for t in (tokenizer.pad_token_id, tokenizer.eos_token_id) if t is not None), 0)


def default_token_budget(device_type: str, family: str) -> int:
    """Tokens per forward pass when the job does not set ``resources: token_budget``.

    Measured on an H100 with base-size models over the 1,677 French CrowS-Pairs (docs/performance.md):
    16,384 was 12% faster than 8,192, 32,768 no faster again and 65,536 slower; the scores were
    the same at every budget. On a CPU, masked LMs: larger batches only cost memory; causal LMs,
    whose every position runs the whole stack: 2,048 tokens (activations that stay in the caches)
    took 0.54x the time of 8,192 (117 s against 217 s for 200 CrowS-Pairs pairs with a
    Qwen2.5-0.5B-shaped model, benchmarks/bench_causal.py)."""
    if device_type == "cuda":
        return 16384
    return 2048 if family == "causal" else 8192


def input_device(model: PreTrainedModel) -> torch.device:
    """Where a batch of token ids goes: the device of the input embeddings. For a model spread
    over devices (``device_map``) that is its first shard; weights offloaded to disk compute on
    the CPU."""
    # torch is heavy: only the jobs that load a model import it
    import torch

    device = next(model.get_input_embeddings().parameters()).device
    return torch.device("cpu") if device.type == "meta" else device


def max_input_length(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> int:
    """The longest input the model accepts (position embeddings), capped by the tokenizer's limit."""
    cfg = model.config
    limits = []
    for attr in ("max_position_embeddings", "n_positions"):
        v = getattr(cfg, attr, None)
        if isinstance(v, int) and v > 0:
            # RoBERTa-style models reserve padding_idx + 1 positions.
            offset = (cfg.pad_token_id + 1) if cfg.model_type in ("roberta", "xlm-roberta", "camembert") else 0
            limits.append(v - offset)
            break
    tok_limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_limit, int) and 0 < tok_limit < 1_000_000:
        limits.append(tok_limit)
    return min(limits) if limits else 512


def length_batches(lengths: Sequence[int], token_budget: int, *, max_padding: float | None = None) -> list[list[int]]:
    """Indices grouped into batches of similar length whose padded size stays within ``token_budget``.

    Indices are sorted by length (longest first, stable), so padding is small; a single
    sequence longer than the budget gets a batch of its own. With ``max_padding``, a sequence
    that would be padded by more than that share of the batch's width starts a new batch (for
    models whose every position costs a full pass, where padding is wasted arithmetic).
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    width = 0
    for i in order:
        new_width = max(width, lengths[i])
        too_short = max_padding is not None and lengths[i] < width * (1 - max_padding)
        if current and (new_width * (len(current) + 1) > token_budget or too_short):
            batches.append(current)
            current, new_width = [], lengths[i]
        current.append(i)
        width = new_width
    if current:
        batches.append(current)
    return batches


def to_device(values: object, device: torch.device | str, dtype: torch.dtype | None = None) -> torch.Tensor:
    """``values`` (a tensor or nested lists) as a tensor on ``device``. On CUDA the host copy is
    page-locked and the transfer asynchronous, so the host can prepare the next batch while the
    GPU still runs this one."""
    # torch is heavy: only the jobs that load a model import it
    import torch

    host = torch.as_tensor(values, dtype=dtype)
    if torch.device(device).type != "cuda":
        return host.to(device)
    return host.pin_memory().to(device, non_blocking=True)


def right_padded(
    sequences: Sequence[Sequence[int]], idx: Sequence[int], *, pad_id: int, device: torch.device | str
) -> tuple[torch.Tensor, torch.Tensor]:
    """The sequences ``idx`` as one right-padded batch: (input ids, attention mask) on ``device``."""
    # torch is heavy: only the jobs that load a model import it
    import torch

    lengths = [len(sequences[i]) for i in idx]
    width = max(lengths)
    # one conversion of the padded rows: a tensor per row costs more than the forward pass on a GPU
    ids = [list(sequences[i]) + [pad_id] * (width - n) for i, n in zip(idx, lengths, strict=True)]
    att = (torch.arange(width)[None, :] < torch.as_tensor(lengths)[:, None]).long()
    return to_device(ids, device, torch.long), to_device(att, device)


def per_sequence(
    chunks: Sequence[torch.Tensor], batches: Sequence[Sequence[int]], counts: Sequence[int]
) -> list[list[float]]:
    """Values queued on the device batch by batch (``chunks``: tensors holding, in order, the values of
    each batch's sequences in the batch's order), back on the host in one copy and split per sequence:
    ``counts[i]`` values for sequence ``i``. One copy at the end, so that the host queues every batch
    instead of waiting for the GPU after each to read its values."""
    # torch is heavy: only the jobs that load a model import it
    import torch

    flat = torch.cat(list(chunks)).tolist() if chunks else []
    out: list[list[float]] = [[] for _ in counts]
    start = 0
    for i in (i for idx in batches for i in idx):
        out[i] = flat[start : start + counts[i]]
        start += counts[i]
    return out


# what a masked LM's protocols do with a piece the tokenizer does not know ([UNK], <unk>): read it as every
# other token, as the published definitions and their reference code do (Salazar et al.'s PLL, Kauf & Ivanova's
# word-l2r, Kaneko & Bollegala's AUL, Nangia et al.'s metric.py), or leave it out of what they read
UNKNOWN_TOKENS = ("scored", "left_out")


def check_too_long(too_long: str) -> None:
    """Refuse a too-long rule other than :data:`TOO_LONG`'s."""
    if too_long not in TOO_LONG:
        raise ValueError(f"too_long must be one of {TOO_LONG}, got {too_long!r}")


def progress_bar(enabled: bool, *, total: int, desc: str, unit: str) -> tqdm | None:
    """A tqdm bar when ``enabled``, else None."""
    if not enabled:
        return None
    # only when a progress bar is shown
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, mininterval=2.0)
