"""Significance tests and intervals used across the studies, one module per subject:

- :mod:`plmfair.stats.proportions`: a share's tests and intervals (exact binomial, Wilson, Clopper-Pearson,
  MOVER, Fisher, the cluster score test) and two conditions compared by win/loss on the same units;
- :mod:`plmfair.stats.paired`: paired proportions (Tango's score interval, the mid-p McNemar test, the paired
  change's test and its exact size);
- :mod:`plmfair.stats.agreement`: raters ranking the same items (Kendall's W and its conservative interval);
- :mod:`plmfair.stats.mixed_models`: crossed random-intercept models fitted as lme4 fits them;
- :mod:`plmfair.stats.permutation`: permutation p-values, the tests' attainable p and size, and the intervals
  that invert them;
- :mod:`plmfair.stats.buckets`: buckets of an attribute for the breakdowns.

Families and adjusted p-values are :mod:`plmfair.multiplicity`'s.
"""
