"""The t-SNE vectors job (torch): the top predictions of each sentence of the mapped quadruples with the
model's last-layer vector of each candidate in the gap; projected by :mod:`plmfair.cloze.tsne`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pandas as pd

from plmfair.cloze.schemas import TSNE_VECTORS_SCHEMA
from plmfair.errors import DataError
from plmfair.scoring.loader import load
from plmfair.text import normalise

if TYPE_CHECKING:
    from plmfair.scoring.base import Scorer
    from plmfair.scoring.loader import LoadedModel
    from plmfair.scoring.specs import ModelSpec


def prediction_vectors(
    annotations: pd.DataFrame, scorer: Scorer, *, model: str, s_ids: Iterable, k: int, num_beams: int | None = None
) -> pd.DataFrame:
    """The top-``k`` predictions of every language's sentence of each quadruple, with their vectors
    (:data:`TSNE_VECTORS_SCHEMA`)."""
    norm = scorer.normaliser()
    rows = []
    for s_id in s_ids:
        sents = annotations.loc[annotations["s_id"] == str(s_id)].drop_duplicates("lang")
        if sents.empty:
            raise DataError(
                f"mozart.tsne.sentences: s_id {s_id!r} is not in the MozArt data; give s_ids of its sentences"
            )
        for lang, text in zip(sents["lang"], sents["text"], strict=True):
            preds = scorer.predict_gap([text], k=k, num_beams=num_beams)[0]
            if not preds:
                continue
            vectors = scorer.word_vectors([(text, word) for word, _ in preds])
            given = annotations[
                (annotations["s_id"] == str(s_id)) & (annotations["lang"] == lang) & (annotations["answer"] != "")
            ]
            counts = given["answer"].map(lambda a: normalise(a, norm)).value_counts()
            for rank, ((word, logprob), vec) in enumerate(zip(preds, vectors, strict=True), start=1):
                rows.append(
                    {
                        "model": model,
                        "s_id": str(s_id),
                        "lang": lang,
                        "text": text,
                        "rank": rank,
                        "candidate": word,
                        "logprob": float(logprob),
                        "n_answers": int(counts.get(normalise(word, norm), 0)),
                        "vector": vec.astype("float32"),
                    }
                )
    return pd.DataFrame(rows, columns=list(TSNE_VECTORS_SCHEMA))


def run_tsne_vectors(
    annotations: pd.DataFrame,
    spec: ModelSpec,
    *,
    s_ids: Iterable,
    k: int,
    num_beams: int | None,
    precision: str,
    token_budget: int = 0,
    device: str = "auto",
    threads: int | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Load the model; return (prediction vectors, run metadata)."""
    # torch and transformers (through the loader): only the scoring job loads a model
    loaded = load(spec, device=device, precision=precision, threads=threads)
    return tsne_vectors(annotations, loaded, s_ids=s_ids, k=k, num_beams=num_beams, token_budget=token_budget)


def tsne_vectors(
    annotations: pd.DataFrame,
    loaded: LoadedModel,
    *,
    s_ids: Iterable,
    k: int,
    num_beams: int | None,
    token_budget: int = 0,
) -> tuple[pd.DataFrame, dict]:
    """With a model already loaded (:func:`plmfair.scoring.loader.load`): (prediction vectors, run
    metadata)."""
    scorer = loaded.scorer(token_budget=token_budget)
    with loaded.stopwatch() as watch:
        vectors = prediction_vectors(annotations, scorer, model=loaded.spec.name, s_ids=s_ids, k=k, num_beams=num_beams)
    return vectors, loaded.metadata(k=k, num_beams=num_beams, wall_time_s=round(watch.seconds, 3))
