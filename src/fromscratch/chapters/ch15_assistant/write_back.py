"""Merge, re-quantise, write back: a LoRA-tuned model as a GGUF file again (chapter 15).

:func:`merged_copy` folds every LoRA update into its weight (``W + (α/r) B A``); :func:`write_back` writes
the merged model with our GGUF writer in the source file's types (Q4_1 matrices, a Q8_0 embedding, F32
norms), so llama.cpp, ``gguf`` and ``transformers`` read it. The catch: a Q4_1 block rounds every number to
one of 16 levels ``d·q + m``, and an update much smaller than a step ``d`` rounds back to where it was.
:func:`surviving_update` counts, per wrapped weight, the update's entries below half a step and the
entries the file stores unchanged: why QLoRA (Dettmers et al. 2023) keeps the LoRA matrices apart, in
16 bits, beside the 4-bit weights, instead of merging them. The same count in Q8_0 (``kind="Q8_0"``: 255
levels ``d·q`` a block, ``d = max|x|/127``, for a block symmetric about zero a step 2·127/15 ≈ 17 times
finer than Q4_1's) is the contrast: how much more of the update 8 bits keep.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import torch

from fromscratch.blocks.lora import lora_layers, merge_lora
from fromscratch.interop.gguf_llama import write_gguf_llama
from fromscratch.interop.quant import (
    BLOCK,
    Q4_1_BYTES,
    Q8_0_BYTES,
    dequantize_q4_1,
    dequantize_q8_0,
    quantize_q4_1,
    quantize_q8_0,
)
from fromscratch.models.llama import Llama
from fromscratch.tokenizers.bpe import BytePairEncoding
from fromscratch.tokenizers.chat import SMOLLM2_TEMPLATE


def merged_copy(model: Llama) -> Llama:
    """A copy of ``model`` with every LoRA layer merged into a plain ``nn.Linear`` (``model`` unchanged)."""
    return merge_lora(copy.deepcopy(model)).eval()


def write_back(
    path: str | Path, model: Llama, tokenizer: BytePairEncoding, *, name: str, matrix_type: str = "Q4_1"
) -> Path:
    """Write ``model`` (merged: no LoRA layers) as a GGUF file laid out like SmolLM2's (its matrices in
    ``matrix_type``, ``"Q4_1"`` as the source or ``"Q8_0"``; the embedding Q8_0, the norms F32)."""
    if lora_layers(model):
        raise ValueError("The model still has LoRA layers; write merged_copy(model) instead.")
    return write_gguf_llama(
        path, model, tokenizer, chat_template=SMOLLM2_TEMPLATE, name=name, matrix_type=matrix_type
    )


def q4_1(weight: torch.Tensor) -> torch.Tensor:
    """``weight`` as a Q4_1 file stores it: quantised and read back, same shape."""
    return dequantize_q4_1(quantize_q4_1(weight)).view(weight.shape)


def q4_1_levels(weight: torch.Tensor) -> torch.Tensor:
    """The 4-bit level ``q`` (0..15) a Q4_1 file stores for each number of ``weight``: ``(n_blocks, 32)``."""
    packed = quantize_q4_1(weight).view(-1, Q4_1_BYTES)[:, 4:]  # (n_blocks, 16)
    return torch.cat([packed & 0x0F, packed >> 4], dim=1)  # (n_blocks, 32): numbers j, then j + 16


def q8_0(weight: torch.Tensor) -> torch.Tensor:
    """``weight`` as a Q8_0 file stores it: quantised and read back, same shape."""
    return dequantize_q8_0(quantize_q8_0(weight)).view(weight.shape)


def q8_0_levels(weight: torch.Tensor) -> torch.Tensor:
    """The 8-bit level ``q`` (-127..127) a Q8_0 file stores for each number of ``weight``:
    ``(n_blocks, 32)``."""
    return quantize_q8_0(weight).view(-1, Q8_0_BYTES)[:, 2:].contiguous().view(torch.int8)


def _step(blocks: torch.Tensor, kind: str) -> torch.Tensor:
    """The step ``d`` between two levels of each block ``(n_blocks, 32)`` -> ``(n_blocks, 1)``."""
    if kind == "Q4_1":
        return (blocks.amax(1, keepdim=True) - blocks.amin(1, keepdim=True)) / 15
    return blocks.abs().amax(1, keepdim=True) / 127


KINDS = {"Q4_1": (q4_1, q4_1_levels), "Q8_0": (q8_0, q8_0_levels)}


@dataclass(frozen=True)
class Survival:
    """How much of a LoRA update a file of one block format keeps, over every wrapped weight."""

    entries: int  # numbers in the updated weights
    below_half_step: float  # share of update entries smaller than half their block's step d/2
    unchanged: float  # share of entries whose level q in the file is the one it had before the update
    kept: float  # (Q(W + ΔW) - Q(W)) projected on ΔW, over ‖ΔW‖²: the share of the update the file keeps
    kind: str = "Q4_1"  # the block format: "Q4_1" or "Q8_0"


@torch.no_grad()
def surviving_update(model: Llama, kind: str = "Q4_1") -> Survival:
    """:class:`Survival` of the updates of ``model``'s LoRA layers (unmerged) under ``kind`` (``"Q4_1"``,
    ``"Q8_0"``): the merged weight ``W + ΔW`` and ``W`` itself both quantised as the file would."""
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r}: pass one of {sorted(KINDS)}.")
    layers = lora_layers(model).values()
    if not layers:
        raise ValueError("The model has no LoRA layers: nothing was updated.")
    stored, levels = KINDS[kind]
    below = unchanged = entries = 0
    along = norm = 0.0
    for layer in layers:
        w, delta = layer.base.weight.float().cpu(), layer.delta().float().cpu()  # (out, in) each
        new = w + delta
        step = _step(new.view(-1, BLOCK), kind)  # (n_blocks, 1): d
        below += int((delta.view(-1, BLOCK).abs() < step / 2).sum())
        moved = stored(new) - stored(w)  # (out, in): what the file's numbers moved by
        unchanged += int((levels(new) == levels(w)).sum())
        entries += w.numel()
        along += float((moved * delta).sum())
        norm += float((delta * delta).sum())
    return Survival(entries, below / entries, unchanged / entries, along / norm if norm else 0.0, kind)


__all__ = [
    "KINDS",
    "Survival",
    "merged_copy",
    "q4_1",
    "q4_1_levels",
    "q8_0",
    "q8_0_levels",
    "surviving_update",
    "write_back",
]
