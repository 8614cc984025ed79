"""Decoding an encoder-decoder: batched greedy and beam search, and ``translate`` (chapter 09).

A translation model gives, for a source and a target prefix, the distribution of the next target
token. Decoding builds the target from ``<s>`` one token at a time:

* **greedy**: append the most likely token; stop at ``</s>``;
* **beam search**: keep the ``beam_size`` most probable prefixes (by summed log-probability); each
  step extends every one by every token and keeps the best ``beam_size`` of all extensions. A
  finished hypothesis stays in the beam with its score frozen. At the end the hypotheses are ranked
  by score divided by a **length penalty** ``((5 + length) / 6) ** alpha`` (Wu et al. 2016), since
  raw log-probabilities favour short outputs. ``beam_size=1`` is greedy decoding.

Both run a whole batch at once (``b`` sentences, ``b * beam_size`` rows), stop a sentence at
``</s>`` or at ``max_len_a * source length + max_len_b`` tokens, and forbid any ``no_repeat_ngram``-gram
to occur twice, the cure for the loops ("ein Mann ein Mann ein Mann ...") that an undertrained model
falls into.

The model needs three methods: ``encode(src (b, ts), src_padding_mask (b, ts)) -> memory`` (a tensor
or a tuple of tensors with the batch first), ``new_cache()`` and ``decode(tgt_in (b, tt), memory,
src_padding_mask, cache=cache) -> logits (b, tt, V)``, one row per position of ``tgt_in``: each step
feeds only the token just chosen (``tt = 1``), and the cache remembers the rest (the transformer's keys
and values, the RNN's state).
When the beam reorders its hypotheses, every part of the cache with a ``select(rows)`` method follows.
:class:`~fromscratch.models.EncoderDecoder` and the RNN baselines have all three.
"""

from __future__ import annotations

import unicodedata

import torch
from torch import Tensor

from fromscratch.tokenizers.special import BOS as BOS_ID
from fromscratch.tokenizers.special import EOS as EOS_ID
from fromscratch.tokenizers.special import PAD as PAD_ID
from fromscratch.utils import evaluating


def _select(memory, index: Tensor):
    """Rows ``index`` of a memory (a tensor or a tuple of tensors, batch first)."""
    if memory is None:
        return None
    if isinstance(memory, tuple):
        return tuple(_select(m, index) for m in memory)
    return memory.index_select(0, index)


def _select_cache(cache, rows: Tensor) -> None:
    """Reorder a decoding cache in place: every object in it with a ``select(rows)`` method keeps ``rows``."""
    if hasattr(cache, "select"):
        cache.select(rows)
    elif isinstance(cache, (list, tuple)):
        for part in cache:
            _select_cache(part, rows)


def detokenize(tokenizer, ids: list[int]) -> str:
    """The text of output token ids, special tokens dropped and control characters replaced by
    "\ufffd": byte-level BPE can decode an undertrained model's output to any byte, such as an ESC
    that would garble a terminal or a page."""
    text = tokenizer.decode(ids, skip_special_tokens=True)
    return "".join("\ufffd" if unicodedata.category(ch) == "Cc" and ch not in "\t\n" else ch for ch in text)


def block_repeats(logits: Tensor, prefix: Tensor, n: int) -> Tensor:
    """Forbid tokens that would repeat an ``n``-gram already in ``prefix``: logits ``(B, V)``, prefix
    ``(B, t)``.

    Where the last ``n - 1`` tokens occurred earlier, the token that followed them then gets ``-inf``.
    """
    B, t = prefix.shape
    if n < 1 or t < n:
        return logits
    if n == 1:
        return logits.scatter(1, prefix, float("-inf"))
    windows = prefix.unfold(1, n - 1, 1)  # (B, t - n + 2, n - 1)
    match = (windows[:, :-1] == windows[:, -1:]).all(dim=-1)  # (B, t - n + 1): earlier windows = the suffix
    following = prefix[:, n - 1 :]  # (B, t - n + 1): the token after each earlier window
    banned = torch.where(match, following, logits.size(1))  # (B, t - n + 1), V = "nothing"
    extended = torch.cat([logits, logits.new_zeros(B, 1)], dim=1)  # (B, V + 1)
    return extended.scatter(1, banned, float("-inf"))[:, :-1]  # (B, V)


@torch.no_grad()
def beam_search(
    model,
    src: Tensor,
    src_padding_mask: Tensor,
    *,
    beam_size: int = 4,
    length_penalty: float = 0.6,
    max_len_a: float = 1.5,
    max_len_b: int = 10,
    no_repeat_ngram: int = 4,
) -> list[list[int]]:
    """Beam search for a batch: src ``(b, ts)``, ``src_padding_mask (b, ts)`` (True at real tokens).

    Returns one list of target ids per sentence, without ``<s>`` and ``</s>``. ``beam_size=1`` is
    greedy decoding. ``length_penalty`` is the exponent ``alpha`` (0: rank by raw log-probability).
    Sentence ``i`` gets at most ``max_len_a * ts_i + max_len_b`` tokens (and no more than the model's
    ``context``); ``no_repeat_ngram=0`` switches the repetition guard off.
    """
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, got {beam_size}.")
    b, k = src.size(0), beam_size
    with evaluating(model):
        memory = model.encode(src, src_padding_mask)
        rows = torch.arange(b, device=src.device).repeat_interleave(k)  # (b·k,): the sentence of each row
        memory, mask = _select(memory, rows), src_padding_mask.index_select(0, rows)
        limit = (max_len_a * src_padding_mask.sum(1) + max_len_b).long()  # (b,)
        limit = limit.clamp(max=getattr(model, "context", 10**9) - 1).repeat_interleave(k)  # (b·k,)
        tokens = torch.full((b * k, 1), BOS_ID, dtype=torch.long, device=src.device)  # (b·k, 1)
        scores = torch.full((b, k), float("-inf"), device=src.device)
        scores[:, 0] = 0.0  # all beams start as the same "<s>": keep one copy
        scores = scores.flatten()  # (b·k,)
        cache = model.new_cache()
        finished = torch.zeros(b * k, dtype=torch.bool, device=src.device)
        lengths = torch.zeros(b * k, dtype=torch.long, device=src.device)  # tokens before </s> (or the cut)
        for _ in range(int(limit.max())):
            logits = model.decode(tokens[:, -1:], memory, mask, cache=cache)[:, -1].float()  # (b·k, V)
            logits = block_repeats(logits, tokens[:, 1:], no_repeat_ngram)  # repeats get -inf
            logp = torch.log_softmax(logits, dim=-1)  # (b·k, V)
            V = logp.size(1)
            logp[finished] = float("-inf")
            logp[finished, PAD_ID] = 0.0  # a finished hypothesis only extends by <pad>, at no cost
            candidates = (scores[:, None] + logp).view(b, k * V)  # (b, k·V)
            best, index = candidates.topk(k, dim=1)  # (b, k)
            first_row = torch.arange(b, device=src.device)[:, None] * k  # (b, 1): each sentence's first row
            origin = (index // V + first_row).flatten()  # (b·k,): the row each new hypothesis extends
            token = (index % V).flatten()  # (b·k,)
            tokens = torch.cat([tokens[origin], token[:, None]], dim=1)  # (b·k, step + 2)
            _select_cache(cache, origin)  # each row's cache follows its hypothesis
            scores, finished, lengths = best.flatten(), finished[origin], lengths[origin]
            lengths = lengths + (~finished & (token != EOS_ID)).long()
            finished = finished | (token == EOS_ID) | (lengths >= limit)
            if bool(finished.all()):
                break
        penalty = ((5.0 + lengths.float()) / 6.0) ** length_penalty  # (b·k,)
        best = (scores / penalty).view(b, k).argmax(dim=1)  # (b,)
        chosen = tokens[best + torch.arange(b, device=src.device) * k, 1:]  # (b, steps)
        lengths = lengths[best + torch.arange(b, device=src.device) * k]
    return [row[:n].tolist() for row, n in zip(chosen, lengths.tolist(), strict=True)]


def greedy_search(model, src: Tensor, src_padding_mask: Tensor, **options) -> list[list[int]]:
    """Greedy decoding of a batch: :func:`beam_search` with ``beam_size=1`` (same options)."""
    return beam_search(model, src, src_padding_mask, beam_size=1, **options)


def translate(
    model,
    tokenizer,
    sentences: str | list[str],
    *,
    beam_size: int = 1,
    batch_size: int = 64,
    device: torch.device | str | None = None,
    **options,
) -> str | list[str]:
    """Translate one sentence (a ``str``) or a list of them with a trained encoder-decoder.

    ``tokenizer`` is the ``tokenizers.Tokenizer`` the model was trained with. Sentences are batched
    by length; ``beam_size`` and ``options`` go to :func:`beam_search`. Control characters in an
    output (an undertrained byte-level model can write any byte) become "\ufffd". The empty sentence
    translates to the empty string; a sentence longer than the model's ``context`` tokens raises a
    ValueError that names the limit.
    """
    single = isinstance(sentences, str)
    sentences = [sentences] if single else list(sentences)
    device = device or next(model.parameters()).device
    ids = [enc.ids for enc in tokenizer.encode_batch(sentences)] if sentences else []
    context = getattr(model, "context", None)
    for sentence, seq in zip(sentences, ids, strict=True):
        if context is not None and len(seq) > context:
            raise ValueError(
                f"The sentence {sentence[:40]!r}... has {len(seq)} tokens but the model reads at most "
                f"context={context}; split it into shorter sentences."
            )
    results = [""] * len(sentences)
    order = sorted((i for i in range(len(ids)) if ids[i]), key=lambda i: len(ids[i]))
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        t = max(len(ids[i]) for i in chunk)
        src = torch.full((len(chunk), t), PAD_ID, dtype=torch.long)
        for row, i in enumerate(chunk):
            src[row, : len(ids[i])] = torch.tensor(ids[i])
        src = src.to(device)
        out = beam_search(model, src, src != PAD_ID, beam_size=beam_size, **options)
        for i, target in zip(chunk, out, strict=True):
            results[i] = detokenize(tokenizer, target)
    return results[0] if single else results


__all__ = ["beam_search", "block_repeats", "detokenize", "greedy_search", "translate"]
