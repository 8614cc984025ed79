"""Chapter 12's run: memory, half precision, checkpointing, many devices."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GoingBigRun:
    pass  # placeholder: chapter 12 fills in its sizes


GOING_BIG_RUNS = {"smoke": GoingBigRun(), "cpu": GoingBigRun(), "gpu": GoingBigRun()}
