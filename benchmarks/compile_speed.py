"""Training throughput at the blog's generator size: ours, ours under ``torch.compile``, PyTorch's layer.

Setting G of ``throughput.py`` (e = 256, 8 heads, 12 blocks, t = 256, batch 32, 256 byte values; fp32,
post-norm, learned positions, no dropout), one AdamW training step on random bytes, three ways:

- **ours**: :class:`fromscratch.models.Generator` as ``train`` runs it (the fused attention path);
- **ours, compiled**: the same model through ``torch.compile`` (TorchInductor: on a CPU it writes C++
  and OpenMP loops and compiles them with the machine's compiler; on a GPU, Triton kernels);
- **PyTorch's layer**: ``nn.TransformerEncoder`` of ``nn.TransformerEncoderLayer`` (post-norm, ReLU,
  ``dim_feedforward = 4e``, ``is_causal``), with the same embeddings and output layer around it.

Tokens per second are the batch's tokens over the median step time after warm-up (the compiled model's
first steps compile it: that time is printed apart). One run of each, on the threads given; the load
average is printed beside the figures. ``--profile`` adds where the time of one eager step goes.

    flock /tmp/heavy.lock python benchmarks/compile_speed.py            # 2 threads, as on CI and Colab
    python benchmarks/compile_speed.py --quick                           # seconds: tiny sizes
"""

from __future__ import annotations

import argparse
import os
import time

import torch
from throughput import QUICK, SETTINGS, Setting, profile_step
from torch import nn

from fromscratch.models import Generator
from fromscratch.training.losses import next_token_loss
from fromscratch.utils import count_parameters, time_call


class TorchLayers(nn.Module):
    """PyTorch's own encoder layers as a causal language model, with our embeddings and output layer."""

    def __init__(self, s: Setting) -> None:
        super().__init__()
        self.token_embedding = nn.Embedding(s.vocab, s.emb)
        self.position_embedding = nn.Embedding(s.length, s.emb)
        layer = nn.TransformerEncoderLayer(
            s.emb, s.heads, dim_feedforward=4 * s.emb, dropout=0.0, batch_first=True, norm_first=False
        )
        self.blocks = nn.TransformerEncoder(layer, s.depth, enable_nested_tensor=False)
        self.to_logits = nn.Linear(s.emb, s.vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens (b, t)`` -> logits ``(b, t, V)``."""
        t = tokens.size(1)
        x = self.token_embedding(tokens) + self.position_embedding(torch.arange(t, device=tokens.device))
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=tokens.device)
        return self.to_logits(self.blocks(x, mask=mask, is_causal=True))


def make_step(model: nn.Module, tokens: torch.Tensor):
    """One AdamW training step of ``model`` (what ``loss_fn`` sees) on ``tokens (b, t + 1)``."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        next_token_loss(model, tokens).backward()
        optimizer.step()

    return step


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5, help="timed steps per model (the median is kept)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks the script runs")
    parser.add_argument("--profile", action="store_true", help="where one eager step of ours spends its time")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    s = (QUICK if args.quick else SETTINGS)[1]
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(
        f"torch {torch.__version__}, {device.type}, {args.threads} threads, setting {s}, "
        f"load average {os.getloadavg()[0]:.2f} at start",
        flush=True,
    )
    gen = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, s.vocab, (s.batch, s.length + 1), generator=gen).to(device)
    torch.manual_seed(0)
    ours = Generator(vocab_size=s.vocab, emb=s.emb, heads=s.heads, depth=s.depth, context=s.length).to(device)
    torch.manual_seed(0)
    theirs = TorchLayers(s).to(device)
    torch.manual_seed(0)
    compiled_twin = Generator(ours.config).to(device)
    contenders = {
        "ours": (ours, ours),
        "ours, compiled": (compiled_twin, torch.compile(compiled_twin)),
        "PyTorch's nn.TransformerEncoderLayer": (theirs, theirs),
    }
    rows = []
    for name, (module, runs) in contenders.items():
        step = make_step(runs, tokens)
        started = time.perf_counter()
        step()  # the first step: allocation, and for the compiled model the compilation
        first = time.perf_counter() - started
        seconds = time_call(step, repeats=args.repeats, warmup=2, statistic="median")
        rows.append((name, count_parameters(module), first, seconds, s.batch * s.length / seconds))
        print(f"  {name}: {seconds * 1000:,.0f} ms a step (first step {first:.1f} s)", flush=True)
    base = rows[0][4]
    print("\n| model | parameters | first step (s) | ms a step | tokens/s | tokens/s / ours' |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, params, first, seconds, rate in rows:
        print(
            f"| {name} | {params:,} | {first:.1f} | {seconds * 1000:,.0f} | {rate:,.0f} | {rate / base:.2f} |"
        )
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    if args.profile:
        eager = make_step(ours, tokens)
        profile_step(lambda _teaching: eager(), False, "ours, eager")


if __name__ == "__main__":
    main()
