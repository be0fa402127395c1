"""Benchmark: CrowS-Pairs outcomes in bf16 against fp32, before and after the precision check.

Tiny models of the demo's kinds (a masked and a causal LM, random weights, tokenizers trained on the
sentences) score the demo's French set and the real French set (Névéol et al.) in fp32, in bf16 as
scored before the check (outcomes by the sign of the margin), and in bf16 with the check (the pairs
within bf16's error bound, calibrated on a sample scored in both, scored again in fp32:
:func:`plmfair.scoring.pair_decision.settle_in_fp32`). Printed per model and set: the outcomes
(more / neutral / less stereotyping preferred) that differ from fp32's, the pairs scored again, and
the time of each (the model's load included). ``--shape base`` gives the models the layers of BERT-base
and GPT-2 small (random weights; the small tokenizers and their vocabularies kept, as the loader checks
that a model's vocabulary is its tokenizer's): a GPU's case.

    python benchmarks/bench_precision.py [--precision bf16|fp16] [--device cpu|cuda] [--shape tiny|base] [--pairs N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd
import torch
from shared_data import REPO, shared_file  # benchmarks/shared_data.py, beside this script

from plmfair.crows_pairs import scoring_job
from plmfair.crows_pairs.reader import read_crows_pairs
from plmfair.scoring import pair_decision
from plmfair.scoring.loader import Stopwatch
from plmfair.scoring.specs import ModelSpec
from plmfair_demo import build_tiny_model

MODELS = {"tiny_bert": ("bert", "mlm", "nangia"), "tiny_gpt2": ("gpt2", "causal", "sentence_log_likelihood")}
BASE_SHAPES = {  # the layers of the papers' base models, per kind
    "bert": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072},
    "gpt2": {"n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": 3072},
}


def build(kind: str, family: str, texts: list[str], folder: Path, shape: str) -> Path:
    """A tiny model of the demo's ``kind``; with ``shape`` "base", its weights replaced by a random model
    with the base model's layers (the tokenizer and its vocabulary kept)."""
    folder = build_tiny_model(kind, texts, folder)
    if shape == "base":
        import transformers as tf

        config = tf.AutoConfig.from_pretrained(folder)
        for key, value in BASE_SHAPES[kind].items():
            setattr(config, key, value)
        auto = tf.AutoModelForMaskedLM if family == "mlm" else tf.AutoModelForCausalLM
        torch.manual_seed(0)
        auto.from_config(config).save_pretrained(folder)
    return folder


def outcome(frame: pd.DataFrame, *, by_sign: bool = False) -> pd.Series:
    """+1 more stereotyping preferred, 0 neutral, -1 less; ``by_sign``: the margin's sign, as before the check."""
    if by_sign:
        margin = frame["sent_more_score"] - frame["sent_less_score"]
        return (margin > 0).astype(int) - (margin < 0).astype(int)
    return frame["biased"].astype(int) - (~frame["biased"] & ~frame["neutral"]).astype(int)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--precision", default="bf16", choices=["bf16", "fp16"])
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--shape", default="tiny", choices=["tiny", "base"], help="the demo's tiny models or base-sized")
    ap.add_argument("--pairs", type=int, default=0, help="the first N pairs of each set (0: all)")
    args = ap.parse_args()
    sets = {"demo_fr": REPO / ".test" / "data" / "crows_pairs_demo_fr.csv"}
    real = shared_file("crows_pairs", "crows_pairs_FR_languagearc_contribution+210.csv")
    if real is not None:
        sets["real fr"] = real
    data = {name: read_crows_pairs(path, fmt="inria", lang="fr") for name, path in sets.items()}
    if args.pairs:
        data = {name: pairs.head(args.pairs) for name, pairs in data.items()}
    texts = pd.concat([d["sent_more"] for d in data.values()]).dropna().tolist()
    with tempfile.TemporaryDirectory() as tmp:
        for name, (kind, family, protocol) in MODELS.items():
            folder = build(kind, family, texts, Path(tmp) / name, args.shape)
            label = name if args.shape == "tiny" else f"{kind}-base shape"
            spec = ModelSpec(name=label, family=family, path=str(folder))
            for set_name, pairs in data.items():

                def run(precision, pairs=pairs, spec=spec, protocol=protocol):
                    with Stopwatch(torch.device(args.device)) as watch:
                        out, meta = scoring_job.run_scoring(
                            pairs,
                            spec,
                            protocol=protocol,
                            precision=precision,
                            too_long="skip",
                            token_budget=0,
                            device=args.device,
                            progress=False,
                        )
                    return out, meta, watch.seconds

                exact, _, t32 = run("fp32")
                # bf16 as scored before the check: decided at bf16's own tolerance
                settle = pair_decision.settle_in_fp32
                pair_decision.settle_in_fp32 = lambda out, loaded, *, rounded, rescore: (
                    pair_decision.with_outcomes(out, precision=loaded.precision, rounded=rounded),
                    {},
                )
                raw, _, t_raw = run(args.precision)
                pair_decision.settle_in_fp32 = settle
                checked, meta, t_checked = run(args.precision)
                before = int((outcome(raw, by_sign=True) != outcome(exact, by_sign=True)).sum())
                after = int((outcome(checked) != outcome(exact)).sum())
                check = meta["precision_check"]
                print(
                    f"{label} on {set_name} ({len(pairs)} pairs): fp32 {t32:.1f} s; {args.precision} {t_raw:.1f} s, "
                    f"{before} outcomes differ from fp32's; {args.precision} with the check {t_checked:.1f} s, "
                    f"{after} differ ({check['rescored']} pairs scored again in fp32, bound "
                    f"{check['bound_factor']:.1f} u)",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
