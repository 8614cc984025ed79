"""The GGUF file format, read and written in the course's own code (chapter 15).

GGUF is llama.cpp's single-file format for a model: its hyperparameters, its tokenizer and every
weight, quantised or not. Version 3, all numbers little-endian:

1. **header**: the magic bytes ``GGUF``, a uint32 version, a uint64 count of tensors and one of
   metadata entries;
2. **metadata**: that many ``(key, type, value)`` entries; a key is a string (uint64 length, then
   UTF-8 bytes), the type a uint32 (:data:`VALUE_TYPES`: integers, floats, a bool, a string, or an
   array: uint32 item type, uint64 count, items), e.g. ``llama.block_count = 30`` or
   ``tokenizer.ggml.merges = ["Ġ t", ...]``;
3. **tensor table**: per tensor its name, uint32 number of dimensions, uint64 dimensions **innermost
   first** (a ``(V, e)`` matrix is listed ``[e, V]``), uint32 GGML type
   (:data:`~fromscratch.interop.quant.TYPES`) and uint64 offset into the data section;
4. **data**: from the next multiple of ``general.alignment`` (32) after the table, each tensor's
   bytes at its offset, rows of blocks (:mod:`fromscratch.interop.quant`).

:func:`read_gguf` returns a :class:`GGUFFile`: ``.metadata`` (a dict), ``.tensors`` (name ->
:class:`TensorInfo`) and ``.tensor(name)``, the weight dequantised to a float32 tensor in PyTorch's
order (outermost first). :func:`write_gguf` writes a file the other way (chapter 15's tiny stand-in
model); the ``gguf`` package reads both the same way (tests).
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from fromscratch.interop.quant import TYPE_NAMES, TYPES, dequantize, nbytes, quantize

MAGIC = b"GGUF"
VERSION = 3
ALIGNMENT = 32  # general.alignment's default
# GGUF's value types: number -> struct format (None: string 8, array 9)
VALUE_TYPES = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 8: None, 9: None}
VALUE_TYPES.update({10: "Q", 11: "q", 12: "d"})
STRING, ARRAY = 8, 9


@dataclass(frozen=True)
class TensorInfo:
    """One row of the tensor table."""

    name: str  # e.g. "blk.0.attn_q.weight"
    dims: tuple[int, ...]  # innermost first, as in the file: (e, V) for a (V, e) matrix
    type_name: str  # "F32", "F16", "Q4_1" or "Q8_0"
    offset: int  # bytes from the start of the data section

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape in PyTorch's order, outermost first: ``dims`` reversed."""
        return tuple(reversed(self.dims))

    @property
    def numel(self) -> int:
        return int(torch.Size(self.dims).numel())

    @property
    def nbytes(self) -> int:
        return nbytes(self.type_name, self.numel)


@dataclass
class GGUFFile:
    """A GGUF file read by :func:`read_gguf`: metadata, tensor table, and the bytes behind them."""

    version: int
    metadata: dict[str, Any]
    tensors: dict[str, TensorInfo]
    data: Tensor = field(repr=False)  # uint8 (bytes of the data section,)

    def raw(self, name: str) -> Tensor:
        """The bytes of tensor ``name`` as stored: uint8 ``(nbytes,)``."""
        if name not in self.tensors:
            known = ", ".join(list(self.tensors)[:3])
            raise KeyError(f"No tensor {name!r} in this file; it has {len(self.tensors)}: {known}, ...")
        info = self.tensors[name]
        return self.data[info.offset : info.offset + info.nbytes]

    def tensor(self, name: str) -> Tensor:
        """Tensor ``name`` dequantised to float32, in PyTorch's order: shape ``info.shape``."""
        raw = self.raw(name)
        info = self.tensors[name]
        return dequantize(raw, info.type_name).view(info.shape)


class _Reader:
    """Little-endian values from a buffer, left to right; a clear error where the file ends too soon."""

    def __init__(self, data: bytes | bytearray, path: Path) -> None:
        self.data, self.at, self.path = data, 0, path

    def _need(self, size: int) -> None:
        if self.at + size > len(self.data):
            raise ValueError(
                f"{self.path} ends at byte {len(self.data):,}, before the end of its header, metadata and "
                f"tensor table (byte {self.at + size:,} was needed): the file is cut short; fetch it again."
            )

    def take(self, fmt: str) -> Any:
        size = struct.calcsize("<" + fmt)
        self._need(size)
        (value,) = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += size
        return value

    def string(self) -> str:
        n = self.take("Q")
        self._need(n)
        text = bytes(self.data[self.at : self.at + n]).decode("utf-8")
        self.at += n
        return text

    def value(self, kind: int) -> Any:
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            item, count = self.take("I"), self.take("Q")
            return [self.value(item) for _ in range(count)]
        if kind not in VALUE_TYPES:
            raise ValueError(
                f"{self.path}: unknown metadata value type {kind} at byte {self.at}; not a GGUF v3 file?"
            )
        return self.take(VALUE_TYPES[kind])


def read_gguf(path: str | Path) -> GGUFFile:
    """Read a GGUF file (version 2 or 3): header, metadata, tensor table and the data section's bytes."""
    path = Path(path)
    data = bytearray(path.stat().st_size)  # the file, read once into one buffer the tensors then view
    with path.open("rb") as f:
        f.readinto(data)
    if data[:4] != MAGIC:
        raise ValueError(f"{path} is not a GGUF file: it starts with {bytes(data[:4])!r}, not {MAGIC!r}.")
    reader = _Reader(data, path)
    reader.at = 4
    version = reader.take("I")
    if version not in (2, 3):
        raise ValueError(f"{path} is GGUF version {version}; this reader knows versions 2 and 3.")
    n_tensors, n_entries = reader.take("Q"), reader.take("Q")
    metadata = {}
    for _ in range(n_entries):
        key = reader.string()
        metadata[key] = reader.value(reader.take("I"))
    tensors = {}
    for _ in range(n_tensors):
        name = reader.string()
        dims = tuple(reader.take("Q") for _ in range(reader.take("I")))
        kind, offset = reader.take("I"), reader.take("Q")
        if kind not in TYPE_NAMES:
            raise ValueError(
                f"{path}: tensor {name!r} has GGML type {kind}; this reader knows {', '.join(TYPES)}."
            )
        tensors[name] = TensorInfo(name, dims, TYPE_NAMES[kind], offset)
    alignment = metadata.get("general.alignment", ALIGNMENT)
    start = -(-reader.at // alignment) * alignment  # the next multiple of the alignment
    body = torch.frombuffer(data, dtype=torch.uint8)[start:]  # (bytes,): a view of the buffer, no copy
    for info in tensors.values():
        if info.offset + info.nbytes > body.numel():
            raise ValueError(
                f"{path}: tensor {info.name!r} needs bytes up to {start + info.offset + info.nbytes:,}, "
                f"but the file has {len(data):,}: it is cut short; fetch it again."
            )
    return GGUFFile(version, metadata, tensors, body)


# --- writing ---------------------------------------------------------------------------------------
def _pack_value(value: Any) -> tuple[int, bytes]:
    """``(type number, bytes)`` of one metadata value: bool, int (uint32 or int32; int64 when large),
    float (float32), str, or a list of one of those."""
    if isinstance(value, bool):
        return 7, struct.pack("<?", value)
    if isinstance(value, int):
        if 0 <= value < 2**32:
            return 4, struct.pack("<I", value)
        return (5, struct.pack("<i", value)) if -(2**31) <= value < 0 else (11, struct.pack("<q", value))
    if isinstance(value, float):
        return 6, struct.pack("<f", value)
    if isinstance(value, str):
        encoded = value.encode("utf-8")
        return STRING, struct.pack("<Q", len(encoded)) + encoded
    if isinstance(value, (list, tuple)) and value:
        packed = [_pack_value(v) for v in value]
        kinds = {kind for kind, _ in packed}
        if len(kinds) != 1:
            raise ValueError(f"a GGUF array holds one type; got types {sorted(kinds)} in {value[:5]!r}...")
        return ARRAY, struct.pack("<IQ", kinds.pop(), len(value)) + b"".join(p for _, p in packed)
    raise ValueError(f"Cannot store {type(value).__name__} {value!r} as GGUF metadata (an empty list?).")


def write_gguf(path: str | Path, metadata: dict[str, Any], tensors: dict[str, tuple[Tensor, str]]) -> Path:
    """Write a GGUF v3 file: ``metadata`` (key -> value) and ``tensors`` (name -> (float tensor, type
    name)), each quantised to its type (:func:`~fromscratch.interop.quant.quantize`). Written to a
    temporary file that is renamed into place, so a reader never sees half a file. Returns ``path``."""
    path = Path(path)
    head = [MAGIC, struct.pack("<IQQ", VERSION, len(tensors), len(metadata))]
    for key, value in metadata.items():
        kind, packed = _pack_value(value)
        head += [_pack_value(key)[1], struct.pack("<I", kind), packed]
    blobs, offset = [], 0
    for name, (values, type_name) in tensors.items():
        if type_name not in TYPES:
            raise ValueError(f"tensor {name!r}: type {type_name!r} is not one of {', '.join(TYPES)}.")
        per_block = TYPES[type_name][2]
        if values.shape[-1] % per_block:  # a block never spans two rows
            raise ValueError(
                f"tensor {name!r}: rows of {values.shape[-1]} numbers cannot be cut into {type_name}'s "
                f"blocks of {per_block}; store it as F32 or F16."
            )
        raw = quantize(values, type_name).numpy().tobytes()
        dims = tuple(reversed(values.shape))  # innermost first
        head += [_pack_value(name)[1], struct.pack(f"<I{len(dims)}Q", len(dims), *dims)]
        head.append(struct.pack("<IQ", TYPES[type_name][0], offset))
        padding = -len(raw) % ALIGNMENT  # every tensor starts aligned
        blobs += [raw, b"\0" * padding]
        offset += len(raw) + padding
    header = b"".join(head)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(header + b"\0" * (-len(header) % ALIGNMENT) + b"".join(blobs))
    os.replace(tmp, path)
    return path


__all__ = ["ALIGNMENT", "GGUFFile", "MAGIC", "TensorInfo", "VALUE_TYPES", "read_gguf", "write_gguf"]
