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
from sklearn.manifold import TSNE
from threadpoolctl import threadpool_limits

from plmfair.cloze.schemas import TSNE_VECTORS_SCHEMA

TSNE_SCHEMA = {
    **{k: v for k, v in TSNE_VECTORS_SCHEMA.items() if k != "vector"},
    "x": "t-SNE coordinate 1 (projected per model and quadruple, the four languages together)",
    "y": "t-SNE coordinate 2",
}


def project(vectors: pd.DataFrame, *, perplexity: float, seed: int) -> pd.DataFrame:
    """2-D t-SNE coordinates of every prediction, one projection per (model, quadruple) with the four
    languages together (:data:`TSNE_SCHEMA`). The perplexity is capped below the number of points."""
    # scikit-learn is heavy: only the t-SNE job needs it
    parts = []
    for _, g in vectors.groupby(["model", "s_id"], sort=False):
        points = np.stack(g["vector"].to_numpy()).astype("float64")
        if len(points) < 3:
            xy = np.zeros((len(points), 2))
        else:
            tsne = TSNE(
                n_components=2,
                perplexity=min(float(perplexity), len(points) - 1.0),
                random_state=seed,
                init="pca",
                learning_rate="auto",
            )
            # one thread: Barnes-Hut's parallel sums add up in a varying order, and the maps must be
            # the same from run to run to the last bit
            with threadpool_limits(limits=1):
                xy = tsne.fit_transform(points)
        parts.append(g.drop(columns="vector").assign(x=xy[:, 0], y=xy[:, 1]))
    if not parts:
        return pd.DataFrame(columns=list(TSNE_SCHEMA))
    return pd.concat(parts, ignore_index=True)[list(TSNE_SCHEMA)]
