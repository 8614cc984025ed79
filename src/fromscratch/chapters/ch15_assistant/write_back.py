"""Merge, re-quantise, write back: a LoRA-tuned model as a GGUF file again (chapter 15).

:func:`merged_copy` folds every LoRA update into its weight (``W + (α/r) B A``); :func:`write_back` writes
the merged model with our GGUF writer in the source file's types (Q4_1 matrices, a Q8_0 embedding, F32
norms), so llama.cpp, ``gguf`` and ``transformers`` read it. The catch: a Q4_1 block rounds every number to
one of 16 levels ``d·q + m``, and an update much smaller than a step ``d`` rounds back to where it was.
:func:`surviving_update` counts, per wrapped weight, the update's entries below half a step and the
entries the file stores unchanged: why QLoRA (Dettmers et al. 2023) keeps the LoRA matrices apart, in
16 bits, beside the 4-bit weights, instead of merging them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import torch

from fromscratch.blocks.lora import lora_layers, merge_lora
from fromscratch.interop.gguf_llama import write_gguf_llama
from fromscratch.interop.quant import BLOCK, Q4_1_BYTES, dequantize_q4_1, quantize_q4_1
from fromscratch.models.llama import Llama
from fromscratch.tokenizers.bpe import BytePairEncoding
from fromscratch.tokenizers.chat import SMOLLM2_TEMPLATE


def merged_copy(model: Llama) -> Llama:
    """A copy of ``model`` with every LoRA layer merged into a plain ``nn.Linear`` (``model`` unchanged)."""
    return merge_lora(copy.deepcopy(model)).eval()


def write_back(path: str | Path, model: Llama, tokenizer: BytePairEncoding, *, name: str) -> Path:
    """Write ``model`` (merged: no LoRA layers) as a GGUF file laid out like SmolLM2's (Q4_1, Q8_0, F32)."""
    if lora_layers(model):
        raise ValueError("The model still has LoRA layers; write merged_copy(model) instead.")
    return write_gguf_llama(path, model, tokenizer, chat_template=SMOLLM2_TEMPLATE, name=name)


def q4_1(weight: torch.Tensor) -> torch.Tensor:
    """``weight`` as a Q4_1 file stores it: quantised and read back, same shape."""
    return dequantize_q4_1(quantize_q4_1(weight)).view(weight.shape)


def q4_1_levels(weight: torch.Tensor) -> torch.Tensor:
    """The 4-bit level ``q`` (0..15) a Q4_1 file stores for each number of ``weight``: ``(n_blocks, 32)``."""
    packed = quantize_q4_1(weight).view(-1, Q4_1_BYTES)[:, 4:]  # (n_blocks, 16)
    return torch.cat([packed & 0x0F, packed >> 4], dim=1)  # (n_blocks, 32): numbers j, then j + 16


@dataclass(frozen=True)
class Survival:
    """How much of a LoRA update a Q4_1 file keeps, over every wrapped weight."""

    entries: int  # numbers in the updated weights
    below_half_step: float  # share of update entries smaller than half their block's step d/2
    unchanged: float  # share of entries whose 4-bit level q in the file is the one it had before the update
    kept: float  # ‖Q(W + ΔW) - Q(W)‖ / ‖ΔW‖ projected on ΔW: the share of the update the file keeps


@torch.no_grad()
def surviving_update(model: Llama) -> Survival:
    """:class:`Survival` of the updates of ``model``'s LoRA layers (unmerged) under Q4_1."""
    layers = lora_layers(model).values()
    if not layers:
        raise ValueError("The model has no LoRA layers: nothing was updated.")
    below = unchanged = entries = 0
    along = norm = 0.0
    for layer in layers:
        w, delta = layer.base.weight.float().cpu(), layer.delta().float().cpu()  # (out, in) each
        new = w + delta
        blocks = new.view(-1, BLOCK)  # (n_blocks, 32)
        step = (blocks.amax(1, keepdim=True) - blocks.amin(1, keepdim=True)) / 15  # (n_blocks, 1): d
        below += int((delta.view(-1, BLOCK).abs() < step / 2).sum())
        moved = q4_1(new) - q4_1(w)  # (out, in): what the file's numbers moved by
        unchanged += int((q4_1_levels(new) == q4_1_levels(w)).sum())
        entries += w.numel()
        along += float((moved * delta).sum())
        norm += float((delta * delta).sum())
    return Survival(entries, below / entries, unchanged / entries, along / norm if norm else 0.0)


__all__ = ["Survival", "merged_copy", "q4_1", "q4_1_levels", "surviving_update", "write_back"]
