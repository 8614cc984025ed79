"""fromscratch: the shared code of the course *Transformers from Scratch*.

Modules, in the order the course teaches them: ``profiles`` (run sizes, ``setup``), ``data``
(datasets), ``recommend`` (ch. 01), ``masks`` and ``attention`` (ch. 02-04), ``blocks`` and
``models`` (ch. 05-07), ``losses`` and ``interop``, ``train`` and ``checkpoints``, ``metrics``,
``generate``, ``viz`` and ``exercises``. Small helpers every chapter uses (``evaluating``,
``count_parameters``, ``time_call``) live in ``utils``.
"""

from fromscratch.profiles import Profile, profile, setup

__version__ = "0.1.0"
__all__ = ["Profile", "profile", "setup", "__version__"]
