"""Model scoring: one contract (:class:`plmfair.scoring.base.Scorer`), one implementation per family.

This module is the family registry. It imports neither torch nor transformers, so that
the study plan (:mod:`plmfair.plan`) and Snakemake's DAG can ask which family scores
which study without loading a model library; :func:`scorer_class` imports the family's
module only when a scoring job needs it.

Families (``models.<name>.family`` in the config):

- ``mlm``: masked language models (BERT, RoBERTa, XLM-R, ALBERT, CamemBERT, FlauBERT):
  :mod:`plmfair.scoring.mlm`.
- ``seq2seq``: span-infilling encoder-decoders of the T5 family (mT5):
  :mod:`plmfair.scoring.seq2seq`. No CrowS-Pairs protocol is defined for them.
- ``causal``: decoder-only language models (GPT-2, Llama, Qwen, Mistral):
  :mod:`plmfair.scoring.causal`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from plmfair.errors import ConfigError
from plmfair.registry import Registry, load_object
from plmfair.studies import CLOZE_TASK, PAIRS_TASK, STUDIES

if TYPE_CHECKING:  # the scorers import torch: the plan reads this module without it
    from plmfair.scoring.base import Scorer

# The CrowS-Pairs rule of causal models (lm-evaluation-harness's crows_pairs tasks): the
# sum of log P(token | BOS or EOS, previous tokens) over every token of the sentence.
CAUSAL_PROTOCOL = "sentence_log_likelihood"


@dataclass(frozen=True)
class Family:
    """What a model family is and what it can do: the tasks it can be scored on
    (:data:`plmfair.studies.CLOZE_TASK`, ...), whether its gap predictions are a beam search
    (``num_beams`` applies), its CrowS-Pairs protocol (None: the configured protocol of masked LMs,
    ``crows_pairs.protocol``) and its gap protocol (a name in
    :data:`plmfair.scoring.protocols.CLOZE_PROTOCOLS`: how it predicts a gap and scores answers)."""

    name: str
    module: str
    scorer: str
    auto_class: str
    auto_mapping: str  # transformers' model_type -> class table of auto_class
    tasks: frozenset[str]
    beam_search: bool
    protocol: str | None
    cloze_protocol: str
    description: str

    def scores(self, study: str) -> bool:
        """Whether the family can be scored on ``study`` (it does the study's task)."""
        return STUDIES[study].task in self.tasks


BOTH_TASKS = frozenset({CLOZE_TASK, PAIRS_TASK})

FAMILIES: Registry[Family] = Registry(
    "model family",
    {
        f.name: f
        for f in (
            Family(
                "mlm",
                "plmfair.scoring.mlm",
                "MaskedLMScorer",
                "AutoModelForMaskedLM",
                "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
                tasks=BOTH_TASKS,
                beam_search=False,
                protocol=None,
                cloze_protocol="fill_mask",
                description="masked language model (BERT, RoBERTa, XLM-R, ALBERT, CamemBERT, FlauBERT)",
            ),
            Family(
                "seq2seq",
                "plmfair.scoring.seq2seq",
                "Seq2SeqScorer",
                "AutoModelForSeq2SeqLM",
                "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
                tasks=frozenset({CLOZE_TASK}),
                beam_search=True,
                protocol=None,
                cloze_protocol="span_infilling",
                description="span-infilling encoder-decoder with sentinel tokens (mT5)",
            ),
            Family(
                "causal",
                "plmfair.scoring.causal",
                "CausalLMScorer",
                "AutoModelForCausalLM",
                "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
                tasks=BOTH_TASKS,
                beam_search=True,
                protocol=CAUSAL_PROTOCOL,
                cloze_protocol="left_context_rerank",
                description="decoder-only language model (GPT-2, Llama, Qwen, Mistral)",
            ),
        )
    },
    error=ConfigError,
)


def get_family(name: str, *, where: str = "family") -> Family:
    """The registered family called ``name``; an unknown name is a config error naming ``where``."""
    return FAMILIES.get(name, where=f"config error at {where}")


def scorer_class(name: str) -> type[Scorer]:
    """The :class:`~plmfair.scoring.base.Scorer` subclass of family ``name`` (imports torch)."""
    family = get_family(name)
    return load_object(f"{family.module}:{family.scorer}")


# T5-style span infilling (sentinel tokens): the model types whose *ForConditionalGeneration is seq2seq.
SPAN_INFILLING_TYPES = ("t5", "mt5", "umt5", "longt5", "switch_transformers")


def family_by_class_name(architecture: str, model_type: str | None) -> str | None:
    """The family an architecture's class name says, without transformers: ``*ForMaskedLM`` is
    ``mlm``; ``*ForCausalLM`` and ``*LMHeadModel`` are ``causal``, but XLM's and FlauBERT's
    ``*WithLMHeadModel``, which are both; a span-infilling type's ``*ForConditionalGeneration`` is
    ``seq2seq``; None for any other name. Every class of transformers' Auto tables that it names
    agrees with the tables (tests/scoring/test_loader.py)."""
    if architecture.endswith("ForMaskedLM"):
        return "mlm"
    if architecture.endswith("ForCausalLM") or (
        architecture.endswith("LMHeadModel") and not architecture.endswith("WithLMHeadModel")
    ):
        return "causal"
    if architecture.endswith("ForConditionalGeneration") and model_type in SPAN_INFILLING_TYPES:
        return "seq2seq"
    return None
