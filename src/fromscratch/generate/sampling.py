"""Generating text from a language model, one token at a time (chapters 07, 14, 15).

The model maps tokens ``(b, t)`` to next-token logits ``(b, t, V)``. To continue a text we feed it
(at most its last ``context`` tokens), read the logits at the last position, pick one token, append
it, and repeat. :func:`probabilities` says what a pick draws from:

* **temperature** ``T``: ``softmax(logits / T)``; low sharpens towards the most likely token,
  ``T = 0`` *is* greedy decoding, 1 is the model's own distribution, higher flattens it;
* **top-k**: only the ``k`` most likely tokens keep their probability;
* **top-p** (nucleus sampling, Holtzman et al. 2020): only the most likely tokens whose mass before
  them is below ``p`` (so at least one), then renormalised.

:func:`generate` is the one loop. A model with ``new_cache()`` (chapter 11's generator, GPT-2, the
Llama) reads the prompt once and then only the new token per step, while the text fits its context;
every other model (and ``cache=False``) recomputes the window each step; both give the same tokens.
Random draws run on the CPU from a seeded ``torch.Generator``: a ``seed`` gives the same text on any
device (up to float rounding of the logits). :func:`encode` and :func:`decode` are chapter 07's bytes.

Shape legend: ``b`` batch, ``t`` length, ``V`` vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import torch
from torch import Tensor

from fromscratch.utils import evaluating


def encode(text: str | bytes) -> Tensor:
    """The UTF-8 bytes of ``text`` as a ``(t,)`` int64 tensor (bytes are taken as they are)."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return torch.tensor(list(data), dtype=torch.long)  # (t,)


def decode(tokens: Tensor | bytes) -> str:
    """Bytes (a ``(t,)`` tensor of values 0-255, or ``bytes``) as text; invalid UTF-8 becomes U+FFFD."""
    data = bytes(tokens.tolist()) if isinstance(tokens, Tensor) else bytes(tokens)
    return data.decode("utf-8", errors="replace")


def probabilities(
    logits: Tensor, *, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> Tensor:
    r"""The distribution a sampler draws from: logits ``(b, V)`` -> probabilities ``(b, V)`` (chapter 07).

    $p_i \propto \exp(z_i / T)$ over the ``top_k`` largest logits (all when None), then only the
    nucleus of mass ``top_p``; 0 elsewhere. ``temperature=0`` puts all mass on the largest logit
    (the first one, on a tie): greedy.
    """
    if temperature < 0:
        raise ValueError(f"temperature={temperature} must be >= 0 (0 means greedy decoding).")
    if top_k is not None and not 1 <= top_k <= logits.size(-1):
        raise ValueError(f"top_k={top_k} must lie between 1 and the vocabulary size {logits.size(-1)}.")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p={top_p} must lie in (0, 1]: the share of probability mass kept.")
    logits = logits.detach().float()  # (b, V)
    if temperature == 0:
        return torch.nn.functional.one_hot(logits.argmax(dim=-1), logits.size(-1)).float()  # (b, V)
    if top_k is not None:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]  # (b, 1): the k-th largest logit of each row
        logits = logits.masked_fill(logits < kth, float("-inf"))  # ties with the k-th are kept
    probs = torch.softmax(logits / temperature, dim=-1)  # (b, V)
    if top_p is not None:
        ordered, order = probs.sort(dim=-1, descending=True)  # (b, V), largest first
        before = ordered.cumsum(dim=-1) - ordered  # (b, V): the mass of the tokens ahead of each
        keep = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, before < top_p)  # (b, V)
        probs = probs * keep
        probs = probs / probs.sum(dim=-1, keepdim=True)  # (b, V): the nucleus, renormalised
    return probs


def next_token(
    logits: Tensor,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """One token per row of logits ``(b, V)``, drawn from :func:`probabilities` (greedy when
    ``temperature == 0``). Returns ``(b,)`` int64 on the CPU; ``generator`` (a CPU
    ``torch.Generator``) makes the draw reproducible."""
    probs = probabilities(logits.cpu(), temperature=temperature, top_k=top_k, top_p=top_p)  # (b, V)
    if temperature == 0:
        return probs.argmax(dim=-1)  # (b,)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)  # (b,)


@torch.no_grad()
def generate(
    model: Callable[..., Tensor],
    prompt: Tensor,
    *,
    steps: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    stop: Collection[int] = (),
    seed: int | None = 0,
    context: int | None = None,
    cache: bool = True,
) -> Tensor:
    """Continue each row of ``prompt`` (int ``(b, t)``) by up to ``steps`` tokens: ``(b, t + n)`` on the CPU.

    ``temperature``, ``top_k``, ``top_p``: as in :func:`probabilities`. A row that draws a token of
    ``stop`` ends there (the stop token kept); rows that ended before the others are filled with
    their stop token, and generation ends when every row has, so ``n <= steps``. ``seed`` seeds the
    draws (None: PyTorch's global generator). The model sees at most its last ``context`` tokens
    (default ``model.context``, if it has one); ``cache=False`` recomputes the window every step.
    The model runs in eval mode and is given back in the mode it was in.
    """
    if prompt.dim() != 2 or prompt.size(1) == 0:
        raise ValueError(f"prompt must be (b, t) with t >= 1, got {tuple(prompt.shape)}; add prompt[None].")
    context = context if context is not None else getattr(model, "context", None)
    parameters = model.parameters() if isinstance(model, torch.nn.Module) else iter(())
    device = next(parameters, torch.empty(0)).device  # where the model's weights are (CPU: a function)
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    stops = torch.tensor(sorted(stop), dtype=torch.long)  # (n_stop,)
    out = prompt.long().cpu()  # (b, t)
    done = torch.zeros(len(out), dtype=torch.bool)  # (b,): rows that drew a stop token
    kv = model.new_cache() if cache and callable(getattr(model, "new_cache", None)) else None
    with evaluating(model):
        for _ in range(steps):
            if kv is not None and (context is None or out.size(1) <= context):  # what the cache lacks
                logits = model(out[:, len(kv[0]) :].to(device), cache=kv)[:, -1]  # (b, V)
            else:  # the window of the last `context` tokens, from scratch
                window = out if context is None else out[:, -context:]  # (b, <= context)
                logits = model(window.to(device))[:, -1]  # (b, V)
            choice = next_token(
                logits, temperature=temperature, top_k=top_k, top_p=top_p, generator=generator
            )
            choice = torch.where(done, out[:, -1], choice)  # (b,): a finished row repeats its stop token
            out = torch.cat([out, choice[:, None]], dim=1)  # (b, t + 1)
            done = done | torch.isin(choice, stops)
            if bool(done.all()):
                break
    return out


def generate_text(model: Callable[..., Tensor], text: str | bytes, *, steps: int, **options) -> str:
    """Continue ``text`` by ``steps`` bytes with a byte-level model and return only the continuation
    (chapter 07): :func:`generate` between :func:`encode` and :func:`decode`; ``options`` as there."""
    prompt = encode(text)[None]  # (1, t)
    return decode(generate(model, prompt, steps=steps, **options)[0, prompt.size(1) :])


__all__ = ["decode", "encode", "generate", "generate_text", "next_token", "probabilities"]
