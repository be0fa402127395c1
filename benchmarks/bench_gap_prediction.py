"""Benchmark: MozArt gap prediction and answer scoring, timed as the scoring jobs time them.

Builds random-weight models of the papers' shapes with tokenizers trained on the MozArt
sentences (random weights give the same arithmetic as trained ones; the candidates are
meaningless), then runs the project's scorers on every MozArt sentence of the chosen
languages: the top-k whole-word predictions (mT5: single-word constrained beam search
with ``--beams`` beams) and the scores of every distinct answer. Time is measured with the
jobs' own stopwatch (CUDA synchronised at both ends), one language at a time.

    python benchmarks/bench_gap_prediction.py [--models tiny-mt5,mt5-base,mbert-base] [--beams 100] [--k 100]
        [--sentences N] [--device cpu|cuda] [--repeat 5] [--compare-answers] [--compare-single] [--no-generate]

Beside the seq2seq search it times what a user would write with transformers: ``generate`` with as
many beams and returned sequences, one sentence at a time (``--no-generate`` skips it). The search,
``generate`` and the one-sentence-per-batch search each take the fastest of ``--repeat`` runs.

Data: MozArt's four JSON-lines files from $PLMFAIR_SHARED_DATA or ../shared/data.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
from pathlib import Path

import pandas as pd
import torch
from shared_data import shared_file  # benchmarks/shared_data.py, beside this script

from plmfair.cloze.annotations import read_mozart_jsonl
from plmfair.cloze.scoring_job import cloze_sentences, distinct_answers, predict, score_answers
from plmfair.scoring import beam, scorer_class
from plmfair.scoring.loader import Stopwatch, device_name, pick_device
from plmfair.scoring.seq2seq import MAX_SPAN_PIECES
from plmfair_demo import build_tiny_model

REPO = Path(__file__).resolve().parents[1]
LANGS = ("en", "es", "de", "fr")

# kind of tokenizer, family, and the configuration overrides of the papers' models
SHAPES = {
    # the demo's tiny mT5 (random weights, its shape and vocabulary size): a CPU's case, where overhead,
    # not arithmetic, counts
    "tiny-mt5": ("mt5", "seq2seq", {}),
    # the demo's tiny GPT-2 (random weights): the causal left-context search on a CPU
    "tiny-gpt2": ("gpt2", "causal", {}),
    "mt5-base": (
        "mt5",
        "seq2seq",
        {
            "d_model": 768,
            "d_ff": 2048,
            "d_kv": 64,
            "num_layers": 12,
            "num_decoder_layers": 12,
            "num_heads": 12,
            "vocab_size": 250_112,
            "tie_word_embeddings": False,
        },
    ),
    "mbert-base": (
        "bert",
        "mlm",
        {
            "hidden_size": 768,
            "num_hidden_layers": 12,
            "num_attention_heads": 12,
            "intermediate_size": 3072,
            "vocab_size": 105_879,
        },
    ),
    "xlmr-base": (
        "xlmr",
        "mlm",
        {
            "hidden_size": 768,
            "num_hidden_layers": 12,
            "num_attention_heads": 12,
            "intermediate_size": 3072,
            "vocab_size": 250_002,
        },
    ),
}


def mozart(langs) -> pd.DataFrame:
    if shared_file("mozart", "en_data_with_annotations.jsonl") is not None:
        return pd.concat(
            [read_mozart_jsonl(shared_file("mozart", f"{lang}_data_with_annotations.jsonl"), lang) for lang in langs],
            ignore_index=True,
        )
    raise SystemExit("MozArt data not found: set PLMFAIR_SHARED_DATA to the folder holding mozart/")


def build(shape: str, texts: list[str], device: torch.device):
    """The tokenizer of a tiny model of the shape's kind and a random model of the full shape."""
    import transformers as tf

    kind, family, overrides = SHAPES[shape]
    # the demo's own shape (.test/config/config.yaml: vocabulary 1,000, the builder's default sizes), or
    # a small tokenizer for a model of a paper's shape
    sizes = {"vocab_size": 1000} if not overrides else {"vocab_size": 8000, "hidden_size": 32, "num_layers": 1}
    with tempfile.TemporaryDirectory() as tmp:
        build_tiny_model(kind, texts, tmp, **sizes)
        tokenizer = tf.AutoTokenizer.from_pretrained(tmp)
        config = tf.AutoConfig.from_pretrained(tmp)
    for key, value in overrides.items():
        setattr(config, key, value)
    auto = {"seq2seq": tf.AutoModelForSeq2SeqLM, "causal": tf.AutoModelForCausalLM}.get(family, tf.AutoModelForMaskedLM)
    torch.manual_seed(0)
    model = auto.from_config(config)
    if family == "seq2seq":  # one embedding table for encoder and decoder, as in mT5 (582M parameters)
        model.encoder.set_input_embeddings(model.shared)
        model.decoder.set_input_embeddings(model.shared)
    model = model.eval().to(device)
    return scorer_class(family)(model, tokenizer, name=shape, uncased=kind == "bert"), model


def generate_one_at_a_time(scorer, model, sentences: pd.DataFrame, *, beams: int) -> None:
    """What a user writes with transformers: ``generate`` with ``beams`` beams and as many sequences
    returned, one sentence at a time (unconstrained, at most as many new tokens as the search grows)."""
    for text in sentences["text"]:
        model.generate(
            **scorer._encode(text), num_beams=beams, num_return_sequences=beams, max_new_tokens=MAX_SPAN_PIECES + 2
        )


def best_of(repeat: int, device: torch.device, run, *args, **kwargs):
    """``run(*args, **kwargs)``'s result and the stopwatch of its fastest of ``repeat`` runs (the least
    disturbed by whatever else the machine did)."""
    best = None
    for _ in range(max(1, repeat)):
        with Stopwatch(device) as watch:
            result = run(*args, **kwargs)
        if best is None or watch.seconds < best.seconds:
            best = watch
    return result, best


def search_agreement(predicted: pd.DataFrame, reference: pd.DataFrame) -> str:
    """How the search's candidates compare with a reference search's: ranks and log-probabilities."""
    key = ["s_id", "rank"]
    both = predicted.merge(reference, on=key, suffixes=("", "_ref"), validate="one_to_one")
    same = int((both["candidate"] == both["candidate_ref"]).sum())
    diff = (both["logprob"] - both["logprob_ref"]).abs().max()
    return f"same candidate at {same} of {len(both)} ranks, largest log-prob difference {diff:.1e}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="mt5-base,mbert-base", help=f"comma-separated, of {sorted(SHAPES)}")
    ap.add_argument("--beams", type=int, default=100, help="beam width of the seq2seq search (MozArt: 100)")
    ap.add_argument("--k", type=int, default=100, help="candidates kept per sentence")
    ap.add_argument("--sentences", type=int, default=0, help="first N sentences per language (0: all)")
    ap.add_argument("--langs", default=",".join(LANGS))
    ap.add_argument("--device", default="auto")
    ap.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="time the search, generate and the one-per-batch search N times: the fastest (this 2-core "
        "machine's timings move by up to a fifth between runs)",
    )
    ap.add_argument(
        "--compare-answers",
        action="store_true",
        help="also score the answers one per forward pass, as before batching, and print the ratio",
    )
    ap.add_argument(
        "--no-generate",
        action="store_true",
        help="skip the baseline of transformers' generate one sentence at a time (seq2seq)",
    )
    ap.add_argument(
        "--compare-single",
        action="store_true",
        help="also run the search one sentence at a time (a batch of one), check it finds the same candidates",
    )
    ap.add_argument(
        "--compare-search",
        action="store_true",
        help="also run the beam search without its key-value cache (every step reruns every beam's "
        "whole sequence), check it finds the same candidates, and print the ratio",
    )
    args = ap.parse_args()

    device = pick_device(args.device)
    torch.set_grad_enabled(False)
    langs = args.langs.split(",")
    annotations = mozart(langs)
    texts = annotations["text"].drop_duplicates().str.replace("[MASK]", "", regex=False).tolist()
    print(f"device: {device_name(device)}")
    for shape in args.models.split(","):
        scorer, model = build(shape, texts, device)
        gc.freeze()  # as the loader does: the model's objects out of the collector's way
        n_params = sum(p.numel() for p in model.parameters())
        print(
            f"\n{shape}: {n_params / 1e6:,.0f}M parameters, family {scorer.family}, "
            f"{args.beams if scorer.family == 'seq2seq' else '-'} beams, k={args.k}"
        )
        predict(cloze_sentences(annotations, langs[0]).head(2), scorer, k=args.k, num_beams=args.beams)  # warm-up
        total_s = total_n = 0.0
        for lang in langs:
            sentences = cloze_sentences(annotations, lang)
            answers = distinct_answers(annotations, lang)
            if args.sentences:
                sentences = sentences.head(args.sentences)
                answers = answers[answers["s_id"].isin(sentences["s_id"])]
            predicted, pred = best_of(args.repeat, device, predict, sentences, scorer, k=args.k, num_beams=args.beams)
            with Stopwatch(device) as ans:
                score_answers(answers, scorer)
            total_s += pred.seconds + ans.seconds
            total_n += len(sentences)
            line = (
                f"  {lang}: {len(sentences)} sentences predicted in {pred.seconds:7.2f} s "
                f"({len(sentences) / pred.seconds:7.1f}/s); {len(answers)} answers scored in {ans.seconds:6.2f} s"
            )
            if scorer.family == "seq2seq" and not args.no_generate:
                _, gen = best_of(
                    args.repeat, device, generate_one_at_a_time, scorer, model, sentences, beams=args.beams
                )
                line += f", generate one at a time {gen.seconds:7.2f} s ({gen.seconds / pred.seconds:.1f}x)"
            if args.compare_single and scorer.family != "mlm":
                factor = beam.SEARCH_BUDGET_FACTOR
                beam.SEARCH_BUDGET_FACTOR = 0  # every sentence a batch of its own
                reference, single = best_of(
                    args.repeat, device, predict, sentences, scorer, k=args.k, num_beams=args.beams
                )
                beam.SEARCH_BUDGET_FACTOR = factor
                line += (
                    f", one sentence per batch {single.seconds:7.2f} s ({single.seconds / pred.seconds:.1f}x; "
                    f"{search_agreement(predicted, reference)})"
                )
            if args.compare_search and scorer.family != "mlm":
                scorer.beam_cache = False
                with Stopwatch(device) as rerun:
                    reference = predict(sentences, scorer, k=args.k, num_beams=args.beams)
                scorer.beam_cache = True
                line += (
                    f", without the cache {rerun.seconds:7.2f} s ({rerun.seconds / pred.seconds:.1f}x; "
                    f"{search_agreement(predicted, reference)})"
                )
            if args.compare_answers:  # the same answers one per forward pass (a token budget of 1)
                budget, scorer.token_budget = scorer.token_budget, 1
                with Stopwatch(device) as one:
                    score_answers(answers, scorer)
                scorer.token_budget = budget
                line += f", one at a time {one.seconds:6.2f} s ({one.seconds / ans.seconds:.1f}x)"
            print(line)
        print(
            f"  all: {int(total_n)} sentences, {total_s:.1f} s for predictions and answers "
            f"({total_n / total_s:.1f} sentences/s)"
        )
        del scorer, model
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
