"""Hypotheses decided by hand for the tests of tables and figures: each row's test with the family and the
mark a test wants, in the columns of plmfair.multiplicity.DECIDED_SCHEMA."""

from __future__ import annotations

import pandas as pd

from plmfair.multiplicity import DECIDED_SCHEMA


def decided_for(frame: pd.DataFrame, families, significant, *, hypothesis: str = "hypothesis", alpha: float = 0.05):
    """Hypotheses deciding the tests of ``frame``'s rows (named by ``hypothesis``, made up when the frame has
    none): per row its family and whether it is significant; an untested row has no adjusted p."""
    n = len(frame)
    ids = frame[hypothesis] if hypothesis in frame else pd.Series([f"h{i}" for i in range(n)], index=frame.index)
    families, significant = list(families), list(significant)
    tested = [f in ("confirmatory", "secondary") for f in families]
    decided = pd.DataFrame(
        {
            "hypothesis": list(ids),
            "study": "s",
            "source": "f",
            "question": "q",
            "primary": [f == "confirmatory" for f in families],
            "p_value": [0.001 if s else 0.5 for s in significant],
            "p_min": [0.001 if t else 0.2 for t in tested],
            "size": float("nan"),
            "limit": "",
            "informative": [f != "uninformative" for f in families],
            "family": families,
            "procedure": [
                "Holm" if f == "confirmatory" else "Benjamini-Yekutieli" if t else ""
                for f, t in zip(families, tested, strict=True)
            ],
            "family_size": n,
            "threshold": 0.01,
            "p_adjusted": [
                (0.004 if s else 0.9) if t else float("nan") for s, t in zip(significant, tested, strict=True)
            ],
            "significant": significant,
            "nominal": False,
            "alpha": alpha,
        }
    )
    return decided[list(DECIDED_SCHEMA)], list(ids)
