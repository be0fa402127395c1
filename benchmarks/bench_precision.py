"""Benchmark: CrowS-Pairs outcomes in bf16 against fp32, before and after the precision check.

Tiny models of the demo's kinds (a masked and a causal LM, random weights, tokenizers trained on the
sentences) score the demo's French set and the real French set (Névéol et al.) in fp32, in bf16 as
scored before the check (outcomes by the sign of the margin), and in bf16 with the check (the pairs
within bf16's error bound, calibrated on a sample scored in both, scored again in fp32:
:func:`plmfair.crows_pairs.scoring_job.settle_in_fp32`). Printed per model and set: the outcomes
(more / neutral / less stereotyping preferred) that differ from fp32's, the pairs scored again, and
the time of each.

    python benchmarks/bench_precision.py [--precision bf16|fp16]
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
from plmfair.scoring.loader import Stopwatch
from plmfair.scoring.specs import ModelSpec
from plmfair_demo import build_tiny_model

MODELS = {"tiny_bert": ("bert", "mlm", "nangia"), "tiny_gpt2": ("gpt2", "causal", "sentence_log_likelihood")}


def outcome(frame: pd.DataFrame, *, by_sign: bool = False) -> pd.Series:
    """+1 more stereotyping preferred, 0 neutral, -1 less; ``by_sign``: the margin's sign, as before the check."""
    if by_sign:
        margin = frame["sent_more_score"] - frame["sent_less_score"]
        return (margin > 0).astype(int) - (margin < 0).astype(int)
    return frame["biased"].astype(int) - (~frame["biased"] & ~frame["neutral"]).astype(int)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--precision", default="bf16", choices=["bf16", "fp16"])
    args = ap.parse_args()
    sets = {"demo_fr": REPO / ".test" / "data" / "crows_pairs_demo_fr.csv"}
    real = shared_file("crows_pairs", "crows_pairs_FR_languagearc_contribution+210.csv")
    if real is not None:
        sets["real fr"] = real
    data = {name: read_crows_pairs(path, fmt="inria", lang="fr") for name, path in sets.items()}
    texts = pd.concat([d["sent_more"] for d in data.values()]).dropna().tolist()
    with tempfile.TemporaryDirectory() as tmp:
        for name, (kind, family, protocol) in MODELS.items():
            spec = ModelSpec(name=name, family=family, path=str(build_tiny_model(kind, texts, Path(tmp) / name)))
            for set_name, pairs in data.items():

                def run(precision, pairs=pairs, spec=spec, protocol=protocol):
                    with Stopwatch(torch.device("cpu")) as watch:
                        out, meta = scoring_job.run_scoring(
                            pairs,
                            spec,
                            protocol=protocol,
                            precision=precision,
                            too_long="skip",
                            token_budget=0,
                            progress=False,
                        )
                    return out, meta, watch.seconds

                exact, _, t32 = run("fp32")
                settle, scoring_job.settle_in_fp32 = scoring_job.settle_in_fp32, lambda out, *a, **k: (out, {})
                raw, _, t_raw = run(args.precision)
                scoring_job.settle_in_fp32 = settle
                checked, meta, t_checked = run(args.precision)
                before = int((outcome(raw, by_sign=True) != outcome(exact, by_sign=True)).sum())
                after = int((outcome(checked) != outcome(exact)).sum())
                check = meta["precision_check"]
                print(
                    f"{name} on {set_name} ({len(pairs)} pairs): fp32 {t32:.1f} s; {args.precision} {t_raw:.1f} s, "
                    f"{before} outcomes differ from fp32's; {args.precision} with the check {t_checked:.1f} s, "
                    f"{after} differ ({check['rescored']} pairs scored again in fp32, bound "
                    f"{check['bound_factor']:.1f} u)",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
