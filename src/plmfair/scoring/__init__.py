"""Model scoring: masked LMs (:mod:`plmfair.scoring.mlm`) and seq2seq models (:mod:`plmfair.scoring.seq2seq`)."""
