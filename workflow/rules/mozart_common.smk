# MozArt (study mozart): the ready-made tests' wildcard and what its rules read (mozart.smk).
from plmfair.cloze import plan as cloze_plan


wildcard_constraints:
    cloze_test=_alternatives(cloze_plan.cloze_tests(config)),


def get_cloze_test_archive(w):
    """The archive of a ready-made cloze test (datasets.cloze_tests)."""
    return download(cloze_plan.cloze_tests(config)[w.cloze_test])


def get_tsne_vectors(w):
    """The t-SNE vectors of every model mapped for a ready-made cloze test."""
    return [cloze_plan.set_file(w.cloze_set, f"tsne/{m}") for m in cloze_plan.tsne_models(config, w.cloze_set)]
