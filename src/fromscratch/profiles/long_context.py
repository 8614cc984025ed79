"""Chapter 11's run: KV cache, Transformer-XL, sparse attention, positions."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LongContextRun:
    pass  # placeholder: chapter 11 fills in its sizes


LONG_CONTEXT_RUNS = {"smoke": LongContextRun(), "cpu": LongContextRun(), "gpu": LongContextRun()}
