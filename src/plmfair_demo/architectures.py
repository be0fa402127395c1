"""Tiny random-weight models of the real architectures, each with the tokenizer of its kind
(:mod:`plmfair_demo.tokenizers`), saved as transformers saves them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import torch
from tokenizers import (
    processors,
)

from plmfair_demo.tokenizers import (
    template,
    train_bytelevel_bpe,
    train_metaspace_bpe,
    train_suffix_bpe,
    train_unigram,
    train_wordpiece,
)

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

N_SENTINELS = 100
# a tiny model and its tokenizer, as an architecture's builder makes them
Built: TypeAlias = "tuple[PreTrainedTokenizerBase, PreTrainedModel]"


@dataclass(frozen=True)
class Sizes:
    """The shape of a tiny model (``models.<name>.build`` in the config)."""

    vocab_size: int = 2000
    hidden_size: int = 32
    num_layers: int = 2
    num_heads: int = 2
    max_length: int = 128

    @property
    def inter(self) -> int:
        return self.hidden_size * 2


def bert(texts: list[str], z: Sizes) -> Built:
    import transformers as tf

    hf_tok = tf.BertTokenizer(
        tokenizer_object=train_wordpiece(texts, z.vocab_size),
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        do_lower_case=True,
        model_max_length=z.max_length,
    )
    model = tf.BertForMaskedLM(
        tf.BertConfig(
            vocab_size=len(hf_tok),
            hidden_size=z.hidden_size,
            num_hidden_layers=z.num_layers,
            num_attention_heads=z.num_heads,
            intermediate_size=z.inter,
            max_position_embeddings=z.max_length,
            pad_token_id=hf_tok.pad_token_id,
        )
    )
    return hf_tok, model


def xlmr(texts: list[str], z: Sizes) -> Built:
    import transformers as tf

    tok = train_unigram(texts, z.vocab_size, ["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    template(tok, "<s>", "</s>")
    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="<s>",
        sep_token="</s>",
        mask_token="<mask>",
        model_max_length=z.max_length,
    )
    return hf_tok, xlmr_model(hf_tok, z)


def xlmr_model(hf_tok: PreTrainedTokenizerBase, z: Sizes) -> PreTrainedModel:
    import transformers as tf

    return tf.XLMRobertaForMaskedLM(
        tf.XLMRobertaConfig(
            vocab_size=len(hf_tok),
            hidden_size=z.hidden_size,
            num_hidden_layers=z.num_layers,
            num_attention_heads=z.num_heads,
            intermediate_size=z.inter,
            max_position_embeddings=z.max_length + 2,
            pad_token_id=hf_tok.pad_token_id,
            bos_token_id=hf_tok.bos_token_id,
            eos_token_id=hf_tok.eos_token_id,
        )
    )


def albert(texts: list[str], z: Sizes) -> Built:
    import transformers as tf

    tok = train_unigram(texts, z.vocab_size, ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"], lowercase=True)
    template(tok, "[CLS]", "[SEP]")
    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        do_lower_case=True,
        model_max_length=z.max_length,
    )
    return hf_tok, albert_model(hf_tok, z)


def albert_model(hf_tok: PreTrainedTokenizerBase, z: Sizes) -> PreTrainedModel:
    import transformers as tf

    return tf.AlbertForMaskedLM(
        tf.AlbertConfig(
            vocab_size=len(hf_tok),
            embedding_size=max(8, z.hidden_size // 2),
            hidden_size=z.hidden_size,
            num_hidden_layers=z.num_layers,
            num_attention_heads=z.num_heads,
            intermediate_size=z.inter,
            max_position_embeddings=z.max_length,
            pad_token_id=hf_tok.pad_token_id,
        )
    )


def roberta(texts: list[str], z: Sizes) -> Built:
    import transformers as tf

    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=train_bytelevel_bpe(texts, z.vocab_size),
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="<s>",
        sep_token="</s>",
        mask_token="<mask>",
        model_max_length=z.max_length,
    )
    model = tf.RobertaForMaskedLM(
        tf.RobertaConfig(
            vocab_size=len(hf_tok),
            hidden_size=z.hidden_size,
            num_hidden_layers=z.num_layers,
            num_attention_heads=z.num_heads,
            intermediate_size=z.inter,
            max_position_embeddings=z.max_length + 2,
            pad_token_id=hf_tok.pad_token_id,
            bos_token_id=hf_tok.bos_token_id,
            eos_token_id=hf_tok.eos_token_id,
        )
    )
    return hf_tok, model


def flaubert(texts: list[str], z: Sizes) -> Built:
    import transformers as tf

    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=train_suffix_bpe(texts, z.vocab_size),
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="<s>",
        sep_token="</s>",
        mask_token="<special1>",
        model_max_length=z.max_length,
    )
    return hf_tok, flaubert_model(hf_tok, z)


def flaubert_model(hf_tok: PreTrainedTokenizerBase, z: Sizes) -> PreTrainedModel:
    import transformers as tf

    # FlaubertTokenizer has no EOS token: </s> is its separator
    eos = hf_tok.eos_token_id if hf_tok.eos_token_id is not None else hf_tok.sep_token_id
    return tf.FlaubertWithLMHeadModel(
        tf.FlaubertConfig(
            vocab_size=len(hf_tok),
            emb_dim=z.hidden_size,
            n_layers=z.num_layers,
            n_heads=z.num_heads,
            max_position_embeddings=z.max_length,
            causal=False,
            bos_index=hf_tok.bos_token_id,
            eos_index=eos,
            pad_index=hf_tok.pad_token_id,
            unk_index=hf_tok.unk_token_id,
            mask_index=hf_tok.mask_token_id,
            pad_token_id=hf_tok.pad_token_id,
            mask_token_id=hf_tok.mask_token_id,
        )
    )


def gpt2(texts: list[str], z: Sizes) -> Built:
    import transformers as tf

    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=train_bytelevel_bpe(texts, z.vocab_size, specials=("<|endoftext|>",)),
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        model_max_length=z.max_length,
    )
    end = hf_tok.eos_token_id
    model = tf.GPT2LMHeadModel(
        tf.GPT2Config(
            vocab_size=len(hf_tok),
            n_positions=z.max_length,
            n_embd=z.hidden_size,
            n_layer=z.num_layers,
            n_head=z.num_heads,
            n_inner=z.inter,
            bos_token_id=end,
            eos_token_id=end,
        )
    )
    return hf_tok, model


def llama(texts: list[str], z: Sizes) -> Built:
    import transformers as tf

    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=train_metaspace_bpe(texts, z.vocab_size),
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        model_max_length=z.max_length,
    )
    model = tf.LlamaForCausalLM(
        tf.LlamaConfig(
            vocab_size=len(hf_tok),
            hidden_size=z.hidden_size,
            intermediate_size=z.inter,
            num_hidden_layers=z.num_layers,
            num_attention_heads=z.num_heads,
            num_key_value_heads=z.num_heads,
            max_position_embeddings=z.max_length,
            bos_token_id=hf_tok.bos_token_id,
            eos_token_id=hf_tok.eos_token_id,
            tie_word_embeddings=False,
        )
    )
    return hf_tok, model


def mt5(texts: list[str], z: Sizes) -> Built:
    import transformers as tf

    sentinels = [f"<extra_id_{i}>" for i in range(N_SENTINELS)]
    tok = train_unigram(texts, z.vocab_size, ["<pad>", "</s>", "<unk>"])
    tok.add_special_tokens(sentinels)
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))]
    )
    hf_tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        additional_special_tokens=sentinels,
        model_max_length=z.max_length,
    )
    return hf_tok, mt5_model(hf_tok, z)


def mt5_model(hf_tok: PreTrainedTokenizerBase, z: Sizes, vocab_size: int | None = None) -> PreTrainedModel:
    import transformers as tf

    return tf.MT5ForConditionalGeneration(
        tf.MT5Config(
            vocab_size=vocab_size or len(hf_tok),
            d_model=z.hidden_size,
            d_kv=max(8, z.hidden_size // z.num_heads),
            d_ff=z.inter,
            num_layers=z.num_layers,
            num_decoder_layers=z.num_layers,
            num_heads=z.num_heads,
            pad_token_id=hf_tok.pad_token_id,
            eos_token_id=hf_tok.eos_token_id,
            decoder_start_token_id=hf_tok.pad_token_id,
            tie_word_embeddings=False,
        )
    )


def save_pretrained(
    tokenizer: PreTrainedTokenizerBase | None, model: PreTrainedModel, out: Path, *, weights: str = "safetensors"
) -> None:
    """The tokenizer's files and the model's config and weights, as ``save_pretrained`` writes them;
    ``weights: pickle`` writes ``pytorch_model.bin`` instead of safetensors (repositories that
    hold only pickles)."""
    model.eval()
    if tokenizer is not None:
        tokenizer.save_pretrained(out)
    if weights == "pickle":
        model.config.save_pretrained(out)
        torch.save(model.state_dict(), out / "pytorch_model.bin")
    else:
        model.save_pretrained(out)
