"""Training memory, estimated from a config and measured from autograd (chapter 12).

Training holds four things: the **parameters** (fp32), their **gradients**, the **optimiser state**
(AdamW: two fp32 moments per parameter) and the **activations**: the tensors the forward pass saves
for the backward pass. Only the activations grow with the batch ``b`` and the length ``t``; inside
each block the attention weights ``(b, h, t, t)`` grow with ``t²`` (the teaching path saves them;
the fused kernel of chapter 06 never stores them, keeping only ``(b, h, t)`` log-sum-exps).

:func:`estimate_memory` counts every saved tensor of our blocks from the config (the inventory is in
:func:`block_activations`); :func:`measure_activations` *measures* what autograd really keeps, with
``torch.autograd.graph.saved_tensors_hooks`` (every tensor saved for backward passes through the
hook; storages are counted once, parameters not at all), on any device. :func:`cuda_peak` reads
``torch.cuda.max_memory_allocated`` around a training step on a GPU. Whether a step fits a GPU is one
rule, :func:`fits`: the step's peak and the CUDA context within 80 % of the memory;
:func:`~fromscratch.training.fits.check_run`, which a chapter calls before a long run, asks it too
(``train`` itself checks nothing beforehand; it explains an out-of-memory error when one happens).

Shape legend: ``b`` batch, ``t`` length, ``n = b·t`` positions, ``e`` embedding, ``h`` heads,
``f = ff_mult·e`` the feed-forward width, ``V`` vocabulary.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from fromscratch.models import Classifier, ClassifierConfig, Generator, GeneratorConfig
from fromscratch.training.precision import Precision

CUDA_CONTEXT = 600 * 2**20  # bytes the CUDA context and cuBLAS/cuDNN workspaces hold before any tensor
T4_BYTES = 15 * 10**9  # a Colab T4's 15 GB
MARGIN = 0.8  # a run may plan on this share of a GPU's memory: the rest for the allocator's fragments
ATTENTION_PATHS = ("fast", "teaching")
MODELS = {GeneratorConfig: Generator, ClassifierConfig: Classifier}


def mib(n_bytes: float) -> str:
    """Bytes as a short string: ``"64.0 MiB"``, ``"1.50 GiB"``."""
    if n_bytes >= 2**30:
        return f"{n_bytes / 2**30:.2f} GiB"
    return f"{n_bytes / 2**20:.1f} MiB"


def attention_matrix_bytes(b: int, t: int, *, heads: int = 1, bytes_per_element: int = 4) -> int:
    """Bytes of ``b`` attention matrices of ``t x t`` scores for ``heads`` heads: ``b·h·t²·bytes``."""
    return b * heads * t * t * bytes_per_element


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes of one training step, by kind (see :func:`estimate_memory`)."""

    parameters: int  # the fp32 weights
    gradients: int  # one fp32 gradient per weight
    optimizer: int  # AdamW's two fp32 moments per weight
    weight_copies: int  # 16-bit copies of the matmul weights that autocast saves for the backward (0 in fp32)
    activations: int  # everything the forward pass saves for the backward (all blocks, embeddings, loss)
    per_block: int  # of which one block (without checkpointing; with it: the block's input only)
    scores: int  # of one block's activations without checkpointing: the (b, h, t, t) weights (teaching path)
    recompute: int  # with checkpointing: one block's activations, rebuilt during the backward pass
    parts: dict[str, int] = field(default_factory=dict, compare=False)  # one block's tensors, by name

    @property
    def total(self) -> int:
        """The peak of a training step: weights, gradients, optimiser, saved activations, recomputation."""
        states = self.parameters + self.gradients + self.optimizer  # what exists whatever the batch
        return states + self.weight_copies + self.activations + self.recompute

    def table(self) -> str:
        """A plain-text table of the parts and the total."""
        rows = [
            ("parameters", self.parameters),
            ("gradients", self.gradients),
            ("optimizer (AdamW)", self.optimizer),
            ("16-bit weight copies", self.weight_copies),
            ("activations", self.activations),
            ("  of which one block", self.per_block),
            ("  of which its t² scores", self.scores),
            ("recomputed block", self.recompute),
            ("total", self.total),
        ]
        return "\n".join(f"{name:<26}{mib(value):>12}" for name, value in rows)


def block_activations(
    n: int,
    b: int,
    t: int,
    emb: int,
    heads: int,
    ff: int,
    *,
    precision: str,
    attention: str,
    masked: bool,
    dropout: bool,
) -> dict[str, int]:
    """The tensors one :class:`~fromscratch.blocks.TransformerBlock` saves for backward, in bytes, by name.

    Found by listing what ``measure_activations`` sees: the matmuls' inputs (under autocast each
    linear layer casts its input to 16 bits and saves its own copy), queries/keys/values, the
    attention output, the two LayerNorms' fp32 inputs and statistics, the ReLU output, and with
    dropout its masks (``dropout`` tensors are saved in the activation dtype on the CPU).
    """
    half = Precision.named(precision).dtype is not None  # 16-bit autocast: matmuls in 2 bytes
    w = 2 if half else 4  # bytes of a matmul input or output
    parts = {
        "linear inputs (q, k, v)": (3 if half else 1) * n * emb * w,
        "queries, keys, values": 3 * n * emb * w,
        "attention output": n * emb * w,
        "layer norm inputs + stats": 2 * n * emb * 4 + 4 * n * 4,
        "feed-forward input": n * emb * w,
        "feed-forward hidden (relu)": n * ff * w,
    }
    if attention == "fast":
        parts["log-sum-exp (b, h, t)"] = b * heads * t * 4
        if masked:  # a padding mask: the output with fully masked rows zeroed is a copy, plus the masks
            parts["masked output copy"] = n * emb * w + 2 * n
    else:  # softmax output, and a masked copy of it when a mask is given; the mask itself
        parts["attention weights (b, h, t, t)"] = (2 if masked else 1) * b * heads * t * t * w
        if masked:
            parts["mask (t, t) bool"] = t * t + 2 * t
    if dropout:
        parts["dropout masks and outputs"] = 2 * n * emb * w + 2 * n * ff * w
    return parts


@functools.lru_cache(maxsize=256)
def weight_counts(config: GeneratorConfig | ClassifierConfig) -> tuple[int, int, int]:
    """(all parameters, weights of all linear layers, weights of the output layer) of the model
    ``config`` builds."""
    with torch.device("meta"):  # the real model's parameters, without allocating them
        model = MODELS[type(config)](config)
    n_params = sum(p.numel() for p in model.parameters())
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear))
    return n_params, linear, model.to_logits.weight.numel()


def estimate_memory(
    config: GeneratorConfig | ClassifierConfig,
    batch: int,
    length: int | None = None,
    *,
    precision: str = "fp32",
    checkpoint: bool | None = None,
    attention: str = "fast",
    masked: bool | None = None,
) -> MemoryEstimate:
    """Estimate the memory of one training step (AdamW) of the model ``config`` describes.

    batch, length: the batch ``b`` and sequence length ``t`` (default: the config's longest input).
    precision: "fp32", or "bf16"/"fp16" (16-bit autocast). checkpoint: recompute blocks in the
    backward pass (default: the config's ``checkpoint``). attention: "fast" (the fused kernel) or
    "teaching" (weights written out, ``attention=[]``). masked: a mask reaches the
    attention (default: a classifier with a ``pad_id``; a causal generator's teaching path builds
    one, its fast path asks the kernel for causal attention instead).
    """
    if type(config) not in MODELS:
        raise ValueError(
            f"config must be a GeneratorConfig or a ClassifierConfig, got {type(config).__name__}."
        )
    if attention not in ATTENTION_PATHS:
        raise ValueError(
            f"attention must be 'fast' (fused kernel) or 'teaching' (weights kept); got {attention!r}."
        )
    generator = isinstance(config, GeneratorConfig)
    t = length if length is not None else config.context
    checkpoint = config.checkpoint if checkpoint is None else checkpoint
    if masked is None:
        masked = (config.causal and attention == "teaching") if generator else config.pad_id is not None
    half = Precision.named(precision).dtype is not None  # raises for a name that is no precision
    n_params, linear, head = weight_counts(config)
    b, n, e = batch, batch * t, config.emb
    parts = block_activations(
        n,
        b,
        t,
        e,
        config.heads,
        config.ff_mult * e,
        precision=precision,
        attention=attention,
        masked=masked,
        dropout=config.dropout > 0,
    )
    block = sum(parts.values())
    kept = n * e * 4 if checkpoint else block  # checkpointing keeps each block's (fp32) input only
    outside = n * 8 + (n * e * 4 if config.dropout > 0 else 0)  # token ids; the embedding dropout mask
    if config.norm == "pre":
        outside += n * e * 4 + 2 * n * 4  # the final LayerNorm's input and statistics
    if generator:
        outside += n * e * (2 if half else 4)  # the output layer's input
        outside += n * config.vocab_size * 4  # log-softmax of the logits, saved by the loss (fp32)
    else:
        outside += n * e * 4  # the pooling's (fp32) input
    block_copies = 2 * (linear - head) // max(config.depth, 1) if half else 0  # one block's 16-bit weights
    copies = (2 * head if half else 0) + (0 if checkpoint else config.depth * block_copies)
    return MemoryEstimate(
        parameters=4 * n_params,
        gradients=4 * n_params,
        optimizer=8 * n_params,
        weight_copies=copies,
        activations=config.depth * kept + outside,
        per_block=kept,
        scores=parts.get("attention weights (b, h, t, t)", 0),
        recompute=(block + block_copies) if checkpoint else 0,
        parts=parts,
    )


@dataclass(frozen=True)
class SavedTensors:
    """What autograd kept for the backward pass: bytes, number of storages, and bytes by dtype."""

    bytes: int
    count: int
    by_dtype: dict[str, int]


def measure_activations(model: nn.Module, forward: Callable[[], torch.Tensor]) -> SavedTensors:
    """Run ``forward()`` (returning the loss) and count the tensors autograd saves for its backward.

    Every saved tensor passes through a ``saved_tensors_hooks`` pack hook; a storage shared by
    several saves (a weight and its transpose, an input used by three linear layers) counts once,
    and the parameters of ``model`` are left out: they exist whether or not we train. Works on
    every device; the graph is freed on return.
    """
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, tuple[int, str]] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in params:
            seen.setdefault(storage.data_ptr(), (storage.nbytes(), str(tensor.dtype).removeprefix("torch.")))
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        loss = forward()
    del loss
    by_dtype: Counter[str] = Counter()
    for nbytes, dtype in seen.values():
        by_dtype[dtype] += nbytes
    return SavedTensors(bytes=sum(by_dtype.values()), count=len(seen), by_dtype=dict(by_dtype))


def cuda_peak(step: Callable[[], None], device: torch.device | str = "cuda") -> int:
    """``torch.cuda.max_memory_allocated`` during ``step()`` (a forward and backward pass), in bytes."""
    if not torch.cuda.is_available():
        raise ValueError("cuda_peak needs a CUDA GPU; on the CPU use measure_activations.")
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    step()
    torch.cuda.synchronize(device)
    return torch.cuda.max_memory_allocated(device)


def step_peak(estimate: MemoryEstimate) -> int:
    """The peak of a training step: the estimate's total (the start of the backward pass), or the
    optimiser's step if that is more (weights, gradients, AdamW's moments and, on a GPU, one fp32
    temporary per weight: ``torch.optim.AdamW``'s multi-tensor update takes the moments' square roots)."""
    return max(estimate.total, estimate.parameters + 2 * estimate.gradients + estimate.optimizer)


def gpu_peak(estimate: MemoryEstimate | int) -> int:
    """Bytes a run needs on a GPU: the step's peak (:func:`step_peak`, or bytes) and the CUDA context."""
    return (step_peak(estimate) if isinstance(estimate, MemoryEstimate) else int(estimate)) + CUDA_CONTEXT


def fits(estimate: MemoryEstimate | int, device_bytes: float, *, margin: float = MARGIN) -> bool:
    """Does a run fit a GPU of ``device_bytes``? The course's one rule: its :func:`gpu_peak` (the step's
    peak and the CUDA context) takes at most ``margin`` (80 %) of them. ``estimate``: a
    :class:`MemoryEstimate`, or a step's peak in bytes. :func:`fromscratch.training.fits.check_fits`
    and ``train``'s own check (:func:`~fromscratch.training.fits.check_run`) ask this."""
    return gpu_peak(estimate) <= margin * device_bytes


__all__ = [
    "CUDA_CONTEXT",
    "MARGIN",
    "MemoryEstimate",
    "SavedTensors",
    "T4_BYTES",
    "attention_matrix_bytes",
    "block_activations",
    "cuda_peak",
    "estimate_memory",
    "fits",
    "gpu_peak",
    "measure_activations",
    "mib",
    "step_peak",
]
