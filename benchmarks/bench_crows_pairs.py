"""Benchmark: batched head-only CrowS-Pairs scoring against the plain per-copy loop.

Builds a BERT-shaped random model (default 4 layers, hidden 256, 120,000-row output
vocabulary) with a WordPiece tokenizer trained on the French pairs, scores the same
pairs with the plain loop of Nangia et al.'s metric.py (one masked copy per forward pass,
full vocabulary projection at every position) and with plmfair's scorer, checks that both
give the same scores, and prints pairs/s, the ratio, and the achieved GFLOP/s against the
machine's measured matrix-multiply rate.

    python benchmarks/bench_crows_pairs.py [--pairs 200] [--device cpu|cuda] [--shape small|bert-base|xlmr-base]
        [--precision-effect] [--budgets 8192,32768] [--profile] [--protocols aul,all_tokens]
        [--tokenizer wordpiece|flaubert] [--robustness]

--protocols times other protocols on the same pairs and model beside Nangia et al.'s (the All
Unmasked Likelihood, ``aul``: one forward pass per sentence where a pseudo-log-likelihood needs one
per token).

--robustness times the robustness analysis's scoring (docs/statistics.md, "Robustness"): the model saved and
loaded once, then a pass per masked-LM protocol, against one protocol's run (the load and nangia's pass);
``make bench`` prints it for BERT-base on 100 French pairs.

--tokenizer flaubert reads the pairs with FlauBERT's Python tokenizer (``FlaubertTokenizer``: Moses,
then BPE with ``</w>`` word ends; the replica's merges learnt on the pairs, its vocabulary filled to
flaubert_base_cased's 68,729 entries with entries no merge reaches, so it splits text as the learnt
BPE does and costs what the real one does to scan): the time a Python tokenizer adds to a scoring job.

--shape bert-base is BERT-base (12 layers, hidden 768, 120,000-row vocabulary, as FlauBERT's and
mBERT's are about); xlmr-base the same encoder with XLM-R's 250,002-row vocabulary (the
arithmetic of XLM-R-base: its RoBERTa encoder and BERT's differ only in position offsets).

Data: the French CrowS-Pairs file from $PLMFAIR_SHARED_DATA or ../shared/data when there,
else the demo pairs (repeated).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path

import torch
from shared_data import shared_file  # benchmarks/shared_data.py, beside this script

from plmfair.crows_pairs.reader import read_crows_pairs
from plmfair.crows_pairs.scoring_job import score_pairs
from plmfair.scoring.masking import shared_positions
from plmfair.scoring.mlm import MaskedLMScorer
from plmfair_demo import build_tiny_model

REPO = Path(__file__).resolve().parents[1]


def french_pairs(n: int):
    real = shared_file("crows_pairs", "crows_pairs_FR_languagearc_contribution+210.csv")
    if real is not None:
        df = read_crows_pairs(real, fmt="inria", lang="fr")
        return df.dropna(subset=["sent_more", "sent_less"]).head(n).reset_index(drop=True), "real French CrowS-Pairs"
    df = read_crows_pairs(REPO / ".test" / "data" / "crows_pairs_demo_fr.csv", fmt="inria", lang="fr").dropna()
    reps = (n + len(df) - 1) // len(df)
    import pandas as pd

    df = pd.concat([df] * reps, ignore_index=True).head(n)
    df["pair_id"] = [str(i) for i in range(len(df))]
    return df, "demo French pairs (real data not found)"


FLAUBERT_VOCABULARY = 68_729  # flaubert/flaubert_base_cased's vocab.json


def tokenizer_for(kind: str, texts: list[str], folder: str):
    """The bench's tokenizer: a Rust-backed WordPiece (uncased, as mBERT) or FlauBERT's Python one at
    its real vocabulary size, both learnt on ``texts``."""
    from transformers import AutoTokenizer

    if kind == "wordpiece":
        build_tiny_model("bert", texts, folder, vocab_size=8000, hidden_size=32, num_layers=1)
        return AutoTokenizer.from_pretrained(folder)
    build_tiny_model("flaubert_bpe", texts, folder, vocab_size=8000, hidden_size=32, num_layers=1)
    path = Path(folder) / "vocab.json"
    vocab = json.loads(path.read_text(encoding="utf-8"))
    learnt = len(vocab)
    # entries no merge produces: they make the vocabulary as large as the real one without changing a split
    vocab.update({f"unreached{i}</w>": learnt + i for i in range(FLAUBERT_VOCABULARY - learnt)})
    path.write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    return AutoTokenizer.from_pretrained(folder)


def plain_loop(model, tokenizer, pairs) -> list[tuple[float, float]]:
    """metric.py's loop: a forward pass of the full model per masked copy."""
    mask_id = tokenizer.mask_token_id
    out = []
    with torch.inference_mode():
        for _, p in pairs.iterrows():
            s1, s2 = (p.sent_more, p.sent_less) if p.stereo_antistereo == "stereo" else (p.sent_less, p.sent_more)
            ids1 = tokenizer.encode(s1.lower(), return_tensors="pt").to(model.device)
            ids2 = tokenizer.encode(s2.lower(), return_tensors="pt").to(model.device)
            t1, t2 = shared_positions(ids1[0].tolist(), ids2[0].tolist())
            sc = [0.0, 0.0]
            for i in range(1, len(t1) - 1):
                for k, (ids, t) in enumerate(((ids1, t1), (ids2, t2))):
                    masked = ids.clone()
                    masked[0, t[i]] = mask_id
                    logits = model(masked).logits[0, t[i]]
                    sc[k] += torch.log_softmax(logits.float(), dim=0)[ids[0, t[i]]].item()
            r1, r2 = round(sc[0], 3), round(sc[1], 3)
            out.append((r1, r2) if p.stereo_antistereo == "stereo" else (r2, r1))
    return out


SHAPES = {  # layers, hidden, vocabulary
    "small": (4, 256, 120_000),
    "bert-base": (12, 768, 120_000),
    "xlmr-base": (12, 768, 250_002),
}


def matmul_gflops(device: torch.device, n: int = 2048, reps: int = 10) -> float:
    """fp32 matrix-multiply rate, TF32 off as in the scorer's fp32 runs."""
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    for _ in range(2):
        a @ b
    sync(device)
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ b
    sync(device)
    return 2 * n**3 * reps / (time.perf_counter() - t0) / 1e9


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def flops_fast(model, tokenizer, pairs) -> float:
    """Arithmetic of the head-only path: the encoder over every masked copy, the head at one position each."""
    cfg = model.config
    h, layers, inter, vocab = cfg.hidden_size, cfg.num_hidden_layers, cfg.intermediate_size, cfg.vocab_size
    total = 0.0
    for _, p in pairs.iterrows():
        ids1 = tokenizer(p.sent_more.lower())["input_ids"]
        ids2 = tokenizer(p.sent_less.lower())["input_ids"]
        t1, _ = shared_positions(ids1, ids2)
        copies = max(0, len(t1) - 2)
        for L in (len(ids1), len(ids2)):
            per_layer = L * (8 * h * h + 4 * h * inter) + 4 * L * L * h
            total += copies * (layers * per_layer + 2 * h * h + 2 * h * vocab)
    return total


def robustness_passes(model, tokenizer, pairs, device, *, token_budget: int) -> None:
    """The robustness analysis's scoring as a job does it (plmfair.scoring.shared_load): the model loaded once,
    then a pass per masked-LM protocol; printed against one protocol's run (the load and nangia's pass)."""
    from transformers import AutoModelForMaskedLM

    from plmfair.scoring.protocols import family_protocols

    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        sync(device)
        t0 = time.perf_counter()
        loaded = AutoModelForMaskedLM.from_pretrained(folder).eval().to(device)
        sync(device)
        load = time.perf_counter() - t0
    scorer = MaskedLMScorer(loaded, tokenizer, name="bench", uncased=True, token_budget=token_budget)
    passes = {}
    for protocol in family_protocols("mlm"):
        sync(device)
        t0 = time.perf_counter()
        score_pairs(pairs, scorer, protocol=protocol)
        sync(device)
        passes[protocol] = time.perf_counter() - t0
    one, whole = load + passes["nangia"], load + sum(passes.values())
    print(f"robustness: load {load:.2f} s, then " + ", ".join(f"{p} {t:.2f} s" for p, t in passes.items()))
    print(
        f"robustness run ({len(passes)} passes, one load): {whole:.2f} s; one protocol's run (load + nangia): "
        f"{one:.2f} s; ratio {whole / one:.2f} (goal: at most {len(passes)}, the passes times one run; a protocol "
        f"that reads more tokens than nangia's masked copies costs more than one run)"
    )
    print(f"the same passes as separate runs, a load each: {len(passes) * load + sum(passes.values()):.2f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=200, help="first N French pairs (1677 = the whole set)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument(
        "--shape",
        choices=sorted(SHAPES),
        default="small",
        help="model shape preset; --layers/--hidden/--vocab override it",
    )
    ap.add_argument("--layers", type=int)
    ap.add_argument("--hidden", type=int)
    ap.add_argument("--vocab", type=int)
    ap.add_argument("--token-budget", type=int, default=8192)
    ap.add_argument(
        "--budgets",
        default="",
        help="comma-separated token budgets to time as well, each checked against --token-budget's scores",
    )
    ap.add_argument(
        "--tokenizer",
        choices=("wordpiece", "flaubert"),
        default="wordpiece",
        help="wordpiece: Rust-backed (mBERT's kind); flaubert: FlauBERT's Python tokenizer at its vocabulary's size",
    )
    ap.add_argument("--skip-plain", action="store_true", help="time only the fast path")
    ap.add_argument("--precision-effect", action="store_true", help="also compare bf16 with fp32 on the same pairs")
    ap.add_argument("--profile", action="store_true", help="print where the fast path spends its time (cProfile)")
    ap.add_argument(
        "--protocols",
        default="",
        help="comma-separated protocols (plmfair.scoring.protocols) to time on the same pairs beside nangia, "
        "e.g. aul,all_tokens",
    )
    ap.add_argument(
        "--robustness",
        action="store_true",
        help="time the robustness analysis's scoring: the model loaded once from disk, then every masked-LM "
        "protocol on the pairs, against one protocol's run (the same load, nangia alone)",
    )
    args = ap.parse_args()
    layers, hidden, vocab = SHAPES[args.shape]
    args.layers, args.hidden, args.vocab = args.layers or layers, args.hidden or hidden, args.vocab or vocab

    device = torch.device(args.device)
    torch.set_grad_enabled(False)
    pairs, source = french_pairs(args.pairs)
    from transformers import BertConfig, BertForMaskedLM

    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = tokenizer_for(args.tokenizer, pairs["sent_more"].tolist() + pairs["sent_less"].tolist(), tmp)
    torch.manual_seed(0)
    model = (
        BertForMaskedLM(
            BertConfig(
                vocab_size=args.vocab,
                hidden_size=args.hidden,
                num_hidden_layers=args.layers,
                num_attention_heads=max(1, args.hidden // 64),
                intermediate_size=4 * args.hidden,
                max_position_embeddings=512,
            )
        )
        .eval()
        .to(device)
    )
    print(
        f"device: {device} "
        f"({torch.cuda.get_device_name(device) if device.type == 'cuda' else f'{torch.get_num_threads()} threads'})"
    )
    print(
        f"model: BERT {args.layers} layers, hidden {args.hidden}, vocabulary {args.vocab:,}, "
        f"attention {model.config._attn_implementation}; tokenizer {type(tokenizer).__name__} "
        f"({len(tokenizer):,} entries); data: {len(pairs)} {source}"
    )
    n = 4096 if device.type == "cuda" else 2048
    peak = matmul_gflops(device, n=n)
    print(f"matrix-multiply rate (fp32 {n}x{n}): {peak:,.1f} GFLOP/s")
    flops = flops_fast(model, tokenizer, pairs)

    def fast(budget: int):
        sync(device)
        t0 = time.perf_counter()
        out = score_pairs(pairs, MaskedLMScorer(model, tokenizer, name="bench", uncased=True, token_budget=budget))
        sync(device)
        return out, time.perf_counter() - t0

    def report(label: str, t: float) -> None:
        print(
            f"{label:<34}{t:8.2f} s  {len(pairs) / t:9.2f} pairs/s  "
            f"{flops / t / 1e9:8.1f} GFLOP/s ({100 * flops / t / 1e9 / peak:.0f}% of the matmul rate)"
        )

    score_pairs(pairs.head(4), MaskedLMScorer(model, tokenizer, name="warm-up", uncased=True))
    fast_out, t_fast = fast(args.token_budget)
    report(f"plmfair (token budget {args.token_budget})", t_fast)
    for budget in (int(b) for b in args.budgets.split(",") if b):
        other, t = fast(budget)
        changed = int(
            (
                other[["sent_more_score", "sent_less_score"]].fillna(0)
                != fast_out[["sent_more_score", "sent_less_score"]].fillna(0)
            )
            .any(axis=1)
            .sum()
        )
        report(f"plmfair (token budget {budget})", t)
        print(f"  pairs whose rounded scores differ from budget {args.token_budget}'s: {changed}")
    for protocol in (p for p in args.protocols.split(",") if p):
        sync(device)
        t0 = time.perf_counter()
        other = score_pairs(
            pairs,
            MaskedLMScorer(model, tokenizer, name="bench", uncased=True, token_budget=args.token_budget),
            protocol=protocol,
        )
        sync(device)
        t = time.perf_counter() - t0
        units = int(other["n_masked_more"].sum() + other["n_masked_less"].sum())
        copies = int(fast_out["n_masked_more"].sum() + fast_out["n_masked_less"].sum())
        print(
            f"protocol {protocol:<25}{t:8.2f} s  {len(pairs) / t:9.2f} pairs/s  ({t_fast / t:.1f}x nangia's speed; "
            f"{units:,} tokens read where nangia reads {copies:,} masked copies)"
        )
    if args.robustness:
        robustness_passes(model, tokenizer, pairs, device, token_budget=args.token_budget)
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        fast(args.token_budget)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    if not args.skip_plain:
        sync(device)
        t0 = time.perf_counter()
        ref = plain_loop(model, tokenizer, pairs)
        sync(device)
        t_plain = time.perf_counter() - t0
        print(f"plain per-copy loop:       {t_plain:8.2f} s  {len(pairs) / t_plain:9.2f} pairs/s")
        print(f"speed-up: {t_plain / t_fast:.1f}x")
        # pairs the scorer skips (identical sentences) have no score to compare
        diff = max(
            max(abs(a - r[0]), abs(b - r[1]))
            for a, b, r, st in zip(
                fast_out.sent_more_score, fast_out.sent_less_score, ref, fast_out.status, strict=True
            )
            if st == "ok"
        )
        print(f"largest score difference against the plain loop: {diff:.4f}")
    if args.precision_effect:
        model16 = model.to(torch.bfloat16)
        out16 = score_pairs(
            pairs, MaskedLMScorer(model16, tokenizer, name="bench-bf16", uncased=True, token_budget=args.token_budget)
        )
        d = (
            (out16[["sent_more_score", "sent_less_score"]] - fast_out[["sent_more_score", "sent_less_score"]])
            .abs()
            .max()
            .max()
        )

        # a pair's outcome: more stereotyping sentence preferred (1), neutral (0), or not (-1)
        def outcome(df):
            return (df["sent_more_score"] > df["sent_less_score"]).astype(int) - (
                df["sent_more_score"] < df["sent_less_score"]
            ).astype(int)

        scored = (out16["status"] == "ok") & (fast_out["status"] == "ok")
        flips = int((outcome(out16)[scored] != outcome(fast_out)[scored]).sum())
        print(
            f"bf16 vs fp32: largest score difference {d:.3f}, outcomes flipped {flips} of {int(scored.sum())} "
            "scored pairs"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
