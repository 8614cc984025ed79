"""How good a language model is: bits per byte on a held-out stream (chapter 07).

:func:`bits_per_byte` scores every byte of a stream exactly once with sliding windows
(:func:`scoring_windows` says which), and converts the mean cross-entropy from nats to bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import pairwise

import torch
import torch.nn.functional as F

from fromscratch.utils import evaluating


def scoring_windows(n: int, context: int, stride: int) -> list[tuple[int, int]]:
    """The windows ``bits_per_byte`` reads over a stream of ``n`` bytes: ``(start, scored)`` pairs.

    Every window holds ``L = min(context, n - 1)`` input bytes ``data[start : start + L]`` and
    predicts ``data[start + 1 : start + L + 1]``; only its last ``scored`` predictions count.
    Starts are ``0, stride, 2 * stride, …`` and a last window ending at the end of the stream, so
    the scored counts add up to ``n - 1``: every byte except the first is predicted exactly once.
    """
    if n < 2:
        raise ValueError(f"A stream of {n} byte(s) has nothing to predict; pass at least 2 bytes.")
    length = min(context, n - 1)
    if not 1 <= stride <= length:
        raise ValueError(
            f"stride={stride} must lie between 1 and the window length {length} (context={context}), "
            f"or some bytes would never be scored."
        )
    last = n - 1 - length
    starts = list(range(0, last, stride)) + [last]
    scored = [length] + [b - a for a, b in pairwise(starts)]
    return list(zip(starts, scored, strict=True))


@torch.no_grad()
def bits_per_byte(
    model: Callable[[torch.Tensor], torch.Tensor],
    data: torch.Tensor,
    *,
    context: int,
    batch_size: int = 128,
    device: torch.device | str | None = None,
    stride: int | None = None,
    max_bytes: int | None = None,
) -> float:
    r"""Average bits per byte of ``model`` on a held-out stream: exact, each byte predicted once (chapter 07).

    ``model`` maps bytes (b, t) to next-byte logits (b, t, V); ``data`` is a 1-d tensor of bytes
    (the first ``max_bytes`` of it when given). Which bytes are scored, and with how much context:

    * every byte except the first, ``data[1:]``, exactly once (``n - 1`` predictions);
    * **sliding windows** of ``context`` bytes moved by ``stride`` (default ``context // 2``),
      see :func:`scoring_windows`. The first window is the warm-up: its ``j``-th prediction
      (``j = 1 … context``) sees only ``j`` bytes. Every later window scores only its last
      ``stride`` positions (the final window, ending at the end of the stream, only the bytes
      not scored yet), so each of those bytes is predicted from at least
      ``context - stride + 1`` and at most ``context`` preceding bytes;
    * ``stride=1`` gives every byte after the first window the full ``context`` bytes (as the
      blog's evaluation does), at ``context`` times the cost of ``stride=context``.

    The result is the mean cross-entropy converted from nats to bits,
    $\mathrm{bpb} = -\frac{1}{n-1}\sum_{i=1}^{n-1} \log_2 p(x_i \mid x_{<i})$
    (a uniform guess over 256 bytes scores 8). The model is put in eval mode and restored after.
    """
    data = data[:max_bytes] if max_bytes is not None else data
    if data.dim() != 1:
        raise ValueError(f"data must be a 1-d stream of bytes, got shape {tuple(data.shape)}.")
    stride = stride if stride is not None else max(1, min(context, len(data) - 1) // 2)
    windows = scoring_windows(len(data), context, stride)
    if device is None:
        device = next(iter(model.parameters())).device if isinstance(model, torch.nn.Module) else "cpu"
    length = min(context, len(data) - 1)
    positions = torch.arange(length + 1)  # (t + 1,)
    total_nats = torch.zeros((), dtype=torch.float64, device=device)  # summed on the device: no read-back
    count = 0
    with evaluating(model):
        for first in range(0, len(windows), batch_size):
            starts, scored = (
                torch.tensor(column) for column in zip(*windows[first : first + batch_size], strict=True)
            )
            chunk = data[starts[:, None] + positions].long().to(device)  # (b, t + 1)
            logits = model(chunk[:, :-1])  # (b, t, V)
            nll = F.cross_entropy(
                logits.float().transpose(1, 2), chunk[:, 1:], reduction="none"
            )  # (b, t) nats
            keep = positions[None, :-1] >= (length - scored)[:, None]  # (b, t): the last `scored` positions
            total_nats += nll[keep.to(device)].double().sum()
            count += int(keep.sum())
    assert count == len(data) - 1, "every byte but the first must be scored exactly once"
    return total_nats.item() / count / math.log(2)  # the one read-back


__all__ = ["bits_per_byte", "scoring_windows"]
