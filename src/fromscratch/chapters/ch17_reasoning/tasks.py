"""Chapter 17's task for the course's own Llama: problems as tokens, worked solutions to imitate, groups
of sampled answers and their log-probabilities.

- :class:`Pieces`: a tokeniser of a few dozen pieces (digits, operators, ``": write "``, ``<answer>``,
  ...), longest match first, so a worked addition is about 50 tokens instead of 120 bytes;
- :func:`sft_batches`: prompt and worked solution (:func:`~fromscratch.data.verifiable.worked_solution`)
  as ``{"ids", "labels"}`` batches for :func:`~fromscratch.training.sft.assistant_loss` (the loss on the
  response's tokens only);
- :func:`sample_groups`: ``n`` answers to each of ``g`` problems through the one
  :func:`~fromscratch.generate.generate`, cut at ``</answer>``, with their rewards;
- :func:`response_logprobs`: the log-probability and the entropy of each response token under a model.

Shapes: ``g`` problems, ``n`` samples each, ``t`` response tokens (``tp`` prompt tokens), ``V`` pieces.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from fromscratch.data.verifiable import CLOSE, OPEN, Problem, worked_solution
from fromscratch.data.verifiers import correctness_reward, format_reward, parse_answer
from fromscratch.generate import generate
from fromscratch.tokenizers.special import BOS, IGNORE, PAD, SPECIAL_TOKENS

PIECES = (
    OPEN,
    CLOSE,
    ": write ",
    ", carry ",
    "carry ",
    *"0123456789",
    *"+-*/=() \n",
)


class Pieces:
    """Text <-> ids over :data:`PIECES` (after the course's special tokens), longest piece first."""

    def __init__(self, pieces: Sequence[str] = PIECES) -> None:
        self.pieces = tuple(pieces)
        self.offset = len(SPECIAL_TOKENS)
        self.ids = {piece: self.offset + i for i, piece in enumerate(self.pieces)}
        self.longest = sorted(self.pieces, key=len, reverse=True)
        self.vocab_size = self.offset + len(self.pieces)
        self.stop = self.ids[CLOSE]  # a response ends with its answer

    def encode(self, text: str) -> list[int]:
        out, i = [], 0
        while i < len(text):
            piece = next((p for p in self.longest if text.startswith(p, i)), None)
            if piece is None:
                raise ValueError(f"Pieces: {text[i]!r} (at {i} in {text!r}) is no piece; add it to PIECES.")
            out.append(self.ids[piece])
            i += len(piece)
        return out

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.pieces[i - self.offset] for i in ids if i >= self.offset)

    def prompt(self, problem: Problem) -> list[int]:
        """What the model reads before it answers: BOS, the question, a newline."""
        return [BOS, *self.encode(problem.prompt + "\n")]


def prompt_ids(tokenizer: Pieces, problem: Problem) -> list[int]:
    """What the model reads before it answers, as the task tokenizer writes it (:meth:`Pieces.prompt`, or
    a chat model's :class:`~.chat.ChatPrompts`)."""
    return tokenizer.prompt(problem)


def sft_batches(
    tokenizer: Pieces, problems: Sequence[Problem], batch_size: int, *, seed: int = 0
) -> Iterator[dict[str, Tensor]]:
    """Endless batches of prompt + worked solution: ``ids`` ``(b, t)`` padded with PAD at the end, and
    ``labels`` ``(b, t)``, the next token where it is the response's, IGNORE elsewhere."""
    rng = random.Random(seed)
    while True:
        rows, starts = [], []
        for problem in rng.sample(list(problems), batch_size):
            prompt = prompt_ids(tokenizer, problem)
            rows.append(prompt + tokenizer.encode(worked_solution(problem)))
            starts.append(len(prompt))
        t = max(map(len, rows))
        ids = torch.full((batch_size, t), PAD)
        labels = torch.full((batch_size, t), IGNORE)
        for i, (row, start) in enumerate(zip(rows, starts, strict=True)):
            ids[i, : len(row)] = torch.tensor(row)
            labels[i, start - 1 : len(row) - 1] = torch.tensor(row[start:])  # predict the response
        yield {"ids": ids, "labels": labels}


@dataclass
class Groups:
    """``n`` sampled responses to each of ``g`` problems."""

    tokens: Tensor  # (g * n, tp + t): prompt and response, rows of one problem next to each other
    mask: Tensor  # (g, n, t) bool: True at the response's tokens, up to and with </answer>
    rewards: Tensor  # (g, n): correctness (0 or 1)
    formatted: Tensor  # (g, n): the format reward (0 or 1)
    texts: list[list[str]]  # g lists of n responses
    prompt_len: int  # tp

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(self.mask.shape)


def sample_groups(
    model,
    tokenizer: Pieces,
    problems: Sequence[Problem],
    n: int,
    *,
    max_tokens: int,
    temperature: float = 1.0,
    seed: int = 0,
) -> Groups:
    """``n`` responses to each problem (all prompts of one length), sampled with ``temperature`` through
    :func:`~fromscratch.generate.generate` (KV cache) for at most ``max_tokens`` tokens, each cut at its
    first ``tokenizer.stop`` (kept), and scored; the tensors on the model's device. ``tokenizer``: any
    task tokenizer with ``prompt``, ``decode`` and ``stop`` (:class:`Pieces`, :class:`~.chat.ChatPrompts`)."""
    prompts = [prompt_ids(tokenizer, p) for p in problems]
    if len({len(p) for p in prompts}) != 1:
        raise ValueError("sample_groups: the prompts differ in length; draw problems of one size together.")
    tp = len(prompts[0])
    prompt = torch.tensor(prompts).repeat_interleave(n, dim=0)  # (g * n, tp)
    out = generate(model, prompt, steps=max_tokens, temperature=temperature, stop=[tokenizer.stop], seed=seed)
    response = out[:, tp:]  # (g * n, t)
    stopped = (response == tokenizer.stop).long()
    first = torch.where(stopped.any(1), stopped.argmax(1), response.size(1) - 1)  # the first </answer>
    mask = torch.arange(response.size(1))[None] <= first[:, None]  # (g * n, t)
    texts = [tokenizer.decode(row[m].tolist()) for row, m in zip(response, mask, strict=True)]
    g = len(problems)
    problem_of = [problems[i // n] for i in range(g * n)]
    rewards = [correctness_reward(p, text) for p, text in zip(problem_of, texts, strict=True)]
    formatted = [format_reward(p, text) for p, text in zip(problem_of, texts, strict=True)]
    device = next(model.parameters()).device
    return Groups(
        tokens=out.to(device),
        mask=mask.view(g, n, -1).to(device),
        rewards=torch.tensor(rewards).view(g, n).to(device),
        formatted=torch.tensor(formatted).view(g, n).to(device),
        texts=[texts[i * n : (i + 1) * n] for i in range(g)],
        prompt_len=tp,
    )


def response_logprobs(model, tokens: Tensor, prompt_len: int) -> tuple[Tensor, Tensor]:
    """``log π(token | before)`` and the entropy of ``π(· | before)`` at each response position:
    ``tokens`` ``(b, tp + t)`` -> two ``(b, t)``. Keeps the gradient (wrap in ``no_grad`` for constants).
    Only the response's positions meet the output layer (a chat model's ``V`` is 49,152)."""
    hidden = model.hidden(tokens[:, :-1])[
        :, prompt_len - 1 :
    ]  # (b, t, e): the states that predict tokens[tp:]
    logits = model.to_logits(hidden).float()  # (b, t, V)
    logp = torch.log_softmax(logits, dim=-1)  # (b, t, V)
    taken = logp.gather(-1, tokens[:, prompt_len:, None]).squeeze(-1)  # (b, t)
    entropy = -(logp.exp() * logp).sum(-1)  # (b, t)
    return taken, entropy


def answers(texts: Sequence[str]) -> list[str | None]:
    """The answer inside each response (None where there is none)."""
    return [parse_answer(text) for text in texts]


__all__ = [
    "PIECES",
    "Groups",
    "Pieces",
    "answers",
    "prompt_ids",
    "response_logprobs",
    "sample_groups",
    "sft_batches",
]
