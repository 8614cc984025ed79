"""Text generation from a byte-level language model: greedy decoding and sampling (chapter 07).

The model maps bytes (b, t) to next-byte logits (b, t, V). To continue a text we feed it the last
``context`` bytes, read the logits at the last position, pick one byte, append it, and repeat:

* **greedy** decoding picks the most likely byte (``temperature=0``);
* **sampling** draws from ``softmax(logits / temperature)``: a low temperature sharpens the
  distribution towards greedy, 1 samples the model's own distribution, higher flattens it;
* **top-k** first keeps only the ``k`` most likely bytes (the rest get probability 0).

**KV cache** (chapter 11): a causal model's keys and values at a position never change once
computed, so a model that supports it (``model.new_cache()`` and ``model(tokens, cache=...)``:
:class:`~fromscratch.models.Generator`, GPT-2) reads the prompt once and then only the one new
token per step, instead of the whole prefix again. ``use_cache=False`` is the plain recomputation;
both give the same tokens. With absolute positions the cache holds only while the text fits in
the context: once the window must slide, every position's place changes and each step recomputes.

The random draws happen on the CPU with a seeded ``torch.Generator``, so a given ``seed`` gives the
same text on CPU and GPU (up to float rounding of the logits). Bytes that are not valid UTF-8
(a character cut in half, or a sampled mistake) decode to U+FFFD (``errors="replace"``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from fromscratch.utils import evaluating


def encode(text: str | bytes) -> torch.Tensor:
    """The UTF-8 bytes of ``text`` as a (t,) int64 tensor (bytes are taken as they are)."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return torch.tensor(list(data), dtype=torch.long)  # (t,)


def decode(tokens: torch.Tensor | bytes) -> str:
    """Bytes (a (t,) tensor of values 0-255, or ``bytes``) as text; invalid UTF-8 becomes U+FFFD."""
    data = bytes(tokens.tolist()) if isinstance(tokens, torch.Tensor) else bytes(tokens)
    return data.decode("utf-8", errors="replace")


def probabilities(
    logits: torch.Tensor, *, temperature: float = 1.0, top_k: int | None = None
) -> torch.Tensor:
    r"""The distribution a sampler draws from: logits (b, V) -> probabilities (b, V) (chapter 07).

    $p_i \propto \exp(z_i / T)$ over the ``top_k`` largest logits (all when None), 0 elsewhere;
    ``temperature=0`` puts all mass on the largest logit (the first one, on a tie): greedy.
    """
    if temperature < 0:
        raise ValueError(f"temperature={temperature} must be >= 0 (0 means greedy decoding).")
    if top_k is not None and not 1 <= top_k <= logits.size(-1):
        raise ValueError(
            f"top_k={top_k} must lie between 1 and the vocabulary size {logits.size(-1)}, or be None."
        )
    logits = logits.detach().float()  # (b, V)
    if temperature == 0:
        return torch.nn.functional.one_hot(logits.argmax(dim=-1), logits.size(-1)).float()  # (b, V)
    if top_k is not None:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]  # (b, 1): the k-th largest logit of each row
        logits = logits.masked_fill(logits < kth, float("-inf"))  # ties with the k-th are kept
    return torch.softmax(logits / temperature, dim=-1)  # (b, V)


def next_token(
    logits: torch.Tensor,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Pick one token per row from logits (b, V): greedy when ``temperature == 0``, else sampled.

    Returns (b,) int64 on the CPU, drawn from :func:`probabilities`; ``generator`` (a CPU
    ``torch.Generator``) makes the draw reproducible.
    """
    probs = probabilities(logits.cpu(), temperature=temperature, top_k=top_k)  # (b, V)
    if temperature == 0:
        return probs.argmax(dim=-1)  # (b,)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)  # (b,)


@torch.no_grad()
def generate_tokens(
    model: Callable[[torch.Tensor], torch.Tensor],
    tokens: torch.Tensor,
    length: int,
    *,
    context: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    seed: int | None = 0,
    device: torch.device | str | None = None,
    use_cache: bool = True,
) -> torch.Tensor:
    """Continue each row of ``tokens`` (b, t) by ``length`` tokens; returns (b, t + length) on the CPU.

    At every step the model sees only the last ``context`` tokens (seeds longer than the context
    are cropped to their end). ``seed`` seeds the sampler (None: PyTorch's global generator).
    The model runs in eval mode and is given back in the mode it was in. ``use_cache=True`` reuses
    keys and values while the text fits in the context, for models with a ``new_cache()`` method
    (others, and ``use_cache=False``, recompute the whole window at every step).
    """
    if tokens.dim() != 2 or tokens.size(1) == 0:
        raise ValueError(
            f"tokens must be (b, t) with t >= 1, got shape {tuple(tokens.shape)}; "
            "give at least one seed byte."
        )
    if device is None:
        device = next(iter(model.parameters())).device if isinstance(model, torch.nn.Module) else "cpu"
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    out = tokens.long().cpu()  # (b, t)
    cacheable = use_cache and callable(getattr(model, "new_cache", None))
    cache = None
    with evaluating(model):
        for _ in range(length):
            if cacheable and out.size(1) <= context:  # everything fits: feed only what the cache lacks
                cache = model.new_cache() if cache is None else cache
                fresh = out[:, len(cache[0]) :].to(device)  # (b, t) the first time, then (b, 1)
                logits = model(fresh, cache=cache)[:, -1, :]  # (b, V)
            else:
                window = out[:, -context:].to(device)  # (b, <= context)
                logits = model(window)[:, -1, :]  # (b, V): the prediction after the last byte
            choice = next_token(logits, temperature=temperature, top_k=top_k, generator=generator)  # (b,)
            out = torch.cat([out, choice[:, None]], dim=1)  # (b, t + 1)
    return out


def generate(
    model: Callable[[torch.Tensor], torch.Tensor],
    seed_text: str | bytes,
    length: int,
    *,
    context: int | None = None,
    temperature: float = 1.0,
    top_k: int | None = None,
    seed: int | None = 0,
    device: torch.device | str | None = None,
    use_cache: bool = True,
) -> str:
    """Continue ``seed_text`` by ``length`` bytes and return only the continuation, as text (chapter 07).

    ``context`` defaults to ``model.context``; ``temperature=0`` is greedy decoding; ``use_cache``
    as in :func:`generate_tokens`.
    """
    context = context if context is not None else getattr(model, "context", None)
    if context is None:
        raise ValueError("Pass context=... (the longest input the model takes); this model has no .context.")
    prompt = encode(seed_text)[None, :]  # (1, t)
    out = generate_tokens(
        model,
        prompt,
        length,
        context=context,
        temperature=temperature,
        top_k=top_k,
        seed=seed,
        device=device,
        use_cache=use_cache,
    )  # (1, t + length)
    return decode(out[0, prompt.size(1) :])


def greedy(
    model: Callable[[torch.Tensor], torch.Tensor],
    seed_text: str | bytes,
    length: int,
    *,
    context: int | None = None,
    device: torch.device | str | None = None,
) -> str:
    """The most likely continuation, one byte at a time: ``generate(..., temperature=0)``."""
    return generate(model, seed_text, length, context=context, temperature=0.0, device=device)
