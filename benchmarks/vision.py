"""Benchmark: chapter 13's reference numbers, a ViT against a CNN at the same wall-clock budget, the
odd-one-out set task (DeepSets against the set transformer at the same steps), and the local attention
mask against full attention at several training-set sizes and seeds.

The models and budgets are the run profile's (``get_profile("cpu").ch13``): the ViT ``vit`` and the
CNN ``cnn`` are each trained for ``reference`` (10 minutes of training steps in ``cpu``) on all 60,000
training images, with the same batches, learning rate and augmentation, then scored on all 10,000
test images. The targets (2 CPU cores): the ViT at least 98.0 % on MNIST; the set transformer at least
95 % on the odd-one-out sets. It prints, for each dataset,

    ViT MNIST test accuracy <acc> after <m> min
    CNN MNIST test accuracy <acc> after <m> min

(``<m>``: minutes spent in training steps, evaluations left out), the same for Fashion-MNIST, and

    Set transformer odd-one-out test accuracy <acc> after <s> steps
    DeepSets odd-one-out test accuracy <acc> after <s> steps

with the machine's load average before and after each run (other work on the machine slows the
training steps, so a busy machine reaches fewer steps in the same minutes). ``--parts local`` trains
the profile's ``local_vit`` with the local mask and with full attention on the first ``local_sizes``
training images, ``--seeds`` seeds each (default: the profile's ``local_seeds``), for ``local_train``'s
steps or ``--local-steps``, and prints every run and the mean and range per size.

    python benchmarks/vision.py                             # everything: about an hour on 2 cores
    python benchmarks/vision.py --parts mnist sets          # MNIST and the sets only
    python benchmarks/vision.py --parts local --local-steps 4000 --seeds 3   # a longer local/full race
    python benchmarks/vision.py --quick                     # seconds: the smoke profile's sizes
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from dataclasses import replace

import torch

from fromscratch.chapters import get_profile, seed_everything
from fromscratch.chapters.ch13_beyond_text.pipeline import accuracy_on, labelled_loss
from fromscratch.data import mnist
from fromscratch.models import CNN, DeepSets, SetTransformer, ViT
from fromscratch.training import train
from fromscratch.utils import count_parameters

PARTS = ("mnist", "fashion-mnist", "sets", "local")
NAMES = {"mnist": "MNIST", "fashion-mnist": "Fashion-MNIST"}


def load() -> str:
    """The machine's load average over 1, 5 and 15 minutes (2 means both cores busy)."""
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def images(run, name: str, device: torch.device, seed: int) -> None:
    """Train the ViT and the CNN on one dataset for the same budget; print their test accuracy."""
    data = mnist.load(name, progressbar=False)
    n = run.train_images or len(data.train_images)
    test_n = run.test_images or len(data.test_images)
    test_x, test_y = mnist.to_float(data.test_images[:test_n]), data.test_labels[:test_n]
    for label, build in (("ViT", lambda: ViT(run.vit)), ("CNN", lambda: CNN(run.cnn))):
        seed_everything(seed)  # the same initial draws and the same batches for both models
        model = build()
        batches = mnist.ImageBatches(
            data.train_images[:n], data.train_labels[:n], run.image_batch, shift=run.shift
        )
        before = load()
        started = time.perf_counter()
        history = train(model, batches, labelled_loss, replace(run.reference, progress=False), device=device)
        wall = time.perf_counter() - started
        minutes = history.rows[-1].get("seconds", wall) / 60 if history.rows else wall / 60
        steps = max(r["step"] for r in history.rows)
        acc = accuracy_on(model, test_x, labels=test_y)
        print(
            f"  {label}: {count_parameters(model):,} parameters, {steps:,} steps of {run.image_batch} "
            f"({steps * run.image_batch / n:.1f} epochs), wall {wall / 60:.1f} min; {before}, after {load()}"
        )
        print(f"{label} {NAMES[name]} test accuracy {100 * acc:.2f} % after {minutes:.1f} min", flush=True)


def sets(run, device: torch.device, seed: int) -> None:
    """Train DeepSets and the set transformer on the same kind of batches for the same steps."""
    data = mnist.load("mnist", progressbar=False)
    test_sets, test_odd, _ = mnist.odd_one_out(
        data.test_images,
        data.test_labels,
        run.set_test,
        set_size=run.set_size,
        generator=torch.Generator().manual_seed(seed),
    )
    test_x = test_sets.flatten(2).float() / 255  # (n, k, h·w)
    for label, build in (("Set transformer", SetTransformer), ("DeepSets", DeepSets)):
        seed_everything(seed)
        model = build(run.sets)
        batches = mnist.OddOneOutBatches(
            data.train_images, data.train_labels, run.set_batch, set_size=run.set_size
        )
        before = load()
        started = time.perf_counter()
        train(model, batches, labelled_loss, replace(run.set_train, progress=False), device=device)
        wall = time.perf_counter() - started
        acc = accuracy_on(model, test_x, labels=test_odd)
        print(
            f"  {label}: {count_parameters(model):,} parameters, {run.set_batch} sets of {run.set_size} "
            f"per step, wall {wall / 60:.1f} min; {before}, after {load()}"
        )
        steps = run.set_train.steps
        print(f"{label} odd-one-out test accuracy {100 * acc:.2f} % after {steps:,} steps", flush=True)


def local(run, device: torch.device, seeds: int) -> None:
    """The local mask against full attention: the same ViT, steps and batches, per size and seed."""
    data = mnist.load("mnist", progressbar=False)
    test_n = run.test_images or len(data.test_images)
    test_x, test_y = mnist.to_float(data.test_images[:test_n]), data.test_labels[:test_n]
    config = replace(run.local_train, progress=False)
    print(f"local ViT {run.local_vit}\nlocal training {config}, {seeds} seeds")
    results: dict[tuple[str, int], list[float]] = {}
    for count in run.local_sizes:
        for label, radius in (("local", run.local_vit.local), ("full", None)):
            for seed in range(seeds):
                torch.manual_seed(seed)  # the initial draw
                model = ViT(run.local_vit, local=radius)
                torch.manual_seed(seed)  # the order of the batches
                batches = mnist.ImageBatches(
                    data.train_images[:count], data.train_labels[:count], run.image_batch, shift=run.shift
                )
                before = load()
                train(model, batches, labelled_loss, config, device=device)
                acc = accuracy_on(model, test_x, labels=test_y)
                results.setdefault((label, count), []).append(acc)
                print(f"  {count:>6,} images, {label:5} attention, seed {seed}: {100 * acc:.2f} %; {before}")
    print(f"\n{'images':>8} {'local: mean (range)':>24} {'full: mean (range)':>24} {'local - full':>14}")
    for count in run.local_sizes:
        a, b = results["local", count], results["full", count]
        gaps = [100 * (x - y) for x, y in zip(a, b, strict=True)]
        cells = [f"{100 * sum(v) / len(v):.2f} ({100 * min(v):.1f}-{100 * max(v):.1f})" for v in (a, b)]
        print(f"{count:>8,} {cells[0]:>24} {cells[1]:>24} {sum(gaps) / len(gaps):>+8.2f} points")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--profile", default="cpu", help="run profile whose chapter 13 sizes to use (default: cpu)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="the smoke profile: a check that the script runs"
    )
    parser.add_argument(
        "--parts", nargs="+", choices=PARTS, default=list(PARTS), help="what to run (default: all)"
    )
    parser.add_argument("--minutes", type=float, help="replace the reference budget of each image model")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, help="seeds of the local/full runs (default: the profile's)")
    parser.add_argument("--local-steps", type=int, help="replace the steps of the local/full comparison")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    run = get_profile("smoke" if args.quick else args.profile).ch13
    if args.minutes is not None:
        run = replace(run, reference=replace(run.reference, minutes=args.minutes))
    if args.local_steps is not None:
        steps = args.local_steps
        run = replace(run, local_train=replace(run.local_train, steps=steps, warmup_steps=steps // 10))
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(
        f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
        f"{args.threads} CPU threads, device {device.type}, "
        f"profile {'smoke' if args.quick else args.profile}; {load()}\n"
        f"ViT {run.vit}\nCNN {run.cnn}\n"
        f"image training {run.reference}, batch {run.image_batch}, shift {run.shift}"
    )
    for name in ("mnist", "fashion-mnist"):
        if name in args.parts:
            images(run, name, device, args.seed)
    if "sets" in args.parts:
        print(f"sets {run.sets}\nset training {run.set_train}")
        sets(run, device, args.seed)
    if "local" in args.parts:
        local(run, device, args.seeds or run.local_seeds)


if __name__ == "__main__":
    main()
