"""Chapter 15's pictures: what supervised fine-tuning scores.

- ``scored_text``: a tokenised conversation as text, every token the loss scores in ``⟦ ⟧``.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["scored_text"]


def scored_text(pieces: Sequence[str], scored: Sequence[bool]) -> str:
    """``pieces`` (token strings) joined, each scored one wrapped in ``⟦ ⟧``: ``"Hi⟦ there⟧"``."""
    if len(pieces) != len(scored):
        raise ValueError(f"one flag per token: got {len(pieces)} tokens and {len(scored)} flags.")
    return "".join(f"⟦{p}⟧" if s else p for p, s in zip(pieces, scored, strict=True))
