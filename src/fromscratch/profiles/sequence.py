"""Chapter 08's run: recurrence, convolution and self-attention side by side."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SequenceRun:
    pass  # placeholder: chapter 08 fills in its sizes


SEQUENCE_RUNS = {"smoke": SequenceRun(), "cpu": SequenceRun(), "gpu": SequenceRun()}
