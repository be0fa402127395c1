"""Cloze construction (MozArt's method) from multi-way parallel text, one module per stage:

- :mod:`~plmfair.cloze.construction.bitext`: multi-way corpora joined from bitexts on their pivot side;
- :mod:`~plmfair.cloze.construction.pos`: spaCy tokens and universal POS tags of every line;
- :mod:`~plmfair.cloze.construction.alignment`: Pharaoh files, eflomal, symmetrisation, streamed;
- :mod:`~plmfair.cloze.construction.alignment_quality`: AER against gold alignments;
- :mod:`~plmfair.cloze.construction.filters`: the filters, with the count each leaves;
- :mod:`~plmfair.cloze.construction.selection`: the POS-balanced sample of cloze items and their sentences;
- :mod:`~plmfair.cloze.construction.answers`: annotation sheets and the human answers read back;
- :mod:`~plmfair.cloze.construction.plan`: which corpora, languages, alignments and spaCy pipelines a
  configuration asks for (torch- and spaCy-free: the plan reads it).

The rules of ``workflow/rules/cloze.smk`` run them in that order; the text files they read come
through :mod:`plmfair.io.text_files`.
"""
