"""The data summary: what is in each data set."""

from plmfair.cloze.annotations import read_mozart_zip
from plmfair.crows_pairs.reader import read_crows_pairs
from plmfair.runs.data_summary import data_summary

LANGS = ["en", "es", "de", "fr"]


def test_data_summary_counts(demo_data):
    moz = read_mozart_zip(demo_data / "MozArt.zip", LANGS)
    fr = read_crows_pairs(demo_data / "crows_pairs_demo_fr.csv", fmt="inria", lang="fr")
    s = data_summary({"mozart": {"mozart": moz}, "crows_pairs": {"demo_fr": fr}})
    get = s.set_index(["dataset", "subset", "statistic"])["value"]
    assert get[("mozart", "en", "annotations")] == 48
    assert get[("mozart", "en", "annotators")] == 8
    assert get[("mozart", "en", "annotations_MN")] == 12
    en = moz[moz["lang"] == "en"]
    assert get[("mozart", "en", "distinct_answers")] == en["answer"].str.lower().nunique()
    assert get[("crows_pairs/demo_fr", "fr", "pairs")] == len(fr)
    assert get[("crows_pairs/demo_fr", "fr", "pairs_stereo")] + get[
        ("crows_pairs/demo_fr", "fr", "pairs_antistereo")
    ] == len(fr)
