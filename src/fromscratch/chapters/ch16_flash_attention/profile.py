"""Chapter 16's run: one head of attention, measured (memory, work, time) and drawn tile by tile."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class FlashRun:
    """The sizes of chapter 16's measurements and pictures; every tensor is ``(1, heads, t, head_dim)``."""

    picture_length: int  # t of the tile pictures (16.4, 16.5): a few blocks, readable cell by cell
    picture_block: int  # their block_q = block_k
    head_dim: int  # d of every measured q, k, v
    heads: int  # h of the timed comparison (16.7)
    block: int  # block_q = block_k of the measured tile loops (one tile of fp32 scores: 4·block² bytes)
    lengths: tuple[int, ...]  # t of the memory measurement, forward + backward, ours against naive (16.5)
    timing_length: int  # t of the timed comparison with naive attention and PyTorch's fused kernel (16.7)
    repeats: int  # timed calls per measurement (the median counts, after one warm-up call)
    kernel_length: int  # t of the Triton kernel's check (16.8); the interpreter on a CPU is slow
    kernel_block: int  # its block_q = block_k (a power of two, at least 16 on a GPU)


# smoke: small tensors, only to prove every cell runs (seconds)
SMOKE = FlashRun(
    picture_length=24,  # the pictures are the same in every profile
    picture_block=6,
    head_dim=32,
    heads=2,
    block=64,
    lengths=(128, 256, 512),
    timing_length=256,
    repeats=2,
    kernel_length=48,
    kernel_block=16,
)
# cpu: the head width of GPT-2 and Llama (64); naive attention's t x t tensors reach 0.2 GB at t = 4096
CPU = replace(
    SMOKE, head_dim=64, heads=4, block=128, lengths=(512, 1024, 2048, 4096), timing_length=1024, repeats=3
)
# gpu: t up to 16k (naive: 3 GB in fp32), and the kernel at full size
GPU = replace(
    CPU,
    lengths=(1024, 2048, 4096, 8192, 16384),
    timing_length=4096,
    repeats=10,
    kernel_length=4096,
    kernel_block=64,
)

RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}
