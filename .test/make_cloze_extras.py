"""Write the demo's extra cloze files under .test/data/cloze/ (run once; outputs are committed).

- ``bi.<lang>-en.{en,<lang>}``: the demo corpus as three X-English bitexts, the way Europarl's
  releases come, with the quirks the bitext join must handle: the fr-en bitext in reverse
  order, a German line whose English is in no other bitext, an English line repeated in es-en
  with another translation (.test/config/bitext.yaml builds a cloze set from them); and
  ``bi.en-<lang>.align``, the demo's gold alignments of the lines the join keeps, in its order
  (so the set is deterministic; eflomal is measured by the demo's alignment-quality step).
- ``cloze_answers_<lang>.jsonl``: human answers, in MozArt's JSONL format, to the sentences the
  demo constructs from its corpus (``--sentences``: a demo run's
  results/cloze/demo/sentences.parquet): eight annotators per language, two per group, each
  answering every sentence; natives mostly give the masked word, non-natives less often.

    python .test/make_cloze_extras.py --sentences .test/results/cloze/demo/sentences.parquet
"""

import argparse
import json
import random
from pathlib import Path

import pandas as pd

OUT = Path(__file__).parent / "data" / "cloze"
GROUPS = [("M", True), ("F", True), ("M", False), ("F", False)]


def write_bitexts() -> None:
    side = {lang: (OUT / f"cloze_demo.{lang}").read_text(encoding="utf-8").splitlines() for lang in ("en", "de", "es", "fr")}
    bitexts = {
        "de": (side["en"] + ["An English line only here ."], side["de"] + ["Eine Zeile ."]),
        "es": (side["en"] + [side["en"][0]], side["es"] + ["Otra traducción ."]),
        "fr": (side["en"][::-1], side["fr"][::-1]),
    }
    for lang, (pivot, other) in bitexts.items():
        (OUT / f"bi.{lang}-en.en").write_text("\n".join(pivot) + "\n", encoding="utf-8")
        (OUT / f"bi.{lang}-en.{lang}").write_text("\n".join(other) + "\n", encoding="utf-8")
    # the join keeps each English line's first occurrence, in the first bitext's (the demo's) order
    first: dict[str, int] = {}
    for i, line in enumerate(side["en"]):
        first.setdefault(" ".join(line.split()), i)
    for lang in bitexts:
        gold = (OUT / f"cloze_demo.en-{lang}.align").read_text(encoding="utf-8").splitlines()
        kept = [gold[i] for i in sorted(first.values())]
        (OUT / f"bi.en-{lang}.align").write_text("\n".join(kept) + "\n", encoding="utf-8")


def write_answers(sentences: pd.DataFrame, rng: random.Random) -> None:
    for lang, sents in sentences.groupby("lang", sort=False):
        others = sorted(set(sents["true_mask"]))
        lines = []
        for k, (gender, native) in enumerate(GROUPS * 2):
            for s_id, text, word in zip(sents["s_id"], sents["text"], sents["true_mask"], strict=True):
                answer = word if rng.random() < (0.8 if native else 0.5) else rng.choice(others)
                lines.append(json.dumps({
                    "s_id": s_id, "text": text, "mask": answer, "u_id": f"{lang}{k + 1:02d}",
                    "male": int(gender == "M"), "female": int(gender == "F"),
                    "native": int(native), "nonnative": int(not native), "age": 20 + 3 * k,
                }, ensure_ascii=False))
        (OUT / f"cloze_answers_{lang}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=Path, required=True)
    args = parser.parse_args()
    write_bitexts()
    write_answers(pd.read_parquet(args.sentences), random.Random(2026))


if __name__ == "__main__":
    main()
