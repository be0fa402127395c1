"""What the scorers need from a tokenizer, for Rust-backed and Python tokenizers alike.

Most checkpoints load with a tokenizer backed by the ``tokenizers`` library (``is_fast``),
which gives each token its word (``word_ids()``) and its characters (offset mappings).
Some real ones have no such backend: FlauBERT's ``FlaubertTokenizer`` is Moses plus
end-of-word BPE in Python (``vocab.json`` + ``merges.txt``), and a user's own model may
ship any ``PreTrainedTokenizer``. Everything here works on both kinds, so that every
study scores either:

- :func:`word_start_rule` reads how the vocabulary marks words (``##``, ``▁``, ``Ġ``, ``</w>``);
- :func:`encode_with_words`: the ids of texts as ``tokenizer(text)`` gives them, and the
  word of each token (``word_ids()``, or the vocabulary's word markers on a Python tokenizer);
- :func:`filled_span`: the ids of a text with a word put in its gap and the positions of the
  word's tokens (offset mappings, or the tokens the text before the word and the text up to
  its end share with the whole, on a Python tokenizer);
- :func:`normaliser`: how the tokenizer normalises text, to match answers with candidates.

A Python tokenizer's ids are always the tokenizer's own for the whole text (never rebuilt
word by word), so that Nangia et al.'s protocol scores exactly what ``metric.py`` does.

:func:`check_tokenizer_packages` names, before any file is read, the optional package a
model folder's tokenizer needs (``sentencepiece`` and ``protobuf`` to read a bare
SentencePiece ``.model`` file, ``sacremoses`` for FlauBERT and XLM), with the pip command.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from plmfair.errors import ModelError

if TYPE_CHECKING:  # the tokenizer's type only: the plan reads this module without transformers
    from transformers import PreTrainedTokenizerBase

# Word-boundary markers of the four vocabulary kinds (see word_start_rule).
MARKERS = {"wordpiece": "##", "metaspace": "▁", "bytelevel": "Ġ", "suffix": "</w>"}
# Files that hold a SentencePiece model, which transformers converts with sentencepiece and protobuf.
SENTENCEPIECE_SUFFIX = ".model"
# Python tokenizers that tokenize with Moses (sacremoses) before their BPE.
MOSES_TOKENIZERS = ("FlaubertTokenizer", "XLMTokenizer")
# Import name -> PyPI name of the optional packages a tokenizer may need.
PACKAGES = {"sentencepiece": "sentencepiece", "google.protobuf": "protobuf", "sacremoses": "sacremoses"}


def is_fast(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Whether the tokenizer is backed by the ``tokenizers`` library (word ids and offsets)."""
    return bool(getattr(tokenizer, "is_fast", False)) and getattr(tokenizer, "backend_tokenizer", None) is not None


def word_start_rule(tokenizer: PreTrainedTokenizerBase) -> str:
    """How the tokenizer marks words: ``wordpiece`` (continuations start with ``##``),
    ``metaspace`` (word starts carry ``▁``: SentencePiece, XLM-R, mT5), ``bytelevel`` (word
    starts carry ``Ġ``: RoBERTa, GPT-2), ``suffix`` (word ends carry ``</w>``: FlauBERT).

    A Rust-backed WordPiece model says so itself; otherwise the marker that most vocabulary
    entries carry decides."""
    if is_fast(tokenizer) and type(tokenizer.backend_tokenizer.model).__name__ == "WordPiece":
        return "wordpiece"
    vocab = tokenizer.get_vocab()
    counts = {
        rule: sum(1 for t in vocab if (t.endswith(m) if rule == "suffix" else t.startswith(m)))
        for rule, m in MARKERS.items()
        if rule != "wordpiece" or not is_fast(tokenizer)
    }
    best = max(counts, key=lambda rule: counts[rule])
    if counts[best] == 0:
        kind = type(tokenizer.backend_tokenizer.model).__name__ if is_fast(tokenizer) else type(tokenizer).__name__
        raise ModelError(f"cannot tell word boundaries of a {kind} tokenizer (no ##, ▁, Ġ or </w> markers)")
    return best


def marker_word_ids(tokens: Sequence[str], special: Sequence[bool], rule: str) -> list[int | None]:
    """The word index of each token from the vocabulary's word markers (None for special tokens):
    a ``##`` token continues its word, a ``▁``/``Ġ`` token starts one, a token after a ``</w>``
    token starts one."""
    out: list[int | None] = []
    word = -1
    previous_ended = True
    for token, is_special in zip(tokens, special, strict=True):
        if is_special:
            out.append(None)
            previous_ended = True
            continue
        if rule == "wordpiece":
            starts = not token.startswith("##") or word < 0
        elif rule == "suffix":
            starts = previous_ended
            previous_ended = token.endswith("</w>")
        else:
            starts = token.startswith(MARKERS[rule]) or word < 0
        if starts:
            word += 1
        out.append(word)
    return out


def encode_with_words(
    tokenizer: PreTrainedTokenizerBase, texts: Sequence[str]
) -> list[tuple[list[int], list[int | None]]]:
    """The ids of each text with special tokens, as ``tokenizer(text)`` gives them, and each token's
    word index (None for special tokens). One call of the tokenizer for all the texts (a Rust-backed
    tokenizer encodes them in parallel) and, on a Python tokenizer, one scan of its whole vocabulary
    for its word markers (:func:`word_start_rule`), not one a sentence (docs/performance.md)."""
    if not texts:
        return []
    enc = tokenizer(list(texts), add_special_tokens=True)
    ids = [list(x) for x in enc["input_ids"]]
    if is_fast(tokenizer):
        return [(x, list(enc.word_ids(i))) for i, x in enumerate(ids)]
    special, rule = set(tokenizer.all_special_ids), word_start_rule(tokenizer)
    return [(x, marker_word_ids(tokenizer.convert_ids_to_tokens(x), [i in special for i in x], rule)) for x in ids]


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def filled_span(
    tokenizer: PreTrainedTokenizerBase, left: str, word: str, right: str, *, add_special_tokens: bool = True
) -> tuple[list[int], list[int]]:
    """The ids of ``left + word + right`` and the positions of the tokens that cover ``word``
    (empty if tokenization lost it).

    Rust-backed tokenizers: the tokens whose characters overlap the word's. Python tokenizers,
    which have no character offsets: the tokens between those that the text before the word
    shares with the whole and those that the text up to the word's end shares with it (the
    same tokens wherever the word is separated from its context by white space or punctuation)."""
    text = left + word + right
    if is_fast(tokenizer):
        enc = tokenizer(text, return_offsets_mapping=True, add_special_tokens=add_special_tokens)
        start, end = len(left), len(left) + len(word)
        span = [j for j, (a, b) in enumerate(enc["offset_mapping"]) if b > a and a < end and b > start]
        return list(enc["input_ids"]), span
    ids = list(tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"])
    body = list(tokenizer(text, add_special_tokens=False)["input_ids"])
    # a Python tokenizer adds its special tokens around the text's own tokens
    offset = next((k for k in range(len(ids) - len(body) + 1) if ids[k : k + len(body)] == body), None)
    if offset is None:
        raise ModelError(f"{type(tokenizer).__name__}: the tokens of {text!r} change when special tokens are added")
    before = list(tokenizer(left, add_special_tokens=False)["input_ids"]) if left.strip() else []
    upto = list(tokenizer(left + word, add_special_tokens=False)["input_ids"])
    start, end = _common_prefix(body, before), _common_prefix(body, upto)
    if end <= start:  # the word's last token reads differently with the right context
        end = min(start + max(1, len(upto) - len(before)), len(body))
    return ids, [offset + j for j in range(start, end)]


def normaliser(tokenizer: PreTrainedTokenizerBase) -> Callable[[str], str]:
    """The tokenizer's own normalisation, for matching answers with candidates: a Rust-backed
    tokenizer's normalizer (identity when it has none); for a Python tokenizer, the text as its
    tokens spell it again (its lower-casing, accent stripping and punctuation normalisation)."""
    if is_fast(tokenizer):
        norm = getattr(tokenizer.backend_tokenizer, "normalizer", None)
        return (lambda s: s) if norm is None else norm.normalize_str

    def respelled(text: str) -> str:
        return tokenizer.convert_tokens_to_string(tokenizer.tokenize(text)) if text.strip() else text

    return respelled


def _tokenizer_class(folder: Path) -> str | None:
    for name in ("tokenizer_config.json", "config.json"):
        path = folder / name
        if path.is_file():
            try:
                value = json.loads(path.read_text(encoding="utf-8")).get("tokenizer_class")
            except (OSError, ValueError):
                continue
            if value:
                return str(value)
    return None


def _model_type(folder: Path) -> str | None:
    try:
        return json.loads((folder / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError):
        return None


def tokenizer_packages(folder: str | Path) -> list[str]:
    """The optional packages (import names) the tokenizer files of a local model folder need:
    ``sentencepiece`` and ``google.protobuf`` for a SentencePiece ``.model`` file without a
    ``tokenizer.json`` (transformers converts it), ``sacremoses`` for a Moses tokenizer
    (FlauBERT, XLM)."""
    folder = Path(folder)
    names = {p.name for p in folder.iterdir() if p.is_file()}
    needs = []
    if "tokenizer.json" not in names and any(n.endswith(SENTENCEPIECE_SUFFIX) for n in names):
        needs += ["sentencepiece", "google.protobuf"]
    cls = _tokenizer_class(folder)
    if (cls and cls.removesuffix("Fast") in MOSES_TOKENIZERS) or _model_type(folder) in ("flaubert", "xlm"):
        needs.append("sacremoses")
    return needs


def missing_packages(modules: Sequence[str]) -> list[str]:
    """The PyPI names of those of ``modules`` that cannot be imported."""
    missing = []
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(PACKAGES.get(module, module))
    return missing


def install_hint(packages: Sequence[str]) -> str:
    """The pip command that installs ``packages`` into this Python (pins in envs/requirements.txt)."""
    return f"`{sys.executable} -m pip install {' '.join(packages)}` (pinned in envs/requirements.txt)"


def check_tokenizer_packages(folder: str | Path, *, model: str) -> None:
    """Stop with one line naming the packages a local model folder's tokenizer needs and lacks."""
    missing = missing_packages(tokenizer_packages(folder))
    if missing:
        raise ModelError(
            f"model {model!r} ({folder}): its tokenizer needs {', '.join(missing)}, not installed; "
            f"run {install_hint(missing)}"
        )
