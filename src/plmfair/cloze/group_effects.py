"""The annotator groups' effects as sizes: the crossed mixed model ``metric ~ group + (1|sentence) + (1|annotator)``
per model, language and metric, its group terms with their standard errors and no test (the gaps' permutation
tests carry the marks).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd

from plmfair.cloze.group_tests import METRICS, comparison_blocks
from plmfair.cloze.measures import TESTED, listed
from plmfair.stats.mixed_models import EFFECTS_COLUMNS, crossed_mixed_model, effects_rows

log = logging.getLogger(__name__)


GROUP_EFFECTS_SCHEMA = {
    "model": "model short name",
    "lang": "language, or 'all' (language then a fixed effect; sentences and annotators are (lang, id))",
    "metric": f"{listed(TESTED)} of each annotation",
    **EFFECTS_COLUMNS,
    "n_sentences": "sentences (random-intercept levels)",
    "n_annotators": "annotators (random-intercept levels)",
    "sentence_var": "variance of the random intercept per sentence",
    "annotator_var": "variance of the random intercept per annotator",
    "residual_var": "residual variance",
}


def group_effects(scores: pd.DataFrame, *, reference: str = "MN", metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """``metric ~ group + (1|sentence) + (1|annotator)`` per model, language (and all pooled, with
    language as a fixed effect) and metric: the group terms as effect sizes with their standard errors,
    no test (:data:`GROUP_EFFECTS_SCHEMA`; the gaps' permutation tests carry the marks)."""
    rows = []
    for model, lang, data in comparison_blocks(scores):
        data = data.assign(sentence=data["lang"] + ":" + data["s_id"], annotator=data["lang"] + ":" + data["u_id"])
        for metric in metrics:
            context = f"{model}/{lang}/{metric}"
            if reference not in set(data["group"]):
                log.warning("%s: no annotation of the reference group %s; no mixed model fitted", context, reference)
                continue
            formula = f"value ~ C(group, Treatment(reference='{reference}'))"
            refs = {"group": reference, "Intercept": reference}
            if lang == "all":
                formula += " + C(lang)"
                refs["lang"] = sorted(set(data["lang"]))[0]
                refs["Intercept"] = f"{reference}, {refs['lang']}"
            fit = crossed_mixed_model(
                data.assign(value=data[metric].astype(float)), formula, effects=("sentence", "annotator")
            )
            rows.append(
                effects_rows(fit, reference=refs, context=context).assign(
                    model=model,
                    lang=lang,
                    metric=metric,
                    n_obs=len(data),
                    n_sentences=data["sentence"].nunique(),
                    n_annotators=data["annotator"].nunique(),
                    sentence_var=fit.variances.get("sentence", np.nan),
                    annotator_var=fit.variances.get("annotator", np.nan),
                    residual_var=fit.variances.get("residual", np.nan),
                )
            )
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=list(GROUP_EFFECTS_SCHEMA))
    return out.reindex(columns=list(GROUP_EFFECTS_SCHEMA)).astype({"converged": bool})
