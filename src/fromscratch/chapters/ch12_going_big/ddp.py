"""Chapter 12's data-parallel demonstration, run under ``torchrun`` (two processes in the chapter).

``torchrun --nproc_per_node 2 -m fromscratch.chapters.ch12_going_big.ddp [emb depth context batch steps]``
(or ``fromscratch.training.distributed.launch(["-m", "fromscratch.chapters.ch12_going_big.ddp", ...])``):
DDP's all-reduced gradients equal one process's on the whole batch, then the course's ``train`` runs
data-parallel.
Everything runs on the device :func:`~fromscratch.training.distributed.init` returns: one GPU per process
(nccl) where the machine has enough, else the CPU (gloo), e.g. on a laptop or on Colab's one GPU.
"""

from __future__ import annotations

import sys
import time

import torch
import torch.distributed as dist

from fromscratch.models import Generator
from fromscratch.training import TrainConfig, distributed, train
from fromscratch.training.losses import next_token_loss


def demo(emb: int = 32, depth: int = 2, context: int = 32, batch: int = 8, steps: int = 5) -> None:
    """Under torchrun: DDP's all-reduced gradients equal one process's on the whole batch; a timed `train`.

    Rank ``r`` takes sequences ``r, r + world, ...`` of one batch; rank 0 also runs the whole batch
    alone and prints the largest difference between the gradients, then every rank trains ``steps``
    steps on its own random stream and rank 0 prints the time per step.
    """
    device = distributed.init()
    world, me = distributed.world_size(), distributed.rank()
    tokens = torch.randint(0, 256, (batch, context + 1), generator=torch.Generator().manual_seed(0))
    tokens = tokens.to(device)  # (b, t + 1)
    torch.manual_seed(0)
    model = Generator(vocab_size=256, emb=emb, heads=4, depth=depth, context=context).to(device)
    net = distributed.wrap(model, device)  # keep it: its hooks all-reduce the gradients during backward()
    next_token_loss(net, tokens[me::world]).backward()  # gradients averaged over the ranks
    grads = torch.cat([p.grad.flatten() for p in model.parameters()])
    everyone = [torch.zeros_like(grads) for _ in range(world)]
    dist.all_gather(everyone, grads)
    if me == 0:
        torch.manual_seed(0)
        alone = Generator(vocab_size=256, emb=emb, heads=4, depth=depth, context=context).to(device)
        next_token_loss(alone, tokens).backward()
        reference = torch.cat([p.grad.flatten() for p in alone.parameters()])
        same = all(torch.equal(g, everyone[0]) for g in everyone)
        print(
            f"{world} processes, {batch // world} sequences each; all ranks hold the same gradients: {same}"
        )
        print(
            f"largest difference from 1 process on all {batch}: {(everyone[0] - reference).abs().max():.1e}"
        )
    g = torch.Generator().manual_seed(1 + me)  # each rank its own data
    data = [torch.randint(0, 256, (batch // world, context + 1), generator=g) for _ in range(steps + 1)]
    train(model, data[:1], next_token_loss, TrainConfig(steps=1, progress=False), device=device)  # warm-up
    start = time.perf_counter()
    train(model, data[1:], next_token_loss, TrainConfig(steps=steps, progress=False), device=device)
    if me == 0:
        print(f"{(time.perf_counter() - start) / steps * 1e3:.0f} ms per step of {batch} sequences")
    distributed.finish()


if __name__ == "__main__":
    demo(*(int(a) for a in sys.argv[1:]))
