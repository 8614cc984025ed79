"""fromscratch: the shared code of the course *Transformers from Scratch*.

Its rooms (folders), bottom floor first; each imports only from the rooms below it (CONTRIBUTING.md's
"may import" table, checked by ``tests/test_imports.py``):

- ``attention`` (attention, masks, positions, the KV cache), ``tokenizers`` and ``utils``;
- ``blocks`` (the transformer block and stack), ``data`` (the datasets) and ``generate`` (sampling);
- ``models`` (one file per model family, each with its config);
- ``training`` (``train``, ``TrainConfig``), ``interop`` (weights to and from PyTorch and Hugging Face),
  ``metrics`` and ``viz`` (the shared plots);
- ``chapters``: ``setup()``, the profile, and one folder per chapter with what belongs to it alone.

This module only brings ``setup`` and the profile to the top: ``fromscratch.setup(seed=0)``. It imports
them when first asked for, so ``import fromscratch.training`` needs no more than torch and numpy.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    """``setup``, ``profile`` and ``Profile`` from ``fromscratch.chapters``, imported on first use."""
    if name in ("Profile", "profile", "setup"):
        import fromscratch.chapters

        return getattr(fromscratch.chapters, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Profile", "profile", "setup", "__version__"]
