"""Benchmark: plmfair's causal CrowS-Pairs scoring side by side with lm-evaluation-harness.

The same decoder-only model object (random weights in the shape of GPT-2 small, Qwen2.5-0.5B or
Qwen2.5-7B, with their real vocabulary sizes; a byte-level BPE tokenizer trained on the pairs), the same
CrowS-Pairs pairs (English revised and French, the real files when found), the same threads
and precision, in one run:

- plmfair: ``CausalLMScorer.score_sentences`` with the ``sentence_log_likelihood`` protocol,
  as the scoring job runs it (tokenisation, length-sorted batches under a token budget);
- lm-evaluation-harness: ``HFLM(...).loglikelihood`` on the requests its ``crows_pairs`` tasks
  build: one ``loglikelihood`` request per sentence, empty context (the model's prefix token,
  BOS or EOS, as context), the sentence as continuation.

It prints seconds, pairs/s, the ratio and the peak GPU memory per shape, the largest per-sentence
difference and the pairs whose outcome (more stereotyping preferred, neutral, less; both at full
precision) differs; ``--device cuda`` runs both tools on the GPU, ``--precision bf16`` makes the
model in bf16, and the ``qwen2.5-7b`` shape is Qwen2.5-7B's (7.6B parameters, a GPU's
case). ``--kernel-profile`` prints the operators that take the device's time (torch.profiler),
``--profile`` where plmfair's run spends its time (its timed run then under cProfile, which slows
the host: without it, no profiler runs in a timed run). ``--token-budget`` and ``--max-padding`` set
plmfair's batches; the share of the positions they compute that are padding is printed. Last, the
ceiling on what sharing prefixes through a key-value cache could save: the share of token positions
that repeat a prefix already computed.

    make bench-causal BENCH_ARGS="--pairs 200 --shapes gpt2,qwen2.5-0.5b"
    python benchmarks/bench_causal.py [--pairs N per language, 0 = all] [--threads 2] [--profile] [--kernel-profile]
        [--device cuda] [--precision bf16] [--shapes gpt2,qwen2.5-0.5b,qwen2.5-7b] [--token-budget N]
        [--max-padding 0.25]

lm-evaluation-harness is not a runtime dependency: ``make bench-causal`` installs it (the
``bench`` extra, pinned) into ``.venv-bench``, a virtual environment that sees the project's
own and adds only what lm-evaluation-harness needs on top.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

import torch
from shared_data import shared_file  # benchmarks/shared_data.py, beside this script

from plmfair.crows_pairs.reader import read_crows_pairs
from plmfair.scoring import CAUSAL_PROTOCOL
from plmfair.scoring.base import MinimalPair, default_token_budget
from plmfair.scoring.causal import CausalLMScorer
from plmfair_demo import build_tiny_model

REPO = Path(__file__).resolve().parents[1]
SETS = {
    "en": ("crows_pairs_EN_revised+210.csv", "inria"),
    "fr": ("crows_pairs_FR_languagearc_contribution+210.csv", "inria"),
}
SHAPES = {  # layers, hidden, heads, key-value heads, intermediate, vocabulary
    "tiny-gpt2": (2, 64, 2, 2, 128, 2000),  # GPT-2's kind at the trained tokenizer's vocabulary: a smoke run
    "gpt2": (12, 768, 12, 12, 3072, 50_257),
    "qwen2.5-0.5b": (24, 896, 14, 2, 4864, 151_936),
    "qwen2.5-7b": (28, 3584, 28, 4, 18944, 152_064),  # 7.6B parameters: a GPU's case, in bf16
}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
HARNESS_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def crows_pairs(n: int):
    """The English (revised) and French pairs with both sentences, the first ``n`` of each (0: all)."""
    import pandas as pd

    frames = []
    for lang, (name, fmt) in SETS.items():
        found = shared_file("crows_pairs", name)
        path, source = (found, "real") if found else (REPO / ".test" / "data" / f"crows_pairs_demo_{lang}.csv", "demo")
        df = read_crows_pairs(path, fmt=fmt if found else ("inria" if lang == "fr" else "nyu"), lang=lang)
        df = df.dropna(subset=["sent_more", "sent_less"])
        frames.append((df.head(n) if n else df).assign(source=source))
    return pd.concat(frames, ignore_index=True)


def build(shape: str, texts: list[str], out: Path, *, device: torch.device, precision: str):
    """The tokenizer (byte-level BPE trained on ``texts``: ids stay below the vocabulary size, so the head
    costs what the real one does) and a random model of ``shape`` with its real vocabulary size, made on
    ``device`` in ``precision``: one model object that both tools score with (a 7B model is not written
    to disk and read twice)."""
    import transformers as tf

    layers, hidden, heads, kv_heads, inter, vocab = SHAPES[shape]
    folder = build_tiny_model("gpt2", texts, out / shape, vocab_size=2000, max_length=1024)
    tokenizer = tf.AutoTokenizer.from_pretrained(folder)
    if shape.endswith("gpt2"):
        config = tf.GPT2Config(
            vocab_size=vocab,
            n_positions=1024,
            n_embd=hidden,
            n_layer=layers,
            n_head=heads,
            n_inner=inter,
            bos_token_id=tokenizer.eos_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
    else:
        config = tf.Qwen2Config(
            vocab_size=vocab,
            hidden_size=hidden,
            intermediate_size=inter,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=kv_heads,
            max_position_embeddings=1024,
            tie_word_embeddings=True,
            eos_token_id=tokenizer.eos_token_id,
        )
    torch.manual_seed(0)
    with torch.device(device):
        model = tf.AutoModelForCausalLM.from_config(config, dtype=DTYPES[precision])
    return tokenizer, model.eval()


def peak_gib(device: torch.device) -> float:
    """Peak GPU memory since the last reset, GiB (NaN on a CPU)."""
    return torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else float("nan")


def reset_peak(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


def synchronise(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def scorer_for(tokenizer, model, *, token_budget: int, max_padding: float | None) -> CausalLMScorer:
    scorer = CausalLMScorer(model, tokenizer, name="plmfair", token_budget=token_budget)
    if max_padding is not None:
        scorer.max_padding = max_padding
    return scorer


def plmfair_scores(
    scorer: CausalLMScorer, pairs, *, profile: cProfile.Profile | None = None
) -> tuple[list[float], float]:
    """Both sentences' scores of every pair, and the seconds they took; under ``profile`` when given (a
    profiler slows the host's Python, so a timed run without ``--profile`` has none)."""
    minimal = [
        MinimalPair(m, s, d == "stereo")
        for m, s, d in zip(pairs["sent_more"], pairs["sent_less"], pairs["stereo_antistereo"], strict=True)
    ]
    synchronise(scorer.device)
    start = time.perf_counter()
    if profile is not None:
        profile.enable()
    scores = scorer.score_sentences(minimal, protocol=CAUSAL_PROTOCOL, too_long="skip")
    if profile is not None:
        profile.disable()
    synchronise(scorer.device)
    seconds = time.perf_counter() - start
    return [x for s in scores for x in (s.more, s.less)], seconds


def padding_share(scorer: CausalLMScorer, pairs) -> tuple[float, int, int]:
    """The share of the positions plmfair's batches compute that are padding, with the positions and
    the batches: what the token budget and the padding cap cost in arithmetic (the same on any device)."""
    sentences = [s.ids for s in scorer.encode_sentences([*pairs["sent_more"], *pairs["sent_less"]])]
    batches = scorer.batches(sentences)
    computed = sum(max(len(sentences[i]) for i in idx) * len(idx) for idx in batches)
    real = sum(len(s) for s in sentences)
    return 1 - real / computed, computed, len(batches)


def harness_scores(tokenizer, model, pairs, *, batch_size: int) -> tuple[list[float], float]:
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=batch_size)  # the model object, as it is
    sentences = [x for m, s in zip(pairs["sent_more"], pairs["sent_less"], strict=True) for x in (m, s)]
    requests = [
        Instance(request_type="loglikelihood", doc={}, arguments=("", sentence), idx=i)
        for i, sentence in enumerate(sentences)
    ]
    synchronise(model.device)
    start = time.perf_counter()
    out = lm.loglikelihood(requests, disable_tqdm=True)
    synchronise(model.device)
    seconds = time.perf_counter() - start
    return [lp for lp, _ in out], seconds


def kernel_profile(scorer: CausalLMScorer, pairs) -> str:
    """plmfair's scoring of ``pairs`` once under torch.profiler: the operators by their own time on the
    device (the GPU's kernels; on a CPU, the CPU's)."""
    from torch.profiler import ProfilerActivity, profile

    cuda = scorer.device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        plmfair_scores(scorer, pairs)
    key = "self_cuda_time_total" if cuda else "self_cpu_time_total"
    return prof.key_averages().table(sort_by=key, row_limit=15, max_name_column_width=60)


def prefix_sharing_ceiling(tokenizer, pairs) -> str:
    """How much arithmetic a key-value cache over shared prefixes could save at most: the token
    positions both sentences of a pair share from the start, and those any two sentences share
    (a prefix trie over every sentence), as the speed-up if those positions cost nothing."""

    def ids(sentence: str) -> tuple[int, ...]:  # the prefix token, then the sentence, as both tools score it
        return (tokenizer.eos_token_id, *tokenizer(sentence, add_special_tokens=False)["input_ids"])

    total = in_pairs = 0
    trie: set[tuple[int, ...]] = set()
    for more, less in zip(pairs["sent_more"], pairs["sent_less"], strict=True):
        a, b = ids(more), ids(less)
        common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        total += len(a) + len(b)
        in_pairs += common
        trie.update(seq[:i] for seq in (a, b) for i in range(1, len(seq) + 1))
    return (
        f"{in_pairs / total:.1%} of the {total:,} token positions repeat the other sentence of their pair's prefix "
        f"(at most {total / (total - in_pairs):.2f}x from sharing them); {1 - len(trie) / total:.1%} repeat some "
        f"sentence's prefix (at most {total / len(trie):.2f}x)"
    )


def outcome(more: float, less: float) -> int:
    return (more > less) - (more < less)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=200, help="pairs per language (0: every English and French pair)")
    ap.add_argument("--shapes", default="gpt2,qwen2.5-0.5b", help=f"comma-separated, of {', '.join(SHAPES)}")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--device", default="cpu", help="cpu or cuda: both tools run on it")
    ap.add_argument("--precision", default="fp32", choices=sorted(DTYPES), help="both tools load the model in it")
    ap.add_argument(
        "--token-budget",
        type=int,
        default=0,
        help="plmfair's token budget (default: the scoring jobs' default for the device)",
    )
    ap.add_argument(
        "--max-padding",
        type=float,
        default=None,
        help="the padding a plmfair batch may add, a share of its width (default: the scoring jobs', "
        "plmfair.scoring.causal.MAX_PADDING)",
    )
    ap.add_argument("--harness-batch-size", type=int, default=32, help="lm-evaluation-harness's batch_size")
    ap.add_argument("--profile", action="store_true", help="where plmfair's run spends its time (cProfile)")
    ap.add_argument(
        "--kernel-profile",
        action="store_true",
        help="plmfair's run once more under torch.profiler: the operators that take the device's time",
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    budget = args.token_budget or default_token_budget(device.type, "causal")
    pairs = crows_pairs(args.pairs)
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {args.threads} threads"
    print(
        f"{len(pairs)} pairs ({', '.join(f'{k} {v}' for k, v in pairs.groupby('lang').size().items())}; "
        f"{'real' if (pairs['source'] == 'real').all() else 'demo'} CrowS-Pairs), {args.precision}, {where}, "
        f"plmfair token budget {budget}, lm-evaluation-harness batch size {args.harness_batch_size}"
    )
    texts = [t for col in ("sent_more", "sent_less") for t in pairs[col]]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape in [s for s in args.shapes.split(",") if s]:
            tokenizer, model = build(shape, texts, Path(tmp), device=device, precision=args.precision)
            scorer = scorer_for(tokenizer, model, token_budget=budget, max_padding=args.max_padding)
            # untimed warm-up of both (CUDA context, kernels chosen): neither pays it in its time
            plmfair_scores(scorer, pairs.head(8))
            harness_scores(tokenizer, model, pairs.head(8), batch_size=args.harness_batch_size)
            reset_peak(device)
            profile = cProfile.Profile() if args.profile else None
            ours, ours_s = plmfair_scores(scorer, pairs, profile=profile)
            ours_peak = peak_gib(device)
            reset_peak(device)
            theirs, theirs_s = harness_scores(tokenizer, model, pairs, batch_size=args.harness_batch_size)
            theirs_peak = peak_gib(device)
            diff = max(abs(a - b) for a, b in zip(ours, theirs, strict=True))
            flips = sum(
                outcome(ours[2 * i], ours[2 * i + 1]) != outcome(theirs[2 * i], theirs[2 * i + 1])
                for i in range(len(pairs))
            )
            rows.append((shape, ours_s, theirs_s, diff, flips, ours_peak, theirs_peak))
            if args.kernel_profile:
                print(f"\n{shape}: plmfair's run under torch.profiler (self device time, top 15)")
                print(kernel_profile(scorer, pairs))
            # the same tokenizer for every shape (below), so the same batches: counted with the last
            padding = padding_share(scorer, pairs)
            cap = scorer.max_padding
            del model, scorer
            reset_peak(device)
            if profile is not None:
                print(f"\n{shape}: where plmfair's {ours_s:.1f} s go (cumulative, top 12)")
                pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative").print_stats(12)
        # every shape's tokenizer is trained on the same texts with the same settings: count once
        ceiling = prefix_sharing_ceiling(tokenizer, pairs) if rows else None
    n = len(pairs)
    print(
        f"\n| model shape ({args.precision}, {where}) | plmfair | lm-evaluation-harness | ratio | peak GPU memory "
        "(plmfair / harness) | largest difference | outcomes differing |"
    )
    print("|---|---|---|---|---|---|---|")
    for shape, ours_s, theirs_s, diff, flips, ours_peak, theirs_peak in rows:
        memory = "- (a CPU)" if device.type != "cuda" else f"{ours_peak:.1f} / {theirs_peak:.1f} GiB"
        print(
            f"| {shape} | {ours_s:.2f} s ({n / ours_s:.1f} pairs/s) | {theirs_s:.2f} s ({n / theirs_s:.1f} pairs/s) "
            f"| {theirs_s / ours_s:.2f}x | {memory} | {diff:.4f} | {flips} of {n} |"
        )
    if rows:
        share, computed, batches = padding
        print(
            f"\nplmfair's batches (token budget {budget}, padding cap {cap:g} of a batch's width): {share:.1%} of "
            f"the {computed:,} positions computed are padding, in {batches} batches"
        )
    if ceiling:
        print(f"Shared prefixes (the same tokenizer for every shape): {ceiling}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
