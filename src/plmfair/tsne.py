"""t-SNE maps of each model's top predictions for sentence quadruples (MozArt's appendix B).

For each configured quadruple (an ``s_id`` shared by its four languages) a model predicts its
top-k whole words at the gap of every language's sentence (the study's own ``predict_gap``),
each prediction is represented by the model's last-layer vector of the word put in the gap
(:meth:`plmfair.scoring.base.Scorer.word_vectors`: the encoder's for masked and seq2seq
models, the decoder stack's for causal ones, averaged over the word's tokens), and the
predictions of the four languages are projected together with scikit-learn's TSNE (fixed
seed). The paper does not say which vector it took; a contextual vector of the word in its
sentence is the one that can place translations of a word near each other.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from plmfair.errors import DataError
from plmfair.text import normalise

TSNE_VECTORS_SCHEMA = {
    "model": "model short name",
    "s_id": "sentence id of the quadruple",
    "lang": "language of the sentence",
    "text": "the cloze sentence",
    "rank": "rank of the prediction (1 = highest scored)",
    "candidate": "predicted whole word",
    "logprob": "the model's log-probability of the candidate",
    "n_answers": "annotators of that language who gave this word as their answer (normalised as the metrics match)",
    "vector": "the model's last-layer vector of the candidate in the gap (mean over its tokens)",
}

TSNE_SCHEMA = {
    **{k: v for k, v in TSNE_VECTORS_SCHEMA.items() if k != "vector"},
    "x": "t-SNE coordinate 1 (projected per model and quadruple, the four languages together)",
    "y": "t-SNE coordinate 2",
}


def prediction_vectors(annotations: pd.DataFrame, scorer, *, model: str, s_ids, k: int,
                       num_beams: int | None = None) -> pd.DataFrame:
    """The top-``k`` predictions of every language's sentence of each quadruple, with their vectors
    (:data:`TSNE_VECTORS_SCHEMA`)."""
    norm = scorer.normaliser()
    rows = []
    for s_id in s_ids:
        sents = annotations.loc[annotations["s_id"] == str(s_id)].drop_duplicates("lang")
        if sents.empty:
            raise DataError(f"mozart.tsne.sentences: s_id {s_id!r} is not in the MozArt data; give s_ids of its sentences")
        for lang, text in zip(sents["lang"], sents["text"], strict=True):
            preds = scorer.predict_gap([text], k=k, num_beams=num_beams)[0]
            if not preds:
                continue
            vectors = scorer.word_vectors([(text, word) for word, _ in preds])
            given = annotations[(annotations["s_id"] == str(s_id)) & (annotations["lang"] == lang)
                                & (annotations["answer"] != "")]
            counts = given["answer"].map(lambda a: normalise(a, norm)).value_counts()
            for rank, ((word, logprob), vec) in enumerate(zip(preds, vectors, strict=True), start=1):
                rows.append({"model": model, "s_id": str(s_id), "lang": lang, "text": text, "rank": rank,
                             "candidate": word, "logprob": float(logprob),
                             "n_answers": int(counts.get(normalise(word, norm), 0)),
                             "vector": vec.astype("float32")})
    return pd.DataFrame(rows, columns=list(TSNE_VECTORS_SCHEMA))


def project(vectors: pd.DataFrame, *, perplexity: float = 30.0, seed: int = 0) -> pd.DataFrame:
    """2-D t-SNE coordinates of every prediction, one projection per (model, quadruple) with the four
    languages together (:data:`TSNE_SCHEMA`). The perplexity is capped below the number of points."""
    # scikit-learn is heavy: only the t-SNE job needs it
    from sklearn.manifold import TSNE
    from threadpoolctl import threadpool_limits

    parts = []
    for _, g in vectors.groupby(["model", "s_id"], sort=False):
        points = np.stack(g["vector"].to_numpy()).astype("float64")
        if len(points) < 3:
            xy = np.zeros((len(points), 2))
        else:
            tsne = TSNE(n_components=2, perplexity=min(float(perplexity), len(points) - 1.0), random_state=seed,
                        init="pca", learning_rate="auto")
            # one thread: Barnes-Hut's parallel sums add up in a varying order, and the maps must be
            # the same from run to run to the last bit
            with threadpool_limits(limits=1):
                xy = tsne.fit_transform(points)
        parts.append(g.drop(columns="vector").assign(x=xy[:, 0], y=xy[:, 1]))
    if not parts:
        return pd.DataFrame(columns=list(TSNE_SCHEMA))
    return pd.concat(parts, ignore_index=True)[list(TSNE_SCHEMA)]


def run_tsne_vectors(annotations: pd.DataFrame, spec, *, s_ids, k: int, num_beams: int | None, precision: str,
                     token_budget: int = 0, device: str = "auto", threads: int | None = None):
    """Load the model; return (prediction vectors, run metadata)."""
    # torch and transformers (through the loader): only the scoring job loads a model
    from plmfair.scoring.loader import load

    loaded = load(spec, device=device, precision=precision, threads=threads)
    scorer = loaded.scorer(token_budget=token_budget)
    with loaded.stopwatch() as watch:
        vectors = prediction_vectors(annotations, scorer, model=spec.name, s_ids=s_ids, k=k, num_beams=num_beams)
    return vectors, loaded.metadata(k=k, num_beams=num_beams, wall_time_s=round(watch.seconds, 3))
