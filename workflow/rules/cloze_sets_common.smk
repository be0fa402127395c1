# Cloze sets, whichever study they belong to: the sets' wildcard and what the chain's rules read
# (cloze_sets.smk).
from plmfair.cloze import plan as cloze_plan


wildcard_constraints:
    cloze_set=_alternatives(cloze_plan.cloze_sets(config)),


@signed
def get_cloze_set_inputs(w):
    """A set's sentences and its human answers when it has them (plmfair.cloze.plan)."""
    return cloze_plan.cloze_set_inputs(config, w.cloze_set)


def get_cloze_set_scores(kind):
    """Every model's ``predictions`` or ``answer_scores`` file of a set, in the order of its models."""

    def files(w):
        return [run[kind] for run in cloze_plan.cloze_set_runs(config, w.cloze_set)]

    return files
