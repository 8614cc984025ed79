"""fromscratch: the shared code of the course *Transformers from Scratch*.

Its rooms (folders), bottom floor first; each imports only from the rooms below it (CONTRIBUTING.md's
"may import" table, checked by ``tests/test_imports.py``):

- ``attention`` (ch. 02-04, 11: attention, masks, positions, the KV cache), ``tokenizers`` (the one
  table of special ids, vocabularies, BPE) and ``utils`` (``evaluating``, ``count_parameters``,
  ``time_call``, ``loglog_slope``), the one module at the root;
- ``blocks`` (ch. 05: the transformer block and stack), ``data`` (the datasets, batching) and
  ``generate`` (ch. 07, 09: sampling and beam search);
- ``models`` (every model with its config, from chapter 01's recommender on);
- ``training`` (``train``, ``TrainConfig``, checkpoints, precision, memory), ``interop`` (weights to and
  from PyTorch and Hugging Face), ``metrics`` and ``viz``;
- ``profiles`` (smoke, cpu and gpu run sizes, ``setup``) and ``exercises`` (the checkers of each
  chapter's exercises);
- ``recipes`` (pipelines a chapter and a benchmark share; they take the profiles' runs).

This module itself only brings ``setup`` and the profile to the top: ``fromscratch.setup(seed=0)``.
"""

from fromscratch.profiles import Profile, profile, setup

__version__ = "0.1.0"
__all__ = ["Profile", "profile", "setup", "__version__"]
