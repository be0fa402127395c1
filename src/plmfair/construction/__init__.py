"""Cloze construction (MozArt's method) from multi-way parallel text, one module per stage:

- :mod:`~plmfair.construction.bitext`: multi-way corpora joined from bitexts on their pivot side;
- :mod:`~plmfair.construction.pos`: spaCy tokens and universal POS tags of every line;
- :mod:`~plmfair.construction.alignment`: Pharaoh files, eflomal, symmetrisation, streamed;
- :mod:`~plmfair.construction.alignment_quality`: AER against gold alignments;
- :mod:`~plmfair.construction.selection`: the filters and the POS-balanced sample of cloze items;
- :mod:`~plmfair.construction.answers`: annotation sheets and the human answers read back.

The rules of ``workflow/rules/cloze.smk`` run them in that order; the text files they read come
through :mod:`plmfair.corpus_text`.
"""
