"""A constructed cloze set put before annotators: CSV sheets of its sentences, and their answers
(MozArt's JSONL format) read back and checked against the sentences.

Outputs: ``results/cloze/{corpus}/sheets/<lang>/batch_NNN.csv`` and
``results/data/{corpus}/annotations.parquet`` (:data:`plmfair.cloze.annotations.MOZART_SCHEMA`).
"""

from __future__ import annotations

import math
import os
import unicodedata
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from plmfair.cloze.annotations import mozart_frame, read_mozart_jsonl
from plmfair.errors import DataError
from plmfair.io.atomic import atomic_dir
from plmfair.io.parquet import write_csv


def write_annotation_sheets(sentences: pd.DataFrame, *, out_dir: str | os.PathLike, batch_size: int = 10) -> list[Path]:
    """CSV sheets of ``batch_size`` sentences for annotators, one folder per language
    (``<out_dir>/<lang>/batch_NNN.csv``): batch, s_id, lang, text, mask (left empty).

    Answers come back in the MozArt JSONL format (one line per annotator and sentence with
    s_id, text, mask, u_id and the demographic flags) and are read by :func:`ingest_answers`.
    """

    if sentences.empty:
        raise DataError("no constructed sentences to put on annotation sheets")
    out_dir = Path(out_dir)
    paths = []
    with atomic_dir(out_dir) as tmp:
        for lang, sents in sentences.groupby("lang", sort=False):
            sents = sents.reset_index(drop=True)
            for b in range(math.ceil(len(sents) / batch_size)):
                chunk = sents.iloc[b * batch_size : (b + 1) * batch_size]
                sheet = pd.DataFrame(
                    {"batch": b + 1, "s_id": chunk["s_id"], "lang": lang, "text": chunk["text"], "mask": ""}
                )
                name = Path(str(lang)) / f"batch_{b + 1:03d}.csv"
                (tmp / name).parent.mkdir(exist_ok=True)
                write_csv(sheet, tmp / name)
                paths.append(out_dir / name)
    return paths


def ingest_answers(sentences: pd.DataFrame, answer_files: Mapping[str, str | os.PathLike]) -> pd.DataFrame:
    """Answers in the MozArt JSONL format, per language, as an annotations table
    (:data:`plmfair.cloze.annotations.MOZART_SCHEMA`); every answer must be to a constructed sentence with its text."""

    frames = []
    for lang, path in answer_files.items():
        ann = read_mozart_jsonl(path, lang)
        ref = sentences[sentences["lang"] == lang].set_index("s_id")
        for s_id, text in zip(ann["s_id"], ann["text"], strict=True):
            if s_id not in ref.index:
                raise DataError(
                    f"{path}: s_id {s_id} is not a constructed {lang} sentence of this corpus "
                    f"(ids look like {ref.index[0] if len(ref) else '?'}); answers must use the s_id of the sheets"
                )
            if unicodedata.normalize("NFC", text) != unicodedata.normalize("NFC", ref.at[s_id, "text"]):
                raise DataError(
                    f"{path}: s_id {s_id} has text {text!r}, the constructed sentence is {ref.at[s_id, 'text']!r} "
                    f"(compared in Unicode NFC)"
                )
        ann["true_mask"] = ann["true_mask"].fillna(ann["s_id"].map(ref["true_mask"]))
        ann["tag"] = ann["tag"].fillna(ann["s_id"].map(ref["tag"]))
        frames.append(ann)
    return mozart_frame(pd.concat(frames, ignore_index=True).to_dict("records"))
