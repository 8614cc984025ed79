"""Whether a run fits a GPU, said before training: the generic estimate and the check a chapter calls."""

from __future__ import annotations

import types

import pytest
import torch

from fromscratch.chapters.ch13_beyond_text.pipeline import labelled_loss
from fromscratch.models import CNN, CNNConfig, Generator, GeneratorConfig
from fromscratch.training.batches import probe_batch, take
from fromscratch.training.fits import StorageWatch, check_fits, estimate_training
from fromscratch.training.losses import classification_loss, next_byte_loss
from fromscratch.training.memory import CUDA_CONTEXT, T4_BYTES, step_peak


def generator_batch(b=4, t=32):
    x = torch.randint(0, 256, (b, t + 1), generator=torch.Generator().manual_seed(0))
    return x[:, :-1], x[:, 1:]


def measured_step(model, loss_fn, batch) -> int:
    """The peak bytes of a real AdamW step (multi-tensor, as on a GPU), after one to create its state."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6, foreach=True)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model, batch).backward()
        optimizer.step()

    step()
    state = [v for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v)]
    with StorageWatch(*model.parameters(), *state, *batch) as watch:
        step()
    return watch.peak


@pytest.mark.parametrize("kind", ["generator", "cnn"])
def test_the_estimate_is_within_15_percent_of_a_measured_step(kind):
    torch.manual_seed(0)
    if kind == "generator":
        model, batch, loss = (
            Generator(GeneratorConfig(emb=64, heads=4, depth=2, context=64)),
            generator_batch(16, 64),
            next_byte_loss,
        )
    else:
        images = torch.rand(32, 1, 28, 28)
        model, batch, loss = (
            CNN(CNNConfig(widths=(8, 16), hidden=32)),
            (images, torch.randint(0, 10, (32,))),
            labelled_loss,
        )
    ratio = step_peak(estimate_training(model, loss, batch)) / measured_step(model, loss, batch)
    assert 0.85 <= ratio <= 1.15


def test_the_16_bit_estimate_is_smaller():
    config = GeneratorConfig(emb=64, heads=4, depth=2, context=64)
    torch.manual_seed(0)
    model = Generator(config)
    fp32, fp16 = (
        estimate_training(model, next_byte_loss, generator_batch(16, 64), precision=p)
        for p in ("fp32", "fp16")
    )
    assert fp16.activations < 0.8 * fp32.activations


def test_take_cuts_every_tensor_of_the_batch_dimension():
    batch = {"tokens": torch.zeros(8, 5), "labels": torch.zeros(8), "mask": torch.ones(5, 5)}
    part = take(batch, 2)
    assert part["tokens"].shape == (2, 5) and part["labels"].shape == (2,) and part["mask"].shape == (5, 5)


def test_a_run_that_does_not_fit_is_named_with_the_shortfall():
    runs = {"tiny run": 2 * 10**9, "huge": 13 * 10**9}
    with pytest.raises(ValueError, match="huge needs") as error:
        check_fits(runs, "cuda", device_bytes=T4_BYTES)
    message = str(error.value)
    assert (
        "tiny run" not in message and "more than 80% of" in message and "FROMSCRATCH_PROFILE=cpu" in message
    )
    shares = check_fits({"small": 2 * 10**9}, "cpu", device_bytes=T4_BYTES)
    assert shares == {"small": pytest.approx((2 * 10**9 + CUDA_CONTEXT) / T4_BYTES)}


def test_nothing_to_check_on_a_cpu():
    assert check_fits({"huge": 10**15}, "cpu") == {}


def test_the_gpus_own_memory_is_read(monkeypatch):
    props = types.SimpleNamespace(total_memory=15_828_320_256, name="Tesla T4", major=7, minor=5)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device=None: props)
    assert check_fits({"fits": 10**9}, "cuda")["fits"] < 0.2
    with pytest.raises(ValueError, match="Not enough GPU memory"):
        check_fits({"too big": 14 * 10**9}, "cuda")


def test_bad_precision_is_named():
    with pytest.raises(ValueError, match="'fp32', 'bf16', 'fp16'; got 'fp8'"):
        model = Generator(GeneratorConfig(emb=8, heads=2, depth=1, context=4))
        estimate_training(model, classification_loss, generator_batch(), precision="fp8")


def test_check_run_says_before_training_that_a_step_does_not_fit():
    """`train`'s check on a GPU, run here on the CPU against a pretend device of a given size."""
    from fromscratch.training.fits import check_run
    from fromscratch.training.precision import choose_precision

    model = Generator(GeneratorConfig(emb=32, heads=2, depth=2, context=32))
    fp32 = choose_precision("cpu", "fp32")
    shares = check_run(model, next_byte_loss, generator_batch(), fp32, "cpu", device_bytes=16 * 2**30)
    assert 0 < shares["this training run"] < 0.1  # the context and a tiny model: a few % of 16 GiB
    with pytest.raises(ValueError, match="this training run needs .* more than 80% of"):
        check_run(model, next_byte_loss, generator_batch(), fp32, "cpu", device_bytes=CUDA_CONTEXT)
    assert check_run(model, next_byte_loss, generator_batch(), fp32, "cpu") == {}  # no fixed memory to check


def varied_batches():
    """Three batches of padded token ids, the longest in the middle."""
    return [
        {"tokens": torch.zeros(4, 5, dtype=torch.long), "labels": torch.zeros(4)},
        {"tokens": torch.zeros(4, 9, dtype=torch.long), "labels": torch.zeros(4)},
        {"tokens": torch.zeros(6, 3, dtype=torch.long), "labels": torch.zeros(6)},
    ]


def test_the_probe_is_the_longest_batch_a_sized_source_shows():
    from torch.utils.data import DataLoader, TensorDataset

    batch, which = probe_batch(varied_batches())
    assert batch["tokens"].shape == (4, 9) and which == "the longest of its 3 batches: 4 x 9"
    batch, which = probe_batch(varied_batches(), limit=1)  # a long source: only its first `limit` batches
    assert batch["tokens"].shape == (4, 5) and which == "the longest of the first 1 of its 3 batches: 4 x 5"
    loader = DataLoader(TensorDataset(torch.zeros(70, 8), torch.zeros(70)), batch_size=32, shuffle=True)
    assert probe_batch(loader)[0][0].shape == (32, 8)  # a full batch, not the last one of 6


def test_an_unsized_source_is_probed_by_its_first_batch_and_an_iterator_not_at_all():
    batch, which = probe_batch(lambda: iter(varied_batches()))
    assert (
        batch["tokens"].shape == (4, 5) and "its first batch: 4 x 5; later ones were not looked at" in which
    )

    class Stream:  # iterable again, but without a length (an endless stream)
        def __iter__(self):
            return iter(varied_batches())

    assert probe_batch(Stream())[0]["tokens"].shape == (4, 5)
    with pytest.raises(ValueError, match="one-shot iterator"):
        probe_batch(iter(varied_batches()))
    with pytest.raises(ValueError, match="batches are empty"):
        probe_batch([])


def test_looking_at_the_data_leaves_every_generator_as_it_was():
    from torch.utils.data import DataLoader, TensorDataset

    from fromscratch.training.checkpoints import random_state_kept

    own = torch.Generator().manual_seed(1)
    loader = DataLoader(TensorDataset(torch.arange(100.0)), batch_size=10, shuffle=True, generator=own)
    torch.manual_seed(0)
    before, own_before = torch.get_rng_state(), own.get_state()
    with random_state_kept(loader):
        probe_batch(loader)  # a whole pass: the loader's own generator draws its order
        torch.rand(3)
    assert torch.equal(torch.get_rng_state(), before) and torch.equal(own.get_state(), own_before)


def fake_free_memory(monkeypatch, free, total, reserved=0, allocated=0):
    """Make ``torch.cuda`` report ``free`` of ``total`` bytes, and what this process's allocator holds."""
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (free, total))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: reserved)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device=None: allocated)


def test_check_run_compares_with_the_free_memory(monkeypatch):
    """On a pretend 16 GiB GPU (the model stays on the CPU): the check reads what is free, not the total."""
    from fromscratch.training.fits import check_run
    from fromscratch.training.memory import gpu_peak
    from fromscratch.training.precision import choose_precision

    torch.manual_seed(0)
    model = Generator(GeneratorConfig(emb=32, heads=2, depth=2, context=32))
    fp32, batch = choose_precision("cpu", "fp32"), generator_batch()
    need = gpu_peak(estimate_training(model, next_byte_loss, batch))
    gib16 = 16 * 2**30

    fake_free_memory(monkeypatch, free=gib16, total=gib16, reserved=2**20, allocated=0)
    shares = check_run(model, next_byte_loss, batch, fp32, "cuda")  # free, plus the cache's spare MiB
    assert shares["this training run"] == pytest.approx(need / (gib16 + 2**20 + CUDA_CONTEXT), rel=0.02)

    fake_free_memory(monkeypatch, free=0, total=gib16)  # a big GPU, all of it held elsewhere
    with pytest.raises(ValueError, match="Not enough free GPU memory: this training run needs") as error:
        check_run(model, next_byte_loss, batch, fp32, "cuda")
    assert "free of the GPU's 16.00 GiB" in str(error.value)
    assert "It would fit were the GPU free" in str(error.value) and "empty_cache()" in str(error.value)

    fake_free_memory(monkeypatch, free=0, total=need)  # too small a GPU, even if it were all free
    with pytest.raises(ValueError, match="more than 80% of") as error:
        check_run(model, next_byte_loss, batch, fp32, "cuda", name="run 7.6")
    assert "run 7.6 needs" in str(error.value) and "FROMSCRATCH_PROFILE=cpu" in str(error.value)
    assert "would fit" not in str(error.value)
