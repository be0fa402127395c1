# CrowS-Pairs (study crows_pairs): the data sets' wildcard and what its rules read (crows_pairs.smk).
from plmfair.crows_pairs import plan as crows_pairs_plan

CROWS_SETS = crows_pairs_plan.crows_pairs_sets(config)
# its rules' own (not global: another study's {dataset} is not a CrowS-Pairs set)
CROWS_SET = _alternatives(CROWS_SETS)


def crows_pairs_scores(jobs):
    return [run["scores"] for run in crows_pairs_plan.crows_pairs_runs(jobs)]


def get_crows_pairs_inputs(w):
    """The data set's file, and the ingested data set it borrows directions from (direction_from)."""
    source = CROWS_SETS[w.dataset].get("direction_from")
    return {
        "raw": download(CROWS_SETS[w.dataset]),
        "reference": [crows_pairs_plan.crows_pairs_data_file(source)] if source else [],
    }


def robustness_inputs(runs):
    """Every per-pair file the robustness job reads (each run's own pass and its others)."""
    return [scoring["scores"] for run in runs for scoring in run["passes"]]


def exclusions_input(config):
    """The pair-exclusion file of the robustness analysis (a download), when one is configured."""
    entry = config["crows_pairs"]["robustness"].get("exclusions")
    return [download(entry)] if entry else []
