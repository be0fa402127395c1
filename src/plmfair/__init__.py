"""plmfair: fairness evaluation of pretrained language models across groups and languages.

The library holds every algorithm of the workflow; the Snakemake scripts only map
rule inputs, params and outputs onto one call here.
"""

__version__ = "0.1.0"
