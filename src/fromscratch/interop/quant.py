"""Block quantisation as llama.cpp stores weights: Q8_0 and Q4_1 (chapter 15).

A quantised matrix is cut, row by row, into **blocks of 32 numbers**; each block keeps one or two
16-bit floats and 32 small integers, and a number is rebuilt from them by one multiply (and one add):

- **Q8_0** (34 bytes a block, 8.5 bits a number): a scale ``d`` (float16), then 32 signed bytes
  ``q``; ``x = d · q``. The quantiser picks ``d = max|x| / 127`` and ``q = round(x / d)``.
- **Q4_1** (20 bytes a block, 5 bits a number): a scale ``d`` and a minimum ``m`` (float16 each),
  then 16 bytes holding 32 unsigned 4-bit ``q`` in 0..15; ``x = d · q + m``. The **low** nibble of
  byte ``j`` is number ``j`` of the block, the **high** nibble is number ``j + 16``. The quantiser
  picks ``m = min x``, ``d = (max x - min x) / 15`` and ``q = round((x - m) / d)``.

The dequantisers compute in float32 exactly as the ``gguf`` package (llama.cpp's Python reader)
does, so their results are equal bit for bit; the quantisers follow its rounding too. They take and
give flat tensors: ``raw`` is ``uint8 (n_blocks · block bytes,)`` and values are ``float32 (n,)`` with
``n`` a multiple of 32; a caller reshapes (GGUF lists a matrix's dimensions innermost first).
"""

from __future__ import annotations

import torch
from torch import Tensor

BLOCK = 32  # numbers per block, for both formats
Q8_0_BYTES = 2 + BLOCK  # d (float16) + 32 int8
Q4_1_BYTES = 2 + 2 + BLOCK // 2  # d, m (float16) + 16 bytes of two nibbles each


def _blocks(raw: Tensor, block_bytes: int, name: str) -> Tensor:
    """``raw`` uint8 ``(n_blocks · block_bytes,)`` as ``(n_blocks, block_bytes)``; a clear error otherwise."""
    if raw.dtype != torch.uint8 or raw.dim() != 1:
        raise ValueError(f"{name} reads raw bytes: a flat uint8 tensor, got {raw.dtype} {tuple(raw.shape)}.")
    if raw.numel() % block_bytes:
        raise ValueError(
            f"{name} blocks are {block_bytes} bytes each, but {raw.numel():,} bytes is not a whole number "
            f"of blocks; the tensor's offset or type in the file table is wrong."
        )
    return raw.view(-1, block_bytes)  # (n_blocks, block_bytes)


def _half(columns: Tensor) -> Tensor:
    """Two bytes per row ``(n_blocks, 2)`` read as one little-endian float16, widened: ``(n_blocks, 1)``."""
    return columns.contiguous().view(torch.float16).float()  # (n_blocks, 1), exact


def dequantize_q8_0(raw: Tensor) -> Tensor:
    """Q8_0 bytes ``(n_blocks · 34,)`` -> float32 ``(n_blocks · 32,)``: ``x = d · q``."""
    blocks = _blocks(raw, Q8_0_BYTES, "Q8_0")  # (n_blocks, 34)
    d = _half(blocks[:, :2])  # (n_blocks, 1)
    q = blocks[:, 2:].contiguous().view(torch.int8).float()  # (n_blocks, 32)
    return (q * d).flatten()  # (n_blocks · 32,)


def dequantize_q4_1(raw: Tensor) -> Tensor:
    """Q4_1 bytes ``(n_blocks · 20,)`` -> float32 ``(n_blocks · 32,)``: ``x = d · q + m``."""
    blocks = _blocks(raw, Q4_1_BYTES, "Q4_1")  # (n_blocks, 20)
    d, m = _half(blocks[:, :2]), _half(blocks[:, 2:4])  # (n_blocks, 1) each
    packed = blocks[:, 4:]  # (n_blocks, 16): byte j holds numbers j (low nibble) and j + 16 (high)
    q = torch.cat([packed & 0x0F, packed >> 4], dim=1).float()  # (n_blocks, 32)
    return (d * q + m).flatten()  # (n_blocks · 32,)


def _as_blocks(x: Tensor, name: str) -> Tensor:
    """Values ``(n,)`` (any shape; flattened) as float32 ``(n / 32, 32)``; a clear error otherwise."""
    x = x.detach().float().flatten()
    if x.numel() % BLOCK:
        raise ValueError(
            f"{name} quantises blocks of {BLOCK} numbers; {x.numel():,} is not a multiple of it."
        )
    return x.view(-1, BLOCK)  # (n_blocks, 32)


def _round_half_away(x: Tensor) -> Tensor:
    """C's ``roundf``, halves away from zero (``torch.round`` sends them to the even neighbour), written
    as the ``gguf`` package writes it: ``sign(x) · (floor|x| + floor(2 · (|x| - floor|x|)))``."""
    a = x.abs()
    whole = torch.floor(a)
    return torch.sign(x) * (whole + torch.floor(2 * (a - whole)))


def quantize_q8_0(x: Tensor) -> Tensor:
    """float ``(n,)`` -> Q8_0 bytes uint8 ``(n / 32 · 34,)``: per block ``d = max|x| / 127``,
    ``q = round(x / d)``."""
    blocks = _as_blocks(x, "Q8_0")  # (n_blocks, 32)
    d = blocks.abs().amax(dim=1, keepdim=True) / 127  # (n_blocks, 1)
    inverse = torch.where(d == 0, torch.zeros_like(d), 1 / d)
    q = _round_half_away(blocks * inverse).to(torch.int8)  # (n_blocks, 32)
    d_bytes = d.half().view(torch.uint8)  # (n_blocks, 2)
    return torch.cat([d_bytes, q.view(torch.uint8)], dim=1).flatten()  # (n_blocks · 34,)


def quantize_q4_1(x: Tensor) -> Tensor:
    """float ``(n,)`` -> Q4_1 bytes uint8 ``(n / 32 · 20,)``: per block ``m = min``,
    ``d = (max - min) / 15``, ``q = round((x - m) / d)``."""
    blocks = _as_blocks(x, "Q4_1")  # (n_blocks, 32)
    low, high = blocks.amin(dim=1, keepdim=True), blocks.amax(dim=1, keepdim=True)  # (n_blocks, 1) each
    d = (high - low) / 15
    inverse = torch.where(d == 0, torch.zeros_like(d), 1 / d)
    q = torch.trunc((blocks - low) * inverse + 0.5).clamp(0, 15).to(torch.uint8)  # (n_blocks, 32)
    packed = q[:, :16] | (q[:, 16:] << 4)  # (n_blocks, 16): number j low, number j + 16 high
    header = torch.cat([d.half().view(torch.uint8), low.half().view(torch.uint8)], dim=1)  # (n_blocks, 4)
    return torch.cat([header, packed], dim=1).flatten()  # (n_blocks · 20,)


# GGML's type numbers (ggml.h) of the formats read here: name -> (number, bytes a block, numbers a block)
TYPES = {"F32": (0, 4, 1), "F16": (1, 2, 1), "Q4_1": (3, Q4_1_BYTES, BLOCK), "Q8_0": (8, Q8_0_BYTES, BLOCK)}
TYPE_NAMES = {number: name for name, (number, _, _) in TYPES.items()}


def nbytes(type_name: str, n: int) -> int:
    """Bytes that ``n`` numbers take in format ``type_name`` (``F32``, ``F16``, ``Q4_1``, ``Q8_0``)."""
    _, block_bytes, per_block = TYPES[type_name]
    return n // per_block * block_bytes


def dequantize(raw: Tensor, type_name: str) -> Tensor:
    """Raw bytes of one tensor in format ``type_name`` -> float32 ``(n,)``."""
    if type_name == "F32":
        return raw.view(torch.float32).clone()
    if type_name == "F16":
        return raw.view(torch.float16).float()
    if type_name == "Q4_1":
        return dequantize_q4_1(raw)
    if type_name == "Q8_0":
        return dequantize_q8_0(raw)
    raise ValueError(f"Tensors of type {type_name} are not read here; this module reads {', '.join(TYPES)}.")


def quantize(x: Tensor, type_name: str) -> Tensor:
    """float ``(n,)`` -> raw bytes uint8 in format ``type_name``: :func:`dequantize`'s inverse, with loss."""
    flat = x.detach().float().flatten()
    if type_name == "F32":
        return flat.clone().view(torch.uint8)
    if type_name == "F16":
        return flat.half().view(torch.uint8)
    if type_name == "Q4_1":
        return quantize_q4_1(flat)
    if type_name == "Q8_0":
        return quantize_q8_0(flat)
    raise ValueError(f"Tensors of type {type_name} are not written here; choose one of {', '.join(TYPES)}.")


__all__ = [
    "BLOCK",
    "Q4_1_BYTES",
    "Q8_0_BYTES",
    "TYPES",
    "TYPE_NAMES",
    "dequantize",
    "dequantize_q4_1",
    "dequantize_q8_0",
    "nbytes",
    "quantize",
    "quantize_q4_1",
    "quantize_q8_0",
]
