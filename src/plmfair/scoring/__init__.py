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

import difflib
import importlib
from dataclasses import dataclass

from plmfair.errors import ConfigError
from plmfair.studies import CLOZE_STUDIES, STUDIES

# The CrowS-Pairs rule of causal models (lm-evaluation-harness's crows_pairs tasks): the
# sum of log P(token | BOS or EOS, previous tokens) over every token of the sentence.
CAUSAL_PROTOCOL = "sentence_log_likelihood"


@dataclass(frozen=True)
class Family:
    """What a model family is and what it can do: the studies it is scored on, whether its gap
    predictions are a beam search (``num_beams`` applies), its CrowS-Pairs protocol (None: the
    configured protocol of masked LMs, ``crows_pairs.protocol``) and its gap protocol (a name in
    :data:`plmfair.scoring.protocols.CLOZE_PROTOCOLS`: how it predicts a gap and scores answers)."""

    name: str
    module: str
    scorer: str
    auto_class: str
    auto_mapping: str  # transformers' model_type -> class table of auto_class
    studies: frozenset[str]
    beam_search: bool
    protocol: str | None
    cloze_protocol: str
    description: str

    def scores(self, study: str) -> bool:
        return study in self.studies


ALL_STUDIES = frozenset(STUDIES)

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("mlm", "plmfair.scoring.mlm", "MaskedLMScorer", "AutoModelForMaskedLM",
               "MODEL_FOR_MASKED_LM_MAPPING_NAMES", studies=ALL_STUDIES, beam_search=False, protocol=None,
               cloze_protocol="fill_mask",
               description="masked language model (BERT, RoBERTa, XLM-R, ALBERT, CamemBERT, FlauBERT)"),
        Family("seq2seq", "plmfair.scoring.seq2seq", "Seq2SeqScorer", "AutoModelForSeq2SeqLM",
               "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", studies=CLOZE_STUDIES, beam_search=True, protocol=None,
               cloze_protocol="span_infilling",
               description="span-infilling encoder-decoder with sentinel tokens (mT5)"),
        Family("causal", "plmfair.scoring.causal", "CausalLMScorer", "AutoModelForCausalLM",
               "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", studies=ALL_STUDIES, beam_search=True, protocol=CAUSAL_PROTOCOL,
               cloze_protocol="left_context_rerank",
               description="decoder-only language model (GPT-2, Llama, Qwen, Mistral)"),
    )
}


def did_you_mean(name: str, known) -> str:
    """`` (did you mean 'x'?)`` when a known name is close to ``name`` (case aside), else ``""``."""
    folded = {str(k).lower(): str(k) for k in known}
    close = difflib.get_close_matches(str(name).lower(), list(folded), n=1)
    return f" (did you mean {folded[close[0]]!r}?)" if close else ""


def get_family(name: str, *, where: str = "family") -> Family:
    """The registered family called ``name``; an unknown name is a config error naming ``where``."""
    if name not in FAMILIES:
        raise ConfigError(
            f"config error at {where}: unknown model family {name!r}{did_you_mean(name, FAMILIES)}; "
            f"known: {sorted(FAMILIES)}"
        )
    return FAMILIES[name]


def scorer_class(name: str):
    """The :class:`~plmfair.scoring.base.Scorer` subclass of family ``name`` (imports torch)."""
    family = get_family(name)
    return getattr(importlib.import_module(family.module), family.scorer)
