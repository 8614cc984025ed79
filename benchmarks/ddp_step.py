"""One data-parallel training step on this CPU: 2 processes (torchrun, gloo) against 1 (chapter 12).

Run it both ways and compare the printed tokens/s:

    python benchmarks/ddp_step.py                                  # 1 process, --threads threads
    torchrun --nproc_per_node 2 benchmarks/ddp_step.py --threads 1 # 2 processes, 1 thread each

Every run trains the same model on the same global batch (``--batch`` sequences per step, split
evenly over the processes), with AdamW, through ``fromscratch.training.train`` (which wraps the model
in DistributedDataParallel under torchrun). It prints the median step time, tokens per second, and
(with several processes) the time of one all-reduce of all the gradients, the communication DDP adds.

On a GPU node: ``torchrun --standalone --nproc_per_node 8 benchmarks/ddp_step.py`` (nccl); on several
nodes add ``--nnodes N --rdzv_backend c10d --rdzv_endpoint HOST:29500 --rdzv_id JOB``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist

from fromscratch.data import enwik8
from fromscratch.models import Generator
from fromscratch.training import TrainConfig, distributed, train
from fromscratch.training.losses import next_byte_loss


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=2, help="torch threads per process")
    parser.add_argument(
        "--batch", type=int, default=32, help="sequences per optimiser step, over all processes"
    )
    parser.add_argument("--context", type=int, default=128)
    parser.add_argument("--emb", type=int, default=128)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--steps", type=int, default=12, help="timed steps (after 3 untimed ones)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = distributed.init() if "RANK" in os.environ else torch.device("cpu")
    world, main_rank = distributed.world_size(), distributed.is_main()
    if args.batch % world:
        raise ValueError(f"--batch {args.batch} must be divisible by the number of processes ({world}).")
    if main_rank:
        print(
            f"{world} process(es) x {args.threads} thread(s), load average {os.getloadavg()[0]:.2f} at start"
        )
    torch.manual_seed(0)
    model = Generator(vocab_size=256, emb=args.emb, heads=8, depth=args.depth, context=args.context)
    data = torch.randint(0, 256, (200_000,), dtype=torch.uint8)  # the timing does not depend on the bytes
    per_rank = args.batch // world  # each rank reads its own shard: a random stream seeded with its rank
    batches = enwik8.RandomSubsequences(
        data, context=args.context, batch_size=per_rank, seed=distributed.rank()
    )
    times: list[float] = []
    last = [time.perf_counter()]

    def timed_loss(net, batch):
        now = time.perf_counter()
        times.append(now - last[0])  # one step per batch: the time since the previous batch started
        last[0] = now
        return next_byte_loss(net, batch)

    train(model, batches, timed_loss, TrainConfig(steps=args.steps + 3, progress=False), device=device)
    step = statistics.median(times[4:])  # the first loss call has no previous step; 3 warm-up steps
    tokens = args.batch * args.context
    line = f"median step {step * 1e3:.0f} ms, {tokens / step:,.0f} tokens/s over {args.steps} steps"
    if world > 1:
        grads = torch.cat([p.detach().flatten() for p in model.parameters()])
        dist.barrier()
        start = time.perf_counter()
        for _ in range(5):
            dist.all_reduce(grads)
        line += f"; one all-reduce of {grads.numel() * 4 / 2**20:.1f} MiB of gradients: "
        line += f"{(time.perf_counter() - start) / 5 * 1e3:.1f} ms"
    if main_rank:
        print(line)
    distributed.finish()


if __name__ == "__main__":
    main()
