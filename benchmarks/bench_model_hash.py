"""Benchmark: what checking a model by its content costs, at a given size of weights.

A model folder of ``--gb`` GB (a config.json and one weights file of random bytes) is written to a
temporary folder (``--dir``, default the system's), then timed with plmfair's own functions:

- the manifest job (:func:`plmfair.scoring.specs.folder_manifest`: every file hashed once);
- each scoring job's check before it loads the model (:func:`plmfair.scoring.specs.content_changes`:
  every file hashed again against the manifest);
- ``plmfair run``'s check of the folders a run scored (:func:`plmfair.runs.integrity.changed_models`:
  fingerprints only, no file read while nothing moved).

Each is printed with its seconds and GB/s and carried to a 7B model in bf16 (15.2 GB) at the rate
measured. With ``--cold`` the page cache is dropped before each hashing step (root only: it writes
/proc/sys/vm/drop_caches), so the disk's reading speed counts too; without it the file just written is
read from memory and the rate is the hashing alone.

    python benchmarks/bench_model_hash.py [--gb 2] [--dir /tmp] [--cold]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from plmfair.runs.integrity import changed_models
from plmfair.scoring.specs import content_changes, folder_manifest

SEVEN_B_BF16_GB = 15.2  # Qwen2.5-7B's safetensors, 7.6e9 parameters at 2 bytes
BLOCK = 64 * 1024 * 1024


def _write_model(folder: Path, gb: float) -> None:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    block = os.urandom(BLOCK)
    left = int(gb * 1e9)
    with open(folder / "model.safetensors", "wb") as fh:
        while left > 0:
            fh.write(block[: min(BLOCK, left)])
            left -= BLOCK
        fh.flush()
        os.fsync(fh.fileno())


def _drop_caches(cold: bool) -> str:
    if not cold:
        return "warm (page cache)"
    try:
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as exc:
        return f"warm: the page cache could not be dropped ({exc.strerror})"
    return "cold (page cache dropped)"


def _timed(step, *args, **kwargs):
    start = time.perf_counter()
    out = step(*args, **kwargs)
    return out, time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gb", type=float, default=2.0, help="size of the weights file, in GB (1e9 bytes)")
    ap.add_argument("--dir", default=None, help="where the model folder is written (a disk like the models')")
    ap.add_argument("--cold", action="store_true", help="drop the page cache before each hashing step (root)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        run = Path(tmp)
        folder = run / "model"
        _, written = _timed(_write_model, folder, args.gb)
        print(f"model folder of {args.gb:g} GB written in {written:.1f} s ({args.gb / written:.2f} GB/s) under {tmp}")
        cache = _drop_caches(args.cold)
        manifest, made = _timed(folder_manifest, folder)
        manifest["folder"] = "model"  # as a run's manifest names a folder of its own results
        (run / "results" / "manifests").mkdir(parents=True)
        (run / "results" / "manifests" / "m.json").write_text(json.dumps(manifest))
        rows = [("manifest job (every file hashed)", made, cache)]
        cache = _drop_caches(args.cold)
        changed, checked = _timed(content_changes, manifest, run=run)
        assert changed == [], changed
        rows.append(("scoring job's check (every file hashed again)", checked, cache))
        moved, looked = _timed(changed_models, run)
        assert moved == [], moved
        rows.append(("plmfair run's check (fingerprints)", looked, "no file read"))
        for step, seconds, how in rows[:2]:
            rate = args.gb / seconds
            print(
                f"  {step:<48} {seconds:8.3f} s  {rate:7.2f} GB/s  "
                f"7B bf16 ({SEVEN_B_BF16_GB} GB): {SEVEN_B_BF16_GB / rate:6.1f} s  [{how}]"
            )
        step, seconds, how = rows[2]
        print(f"  {step:<48} {seconds:8.3f} s  (whatever the size)  [{how}]")
        shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
