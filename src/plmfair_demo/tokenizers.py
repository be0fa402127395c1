"""Tokenizers of the real kinds, trained on the demo's text (``tokenizers`` library), reproducibly: the
WordPiece and Unigram vocabularies take their pieces from a deterministic BPE run."""

from __future__ import annotations

import math

from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from tokenizers.normalizers import Normalizer
from tokenizers.pre_tokenizers import PreTokenizer


def template(tok: Tokenizer, bos: str, eos: str) -> None:
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} $B {eos}",
        special_tokens=[(bos, _id(tok, bos)), (eos, _id(tok, eos))],
    )


def _id(tok: Tokenizer, token: str) -> int:
    """The id of a special token the tokenizer was trained with."""
    found = tok.token_to_id(token)
    if found is None:
        raise ValueError(f"the tokenizer has no {token!r}: train it with that special token")
    return found


def bpe_pieces(
    texts: list[str], vocab_size: int, normalizer: Normalizer, pre_tokenizer: PreTokenizer
) -> tuple[list[str], Tokenizer]:
    """The vocabulary a plain BPE run learns on ``texts`` (in the order learnt: the alphabet, then
    the merges), and that BPE tokenizer. Plain BPE training is reproducible run to run; the
    WordPiece and Unigram trainers of ``tokenizers`` are not (their ties and sums follow a hash
    map's order), so those two kinds take their pieces from here."""
    bpe = Tokenizer(models.BPE())
    bpe.normalizer = normalizer
    bpe.pre_tokenizer = pre_tokenizer
    bpe.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False))
    vocab = bpe.get_vocab()
    return sorted(vocab, key=vocab.__getitem__), bpe


def train_wordpiece(texts: list[str], vocab_size: int) -> Tokenizer:
    """A WordPiece tokenizer (BERT uncased) whose pieces, word-initial and ``##`` continuations,
    are those a BPE run learns on the text."""
    normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces, _ = bpe_pieces(texts, vocab_size, normalizer, pre_tokenizers.BertPreTokenizer())
    vocab = list(specials)
    for piece in pieces:
        vocab += [piece, f"##{piece}"]
    vocab = list(dict.fromkeys(vocab))[:vocab_size]
    tok = Tokenizer(models.WordPiece({p: i for i, p in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    template(tok, "[CLS]", "[SEP]")
    tok.decoder = decoders.WordPiece()
    return tok


def train_unigram(texts: list[str], vocab_size: int, specials: list[str], *, lowercase: bool = False) -> Tokenizer:
    """A SentencePiece-style Unigram tokenizer (``▁`` word marker): the pieces a BPE run learns on the
    text, scored by the log of their relative frequency in the text as that BPE run splits it."""
    from collections import Counter

    norm = [normalizers.NFKC()] + ([normalizers.Lowercase()] if lowercase else [])
    metaspace = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    pieces, bpe = bpe_pieces(texts, vocab_size - len(specials), normalizers.Sequence(norm), metaspace)
    counts = Counter(t for enc in bpe.encode_batch(texts) for t in enc.tokens)
    total = sum(counts.values()) + len(pieces)
    unk = "<unk>" if "<unk>" in specials else "[UNK]"
    vocab = [(sp, 0.0) for sp in specials] + [(p, math.log((counts[p] + 1) / total)) for p in pieces]
    tok = Tokenizer(models.Unigram(vocab, unk_id=specials.index(unk)))
    tok.normalizer = normalizers.Sequence(norm)
    tok.pre_tokenizer = metaspace
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.add_special_tokens(specials)
    return tok


def train_bytelevel_bpe(
    texts: list[str], vocab_size: int, specials: tuple[str, ...] = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=list(specials),
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    if "<s>" in specials:
        tok.post_processor = processors.RobertaProcessing(("</s>", _id(tok, "</s>")), ("<s>", _id(tok, "<s>")))
    return tok


def train_metaspace_bpe(texts: list[str], vocab_size: int) -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"]))
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", tok.token_to_id("<s>"))]
    )
    return tok


def train_suffix_bpe(texts: list[str], vocab_size: int) -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    tok.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=["<s>", "</s>", "<pad>", "<unk>", "<special1>"],
            end_of_word_suffix="</w>",
        ),
    )
    template(tok, "<s>", "</s>")
    return tok
