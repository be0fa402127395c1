"""Replicas of real repository layouts: tokenizer files of the real kinds (SentencePiece models
trained by the ``sentencepiece`` library, vocab.json + merges.txt), and pickle weights where the Hub
has them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokenizers import (
    Tokenizer,
    models,
    pre_tokenizers,
    trainers,
)

from plmfair_demo.architectures import (
    N_SENTINELS,
    Sizes,
    albert_model,
    flaubert_model,
    mt5_model,
    save_pretrained,
    xlmr_model,
)

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

# The first code point of Unicode's Supplementary Private Use Area-A: characters no text holds.
PRIVATE_USE = 0xF0000


def _sentencepiece(
    texts: list[str], out: Path, prefix: str, z: Sizes, *, keep_vocab: bool = False, **options: Any
) -> Path:
    """Train a SentencePiece model on ``texts`` (the ``sentencepiece`` library itself, one thread, so
    a build is reproducible) and write ``<prefix>.model`` to ``out`` (and ``<prefix>.vocab``, its
    pieces and scores as text as the library writes them, with ``keep_vocab``). The texts go in and
    the model comes out in memory: a model trained from a file records the file's path, so two builds
    in two folders would differ."""
    import io

    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=model,
        vocab_size=z.vocab_size,
        hard_vocab_limit=False,
        character_coverage=1.0,
        num_threads=1,
        shuffle_input_sentence=False,
        minloglevel=2,
        **options,
    )
    path = out / f"{prefix}.model"
    path.write_bytes(model.getvalue())
    if keep_vocab:
        sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
        (out / f"{prefix}.vocab").write_text(
            "".join(f"{sp.id_to_piece(i)}\t{sp.get_score(i):g}\n" for i in range(sp.get_piece_size())),
            encoding="utf-8",
        )
    return path


def _tokenizer_config(out: Path, tokenizer_class: str, **fields: object) -> None:
    (out / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": tokenizer_class, **fields}, indent=1) + "\n", encoding="utf-8"
    )


def _reloaded(out: Path) -> PreTrainedTokenizerBase:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(out)


def t5_spiece(texts: list[str], z: Sizes, out: Path) -> None:
    """google/mt5-base's layout: ``spiece.model`` (SentencePiece Unigram; pad 0, eos 1, unk 2) and
    ``T5Tokenizer`` with 100 sentinels, no tokenizer.json; ``pytorch_model.bin`` only."""
    _sentencepiece(texts, out, "spiece", z, model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
    _tokenizer_config(out, "T5Tokenizer", extra_ids=N_SENTINELS, model_max_length=z.max_length)
    tok = _reloaded(out)
    # the real config's vocabulary is larger than the tokenizer's (250,112 rows for 250,100 pieces)
    save_pretrained(None, mt5_model(tok, z, vocab_size=len(tok) + 12), out, weights="pickle")


def albert_spiece(texts: list[str], z: Sizes, out: Path) -> None:
    """qwant/fralbert-base's layout (ALBERT's): ``spiece.model`` + ``spiece.vocab`` (Unigram; <pad>,
    <unk>, [CLS], [SEP], [MASK] first), ``AlbertTokenizer`` lower-casing, no tokenizer.json;
    ``pytorch_model.bin`` only."""
    _sentencepiece(
        texts,
        out,
        "spiece",
        z,
        keep_vocab=True,
        model_type="unigram",
        pad_id=0,
        unk_id=1,
        bos_id=-1,
        eos_id=-1,
        control_symbols=["[CLS]", "[SEP]", "[MASK]"],
    )
    _tokenizer_config(out, "AlbertTokenizer", do_lower_case=True, keep_accents=False, model_max_length=z.max_length)
    save_pretrained(None, albert_model(_reloaded(out), z), out, weights="pickle")


def xlmr_spiece(
    texts: list[str], z: Sizes, out: Path, *, tokenizer_class: str = "XLMRobertaTokenizer", tokenizer_json: bool = False
) -> None:
    """xlm-roberta-base's and camembert-base's layout: ``sentencepiece.bpe.model`` (a SentencePiece
    Unigram model, whatever its name says), read with fairseq's offsets by
    ``XLMRobertaTokenizer``/``CamembertTokenizer``, with or
    without the converted ``tokenizer.json``; safetensors weights."""
    _sentencepiece(texts, out, "sentencepiece.bpe", z, model_type="unigram")
    _tokenizer_config(out, tokenizer_class, model_max_length=z.max_length)
    tok = _reloaded(out)
    if tokenizer_json:
        tok.save_pretrained(out)
    save_pretrained(None, xlmr_model(tok, z), out)


def camembert_spiece(texts: list[str], z: Sizes, out: Path) -> None:
    xlmr_spiece(texts, z, out, tokenizer_class="CamembertTokenizer", tokenizer_json=True)


def flaubert_bpe(texts: list[str], z: Sizes, out: Path) -> None:
    """flaubert/flaubert_base_cased's layout: ``vocab.json`` + ``merges.txt`` (XLM's BPE with
    ``</w>`` word ends, learnt on Moses-tokenized text; <s>, </s>, <pad>, <unk>, <special0-9>
    first), read by the Python ``FlaubertTokenizer`` (sacremoses); no tokenizer.json nor
    tokenizer_config.json; ``pytorch_model.bin`` only."""
    import transformers as tf
    from sacremoses import MosesTokenizer

    moses = MosesTokenizer(lang="fr")
    words = [moses.tokenize(t, escape=False) for t in texts]
    # tokenizers' BPE trainer, asked to mark word ends itself (end_of_word_suffix), breaks ties between
    # merges by ids it gives in a hash map's order: not reproducible. Plain BPE is (bpe_pieces), so each
    # word's last character is learnt as a private-use character of its own and written back as the
    # character with </w>: the same merges an end-of-word run learns, in one order.
    finals = sorted({w[-1] for sentence in words for w in sentence})
    marked = {c: chr(PRIVATE_USE + i) for i, c in enumerate(finals)}
    unmarked = {m: c + "</w>" for c, m in marked.items()}

    def unmark(piece: str) -> str:
        return piece[:-1] + unmarked[piece[-1]] if piece and piece[-1] in unmarked else piece

    specials = ["<s>", "</s>", "<pad>", "<unk>"] + [f"<special{i}>" for i in range(10)]
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    bpe.train_from_iterator(
        [" ".join(w[:-1] + marked[w[-1]] for w in sentence) for sentence in words],
        trainers.BpeTrainer(
            vocab_size=z.vocab_size,
            special_tokens=specials,
            # every character also unmarked, as an end-of-word run has them: a word may hold it inside
            initial_alphabet=sorted({c for sentence in words for w in sentence for c in w}),
            show_progress=False,
        ),
    )
    learnt = json.loads(bpe.to_str())["model"]
    vocab = {unmark(piece): i for piece, i in learnt["vocab"].items()}
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    merges = [" ".join(unmark(p) for p in pair) for pair in learnt["merges"]]
    (out / "merges.txt").write_text("\n".join(merges) + "\n", encoding="utf-8")
    tok = tf.FlaubertTokenizer(
        vocab_file=str(out / "vocab.json"), merges_file=str(out / "merges.txt"), model_max_length=z.max_length
    )
    save_pretrained(None, flaubert_model(tok, z), out, weights="pickle")
