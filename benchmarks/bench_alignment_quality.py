"""Alignment quality of the eflomal step on the RWTH German-English gold set (Vilar et al. 2006).

    python benchmarks/bench_alignment_quality.py [--repeats 10] [--rel-iterations 1.0] [--samplers 3]

eflomal seeds its sampler from the system and has no seed option, so two runs differ: this runs
the workflow's alignment-quality function (plmfair.cloze.construction.alignment_quality) ``--repeats`` times on the
508 gold sentence pairs and prints, per symmetrisation, the mean AER, precision and recall with
their standard deviation over the runs. Run it at two commits to compare them (the AER of a change
that must not alter the links should agree within the runs' spread). Reads the gold set from
../shared/data (the local mirror); no corpus text is added (the Europarl bitexts are not available
offline).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from shared_data import shared_file

GOLD = "wmt06/gold_alignments/vilar2006_de-en_via_Cross-Align"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--rel-iterations", type=float, default=1.0)
    ap.add_argument("--samplers", type=int, default=3)
    args = ap.parse_args()
    from plmfair.cloze.construction.alignment_quality import alignment_quality_files

    root = shared_file(*GOLD.split("/"))
    if root is None:
        sys.exit(f"{GOLD}: the gold set is not in ../shared/data nor $PLMFAIR_SHARED_DATA (the local mirror)")
    gold = {
        "vilar2006": {
            "lang": "de",
            "format": "talp",
            "links_first": "de",
            "sentences": {"path": root / "test.de-en"},
            "links": {"path": root / "deen.talp"},
        }
    }
    runs = []
    t0 = time.perf_counter()
    for _ in range(args.repeats):
        quality, _ = alignment_quality_files(
            gold,
            corpus="vilar",
            pivot="en",
            eflomal_options={"rel_iterations": args.rel_iterations, "n_samplers": args.samplers},
        )
        runs.append(quality)
    seconds = (time.perf_counter() - t0) / args.repeats
    print(
        f"eflomal on the 508 RWTH de-en gold pairs, {args.repeats} runs (rel_iterations {args.rel_iterations}, "
        f"{args.samplers} samplers; {seconds:.1f} s a run)"
    )
    print(f"{'symmetrisation':<22} {'AER':>15} {'precision':>15} {'recall':>15}")
    for method in runs[0]["symmetrisation"]:
        cells = []
        for column in ("aer", "precision", "recall"):
            values = [float(q.loc[q["symmetrisation"] == method, column].iloc[0]) for q in runs]
            spread = statistics.stdev(values) if len(values) > 1 else 0.0
            cells.append(f"{statistics.mean(values):.4f} ± {spread:.4f}")
        print(f"{method:<22} " + " ".join(f"{c:>15}" for c in cells))


if __name__ == "__main__":
    main()
