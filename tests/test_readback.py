"""A busy GPU: ``train`` reads a number back from the device at most every 10 steps.

Every read-back of a GPU tensor (``.item()``, ``float()``, ``bool()``, ``.tolist()``, ``.cpu()``, an
operation whose output size depends on the data) makes the CPU wait until the GPU has finished
everything queued, so it cannot queue the next step meanwhile. Here the run is on the CPU, where such a
read is free, so the test counts them instead: every call of an aten operation that would wait on CUDA
(:data:`SYNCING`, seen by a ``TorchDispatchMode``, torch's own code included) and every ``tolist``,
``cpu`` and ``numpy`` call (they do not dispatch). AdamW is made ``fused`` as ``train`` makes it on
CUDA: the CPU's unfused AdamW reads its step count with ``.item()`` for each parameter, which on CUDA
it keeps on the host anyway (a read that costs the GPU nothing), so counting it would not be honest.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

import fromscratch.training.loop as loop
from fromscratch.training import TrainConfig, train

aten = torch.ops.aten
SYNCING = {  # aten operations that wait for a CUDA device: their result goes to the host, or its size does
    aten._local_scalar_dense.default,  # .item(), float(t), int(t), bool(t), `if t:`
    aten.is_nonzero.default,
    aten.equal.default,
    aten.nonzero.default,
    aten.masked_select.default,
    aten._unique2.default,
}
STEPS = 200


class ReadBacks(TorchDispatchMode):
    """Counts the read-backs (see the module's docstring) while active."""

    def __init__(self, monkeypatch):
        super().__init__()
        self.seen: list[str] = []
        for name in ("tolist", "cpu", "numpy"):
            method = getattr(torch.Tensor, name)
            monkeypatch.setattr(torch.Tensor, name, self._counted(name, method))

    def _counted(self, name, method):
        def counted(tensor, *args, **kwargs):
            self.seen.append(name)
            return method(tensor, *args, **kwargs)

        return counted

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in SYNCING:
            self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def fused_as_on_cuda(monkeypatch):
    optimizer = loop._optimizer
    monkeypatch.setattr(loop, "_optimizer", lambda *args, fused: optimizer(*args, fused=True))


def problem():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 8, generator=g)
    return [(x[i : i + 16], x[i : i + 16].sum(1, keepdim=True)) for i in range(0, 64, 16)]


def mse(model, batch):
    x, y = batch
    return F.mse_loss(model(x).float(), y)


@pytest.mark.filterwarnings("ignore::fromscratch.training.precision.PrecisionWarning")
@pytest.mark.parametrize("precision", ["fp32", "fp16"])  # bf16 and fp32: no scaler; fp16 (a T4): the scaler
def test_train_reads_back_at_most_every_tenth_step(monkeypatch, precision):
    fused_as_on_cuda(monkeypatch)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    config = TrainConfig(steps=STEPS, lr=1e-2, precision=precision, progress=True)
    with ReadBacks(monkeypatch) as reads:
        history = train(model, problem(), mse, config)
    print(f"{precision}: {len(reads.seen)} read-backs in {STEPS} steps, {len(reads.seen) / STEPS:.2f} a step")
    assert len(reads.seen) <= 0.1 * STEPS, reads.seen
    assert len(history.series("loss")[1]) == STEPS
    assert history.skipped == 0 if precision == "fp32" else history.skipped < 5  # fp16: the scale settling


def test_the_counter_sees_what_the_old_loop_did(monkeypatch):
    """The counter is not blind: a loop that reads each loss with .item() (as train did) is counted."""
    with ReadBacks(monkeypatch) as reads:
        total = 0.0
        for loss in torch.rand(STEPS):
            total += loss.item()
        bool(torch.tensor(1.0) > 0)
        torch.tensor([1.0]).tolist()
    assert len(reads.seen) == STEPS + 2
