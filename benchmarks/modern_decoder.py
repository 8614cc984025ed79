"""Chapter 14's measurements: the ablation from a GPT-2-style decoder to a Llama-style one (several seeds,
equal steps), a timing pass of every rung and of the parts in question, and the KV cache and decoding
cost of grouped-query attention (the prefill and the cached one-token steps timed apart).

Run it alone on the machine (it times things), e.g. under the shared lock:

    flock /tmp/heavy.lock timeout 3600 .venv/bin/python benchmarks/modern_decoder.py | tee /tmp/decoder.log

Sizes come from the ``cpu`` profile's ``decoders`` run (``--profile`` picks another). Every rung of the
ablation trains for the same number of steps (``run.train.steps``), once per seed (``--seeds``, default
``run.seeds``; seed ``s`` draws the initial weights and the order of the batches), on **the first
1,000,000 bytes of enwik8** (the registered prefix, cut 90/5/5: NOT the standard split, so the bits per
byte compare the rungs with each other, never with published enwik8 results), and is scored on the same
validation bytes. ``--steps`` overrides the steps. The timing pass times a training step of every rung
and the forward and backward of LayerNorm, RMSNorm, the MLP and SwiGLU at the ladder's size (median of
``run.timing_repeats``, one thread, after two warm-up calls). ``--parts`` runs a subset: ``ablation``,
``timing``, ``gqa``; ``--plot FILE`` saves the mean learning curves; ``--threads N`` sets torch's CPU
threads for the training (on a busy shared machine one thread per process is steadier than two competing
for the same cores). The load average is printed with every result.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import statistics
import warnings
from dataclasses import replace

import torch

from fromscratch.attention.grouped import cache_bytes
from fromscratch.chapters import get_profile
from fromscratch.data import enwik8
from fromscratch.metrics import bits_per_byte
from fromscratch.models import Llama
from fromscratch.models.llama import MLP, RMSNorm, SwiGLU, swiglu_hidden
from fromscratch.training import train
from fromscratch.training.losses import next_byte_loss
from fromscratch.utils import count_parameters, time_call

PARTS = ("ablation", "timing", "gqa")


def load() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3]) if os.path.exists("/proc/loadavg") else "?"


def ablation(run, data, seeds: int, plot: str | None) -> None:
    steps = run.train.steps
    print(f"\n== ablation: {len(run.ladder)} rungs, {steps:,} steps each, seeds 0-{seeds - 1} ==")
    bpb = {name: [] for name, _ in run.ladder}
    curves: dict[str, list[list[float]]] = {}
    for seed in range(seeds):
        for name, config in run.ladder:
            torch.manual_seed(seed)
            model = Llama(config)
            batches = enwik8.RandomSubsequences(
                data.train, context=config.context, batch_size=run.batch_size, seed=seed
            )
            history = train(model, batches, next_byte_loss, replace(run.train, progress=False))
            score = bits_per_byte(model, data.val, context=config.context, max_bytes=run.eval_bytes)
            bpb[name].append(score)
            curves.setdefault(name, []).append(history.series("loss")[1])
            print(f"  seed {seed}  {name:<22} {score:.3f} bits per byte (load {load()})", flush=True)
    names = [name for name, _ in run.ladder]
    print(
        f"\n{'variant':<22} {'parameters':>10} {'val bits/byte: mean':>20} {'range':>14} "
        f"{'vs above':>9}  per seed"
    )
    for i, (name, config) in enumerate(run.ladder):
        values = bpb[name]
        above = [b - a for a, b in zip(bpb[names[i - 1]], values, strict=True)] if i else []
        delta = f"{statistics.mean(above):+.3f}" if above else ""
        paired = " ".join(f"{d:+.3f}" for d in above)
        print(
            f"{name:<22} {count_parameters(Llama(config)):>10,} {statistics.mean(values):>20.3f} "
            f"{min(values):>6.3f}-{max(values):<7.3f} {delta:>9}  {paired}"
        )
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        from fromscratch.viz import ablation_curves

        mean_curves = {}
        for name, runs in curves.items():
            n = min(len(r) for r in runs)
            mean_curves[name] = (
                list(range(1, n + 1)),
                [statistics.mean(r[i] for r in runs) for i in range(n)],
            )
        ablation_curves(mean_curves, xlabel="training step", title=f"mean of {seeds} seeds").savefig(
            plot, dpi=100
        )
        print(f"learning curves saved to {plot}")


def timing(run, data) -> None:
    print(
        f"\n== timing pass: median of {run.timing_repeats} calls after 2 warm-ups, one thread "
        f"(load {load()}) =="
    )
    for name, config in run.ladder:
        torch.manual_seed(0)
        model = Llama(config)
        optimizer = torch.optim.AdamW(model.parameters(), lr=run.train.lr)
        batch = next(
            iter(
                enwik8.RandomSubsequences(
                    data.train, context=config.context, batch_size=run.batch_size, seed=0
                )
            )
        )

        def step(model=model, optimizer=optimizer, batch=batch):
            optimizer.zero_grad(set_to_none=True)
            next_byte_loss(model, batch).backward()
            optimizer.step()

        seconds = time_call(step, repeats=run.timing_repeats, warmup=2, statistic="median", threads=1)
        print(f"  {name:<22} {1000 * seconds:8.1f} ms per training step (load {load()})")
    first = run.ladder[0][1]
    x = torch.randn(run.batch_size, first.context, first.emb, requires_grad=True)
    hidden = swiglu_hidden(first.emb)
    parts = {
        "LayerNorm (nn.LayerNorm)": torch.nn.LayerNorm(first.emb),
        "RMSNorm (ours)": RMSNorm(first.emb),
        "nn.RMSNorm": torch.nn.RMSNorm(first.emb, eps=1e-5),
        f"MLP, GELU, width {4 * first.emb}": MLP(first.emb, 4 * first.emb),
        f"SwiGLU, width {hidden}": SwiGLU(first.emb, hidden, bias=True),
    }
    for name, part in parts.items():
        seconds = time_call(
            lambda part=part: part(x).sum().backward(),
            repeats=run.timing_repeats,
            warmup=2,
            statistic="median",
            threads=1,
        )
        print(f"  {name:<26} {1000 * seconds:8.3f} ms forward + backward, input {tuple(x.shape)}")


def gqa(run) -> None:
    c = run.gqa
    print(
        f"\n== grouped-query attention: e={c.emb}, h={c.heads}, {c.depth} blocks; batch {run.gqa_batch}, "
        f"a prompt of {run.gqa_prompt} (the prefill), then {run.gqa_new} cached one-token steps; "
        f"medians of {run.gqa_repeats}, one thread =="
    )
    print(
        f"{'kv heads':>8} {'parameters':>11} {'cache MiB':>10} {'h/hk':>5} {'prefill ms':>11} "
        f"{'ms/token':>9}  load"
    )
    prompt = torch.randint(
        0, c.vocab_size, (run.gqa_batch, run.gqa_prompt), generator=torch.Generator().manual_seed(0)
    )
    for kv_heads in sorted(run.gqa_kv_heads, reverse=True):
        torch.manual_seed(0)
        model = Llama(c, kv_heads=kv_heads).eval()

        def prefill(model=model):
            cache = model.new_cache()
            with torch.no_grad():
                logits = model(prompt, cache=cache)
            return cache, logits[:, -1].argmax(-1, keepdim=True)

        filled, first = prefill()

        def decode(model=model, filled=filled, first=first):
            cache = [copy.copy(layer) for layer in filled]  # appending never changes `filled`
            token = first
            with torch.no_grad():
                for _ in range(run.gqa_new):
                    token = model(token, cache=cache)[:, -1].argmax(-1, keepdim=True)

        timed = dict(repeats=run.gqa_repeats, warmup=1, statistic="median", threads=1)
        prefill_ms = 1000 * time_call(prefill, **timed)
        token_ms = 1000 * time_call(decode, **timed) / run.gqa_new
        print(
            f"{kv_heads:>8} {count_parameters(model):>11,} {cache_bytes(filled) / 2**20:>10.2f} "
            f"{c.heads // kv_heads:>5} {prefill_ms:>11.1f} {token_ms:>9.2f}  {load()}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="cpu", choices=("smoke", "cpu", "gpu"))
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS)
    parser.add_argument(
        "--seeds", type=int, default=None, help="seeds of the ablation (default: the profile's)"
    )
    parser.add_argument("--steps", type=int, default=None, help="steps per rung (default: the profile's)")
    parser.add_argument("--plot", default=None, help="save the ablation's mean learning curves to this file")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    run = get_profile(args.profile).ch14
    if args.steps:
        run = replace(run, train=replace(run.train, steps=args.steps, warmup_steps=args.steps // 10))
    print(
        f"profile={args.profile}, torch {torch.__version__}, {platform.machine()}, "
        f"{torch.get_num_threads()} threads, load average at start {load()}"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = enwik8.load(run.data_bytes)
    if "ablation" in args.parts:
        ablation(run, data, args.seeds or run.seeds, args.plot)
    if "timing" in args.parts:
        timing(run, data)
    if "gqa" in args.parts:
        gqa(run)
    print(f"\nload average at the end: {load()}")


if __name__ == "__main__":
    main()
