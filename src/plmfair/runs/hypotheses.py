"""A run's hypotheses: every test its tables mark, in one of two families, adjusted once for the whole run.

Each study names its hypotheses (:attr:`plmfair.studies.StudyHypotheses.questions`): its primary question per model
and data set, which together form the run's confirmatory family (Holm), and every other test it marks, the
secondary family (Benjamini-Yekutieli over the whole report); :func:`plmfair.multiplicity.decide_hypotheses`
adjusts them (:data:`plmfair.multiplicity.DECIDED_SCHEMA`). The tables, figures, the run record and
``plmfair show`` read their marks from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from plmfair.io.parquet import read_parquet
from plmfair.multiplicity import DECIDED_SCHEMA, HYPOTHESIS_SCHEMA, decide_hypotheses
from plmfair.studies import study_hypotheses


def run_hypotheses(files: Mapping[str, Sequence[str]], *, alpha: float) -> pd.DataFrame:
    """The hypotheses of a run from each study's result files (``files``: study -> paths,
    :func:`plmfair.plan.hypothesis_files`)."""
    frames = [
        study_hypotheses(study).questions({path: read_parquet(path) for path in paths})
        for study, paths in files.items()
    ]
    frames = [f for f in frames if len(f)]
    hypotheses = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(HYPOTHESIS_SCHEMA))
    return decide_hypotheses(hypotheses, alpha=alpha) if len(hypotheses) else pd.DataFrame(columns=list(DECIDED_SCHEMA))
