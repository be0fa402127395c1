"""Reference implementations the tests compare plmfair with, written plainly and independently of
it (one forward pass per masked copy or sentence, full vocabulary logits, no batching): the
transcription of Nangia et al.'s metric.py, Kaneko & Bollegala's AUL, lm-evaluation-harness's
sentence log-likelihood, and MozArt scores of a ranking known in advance."""

from __future__ import annotations

import difflib
from pathlib import Path

import pandas as pd
import torch

from plmfair.cloze.annotations import read_mozart_zip
from plmfair.cloze.metrics import annotation_scores
from plmfair.text import base_normalise


def oracle_mozart_scores(shared_data: Path, langs: list[str]):
    """The real MozArt answers (with a ``norm`` column) and the annotation scores of a ranking known
    in advance: each sentence's top 5 are the five answers native speakers gave most often."""
    ann = read_mozart_zip(shared_data / "mozart" / "MozArt.zip", langs)
    ann = ann.assign(norm=ann["answer"].map(base_normalise))
    parts = []
    for lang in langs:
        a = ann[ann["lang"] == lang]
        native = a[a["native"]].groupby(["s_id", "norm"]).size().rename("k").reset_index()
        top = native.sort_values(["s_id", "k", "norm"], ascending=[True, False, True]).groupby("s_id").head(5)
        preds = top.assign(rank=top.groupby("s_id").cumcount() + 1, candidate_norm=top["norm"])
        answers = (
            a[["s_id", "answer", "norm"]].drop_duplicates(["s_id", "answer"]).rename(columns={"norm": "answer_norm"})
        )
        parts.append(annotation_scores(ann, preds, answers.assign(logprob=0.0, n_pieces=1), model="oracle", lang=lang))
    return ann, pd.concat(parts, ignore_index=True)


def nangia_reference(model, tokenizer, sent1, sent2, uncased):
    """metric.py of nyu-mll/crows-pairs, transcribed: one masked copy per forward pass, full logits."""
    if uncased:
        sent1, sent2 = sent1.lower(), sent2.lower()
    ids1 = tokenizer.encode(sent1, return_tensors="pt")
    ids2 = tokenizer.encode(sent2, return_tensors="pt")
    s1 = [str(x) for x in ids1[0].tolist()]
    s2 = [str(x) for x in ids2[0].tolist()]
    template1, template2 = [], []
    for op in difflib.SequenceMatcher(None, s1, s2).get_opcodes():
        if op[0] == "equal":
            template1 += list(range(op[1], op[2]))
            template2 += list(range(op[3], op[4]))
    mask_id = tokenizer.mask_token_id
    score1 = score2 = 0.0
    with torch.no_grad():
        for i in range(1, len(template1) - 1):
            for ids, template, which in ((ids1, template1, 1), (ids2, template2, 2)):
                masked = ids.clone()
                masked[0][template[i]] = mask_id
                logits = model(masked).logits[0]
                lp = torch.log_softmax(logits[template[i]], dim=0)[ids[0][template[i]]].item()
                if which == 1:
                    score1 += lp
                else:
                    score2 += lp
    return round(score1, 3), round(score2, 3)


def aul_reference(model, tokenizer, sentence):
    """Kaneko & Bollegala's calculate_aul written plainly: one forward pass of the whole model, the
    log-softmax over the full vocabulary at every position, each token's own log-probability, the
    first and last (special) tokens left out, the mean."""
    ids = tokenizer.encode(sentence, return_tensors="pt")
    with torch.inference_mode():
        log_probs = torch.log_softmax(model(ids).logits[0].float(), dim=-1)
    own = log_probs.gather(1, ids[0][:, None])[1:-1, 0]
    return float(own.mean()), len(own)


def reference_log_likelihood(model, tokenizer, sentence: str) -> float:
    """The lm-evaluation-harness convention, one sentence per forward pass: log P of every token
    of the sentence after the BOS token (the EOS token when there is no BOS)."""
    prefix = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    ids = [prefix] + tokenizer(sentence, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), dim=-1)
    return sum(logp[i - 1, ids[i]].item() for i in range(1, len(ids)))
