"""Benchmark: model loads and scoring time of finished runs, from their logs and Snakemake's
benchmark files.

For each run folder: the scoring jobs (CrowS-Pairs, cloze sets, t-SNE vectors), how many of them
loaded a model (the loader's "loaded <model> ... in X s" lines) and the seconds those loads took,
the jobs whose files another job of the model wrote (taken from the scoring cache), and the wall
time of all scoring jobs together (the sum of their benchmark files' seconds).

    python benchmarks/bench_loads.py RUN_DIR [RUN_DIR ...]

Run it on the same configuration before and after a change, e.g. the demo at two commits.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

LOADED = re.compile(r"loaded (\S+) \(.*\) on .* in ([0-9.]+) s")
SCORING_LOGS = {  # study: (log files, benchmark files) under results/
    "crows_pairs": ("logs/crows_pairs/*/*.log", "benchmarks/crows_pairs/*/*.tsv"),
    "cloze": ("logs/cloze/*/score_*.log", "benchmarks/cloze/*/score_*.tsv"),
    "t-SNE vectors": ("logs/cloze/*/tsne_*.log", "benchmarks/cloze/*/tsne_*.tsv"),
}


def run_figures(run: Path) -> list[dict]:
    rows = []
    for study, (logs, benchmarks) in SCORING_LOGS.items():
        texts = [p.read_text() for p in sorted((run / "results").glob(logs))]
        loads = [float(m.group(2)) for text in texts for m in LOADED.finditer(text)]
        seconds = sum(pd.read_csv(p, sep="\t")["s"].iloc[-1] for p in (run / "results").glob(benchmarks))
        # a run older than the loader's log line: every job loaded its model
        older = not loads and not any("scoring cache" in t for t in texts)
        rows.append(
            {
                "run": str(run),
                "jobs": study,
                "n": len(texts),
                "loads": f"{len(texts)} (one per job)" if older else len(loads),
                "load s": "" if older else round(sum(loads), 1),
                "taken from the cache": sum("taken from the scoring cache" in t for t in texts),
                "job s": round(seconds, 1),
            }
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="run folders (holding results/)")
    args = ap.parse_args()
    table = pd.DataFrame([row for run in args.runs for row in run_figures(run)])
    print(table.to_markdown(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
