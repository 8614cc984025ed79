"""The real models chapter 18 looks inside: stories260K (llama2.c, 5 x 8 heads) and SmolLM2-135M-Instruct
(30 x 9 heads), both in the course's Llama, each with its tokenizer behind one small interface."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from fromscratch.interp import repeated_tokens
from fromscratch.models import Llama
from fromscratch.tokenizers.sentencepiece import SP_BOS

__all__ = ["Subject", "load", "names_task", "repeated"]


@dataclass
class Subject:
    """A pretrained model and how to talk to it: ``encode(text)`` -> ids (with the BOS it expects),
    ``decode(ids)`` -> text; ``skip`` leading tokens (a BOS) before any text; ``low``: the first id of an
    ordinary token (random text is drawn from ``low .. V - 1``)."""

    name: str
    model: Llama
    encode: Callable[[str], list[int]]
    decode: Callable[[list[int]], str]
    skip: int
    low: int

    @property
    def shape(self) -> tuple[int, int]:
        """(layers, heads)."""
        return self.model.config.depth, self.model.config.heads

    def tokens(self, text: str) -> Tensor:
        return torch.tensor([self.encode(text)])  # (1, t)


def load(name: str) -> Subject:
    """``"stories260K"`` or ``"SmolLM2-135M-Instruct"``, in eval mode, from the data cache."""
    if name == "stories260K":
        from fromscratch.interop import load_tinyllama

        model, tokenizer = load_tinyllama("stories260K")
        return Subject(
            name, model.eval(), lambda text: tokenizer.encode(text, bos=True), tokenizer.decode, 1, 3
        )
    if name == "SmolLM2-135M-Instruct":
        from fromscratch.interop import load_smollm2

        model, tokenizer = load_smollm2()
        low = max(tokenizer.special.values()) + 1  # SmolLM2's special tokens come first
        return Subject(name, model.eval(), tokenizer.encode, tokenizer.decode, 0, low)
    raise ValueError(f"no subject {name!r}: pick 'stories260K' or 'SmolLM2-135M-Instruct'.")


def repeated(subject: Subject, batch: int, period: int, seed: int = 0) -> Tensor:
    """``batch`` rows of ``period`` random ordinary tokens twice, after the BOS if the model takes one:
    ``(batch, skip + 2 · period)``."""
    generator = torch.Generator().manual_seed(seed)
    rows = repeated_tokens(
        batch, period, subject.model.config.vocab_size, low=subject.low, generator=generator
    )
    if subject.skip:  # stories260K: one BOS
        rows = torch.cat([torch.full((batch, 1), SP_BOS), rows], dim=1)  # llama2.c's BOS first
    return rows


def names_task(subject: Subject, first: str, second: str) -> tuple[Tensor, Tensor, int, int]:
    """Which name comes back: the clean prompt "When A and B went to the park, B gave the ball to" asks
    for A; the corrupted one, with A where the second B was, asks for B. Returns ``(clean (1, t),
    corrupted (1, t), right, wrong)``: the ids of A and B, which must each be one token."""
    template = "When {a} and {b} went to the park, {c} gave the ball to"
    clean = subject.tokens(template.format(a=first, b=second, c=second))  # (1, t)
    corrupted = subject.tokens(template.format(a=first, b=second, c=first))  # (1, t)
    differ = (clean != corrupted).nonzero()[:, 1].tolist() if clean.shape == corrupted.shape else []
    if len(differ) != 1:
        raise ValueError(
            f"{subject.name} does not spell {first!r} and {second!r} as one token each; pick other names."
        )
    return clean, corrupted, int(corrupted[0, differ[0]]), int(clean[0, differ[0]])
