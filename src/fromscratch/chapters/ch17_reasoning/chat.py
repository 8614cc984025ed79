"""Chapter 17's real model: SmolLM2-135M-Instruct in the course's Llama (read from its GGUF file, as in
chapter 15), asked the chapter's problems through its chat template, and given LoRA for GRPO.

- :class:`ChatPrompts`: the task tokenizer that :func:`~.tasks.sample_groups`, :func:`~.scores.sample_scores`
  and :func:`~.grpo.grpo_step` take in place of :class:`~.tasks.Pieces`: a problem becomes a ChatML
  conversation (the default system turn, one solved example, the user's question with the answer format,
  the assistant's opening), a response ends with ``<|im_end|>``, and the text the verifier reads is the
  response without it;
- :func:`chat_models`: the frozen reference (the model as read) and the policy (a copy with LoRA), with
  their tokenizer: SmolLM2, or in ``smoke`` a tiny random Llama over bytes with ChatML's special tokens
  (the same path in seconds).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import torch

from fromscratch.blocks.lora import add_lora
from fromscratch.data.verifiable import CLOSE, OPEN, Problem
from fromscratch.interop.gguf_llama import load_smollm2
from fromscratch.models.llama import Llama, LlamaConfig
from fromscratch.tokenizers.bpe import BytePairEncoding
from fromscratch.tokenizers.chat import IM_END, IM_START, SMOLLM2_SYSTEM, encode_chat

SMOLLM2 = "SmolLM2-135M-Instruct"
# the user's turn: the question in words, then the format the verifier reads (exactly one answer, last)
QUESTION = "What is {a} + {b}? Reply with the sum, written as " + OPEN + "number" + CLOSE + "."
EXAMPLE = Problem("addition", (12, 34), 46)  # the solved example shown before each question (a train problem)


def worked(problem: Problem) -> str:
    """The example's reply: the sum written out, then the answer in the verifier's format."""
    a, b = problem.numbers
    return f"{a} + {b} = {problem.target}\n{OPEN}{problem.target}{CLOSE}"


class ChatPrompts:
    """Problems as ChatML prompts for a chat model's tokenizer (a ``BytePairEncoding`` with ``<|im_start|>``
    and ``<|im_end|>``): ``prompt(problem)`` -> ids, ``decode(ids)`` -> text without ``<|im_end|>``,
    ``stop`` (the id of ``<|im_end|>``), ``vocab_size``."""

    def __init__(
        self,
        tokenizer: BytePairEncoding,
        *,
        system: str | None = SMOLLM2_SYSTEM,
        example: Problem | None = EXAMPLE,
    ) -> None:
        self.tokenizer, self.system, self.example = tokenizer, system, example
        self.stop = tokenizer.special[IM_END]  # a response ends with its turn
        self.vocab_size = len(tokenizer)

    def question(self, problem: Problem) -> str:
        if problem.task != "addition":
            raise ValueError(f"ChatPrompts asks additions; got a {problem.task} problem.")
        a, b = problem.numbers
        return QUESTION.format(a=a, b=b)

    def prompt(self, problem: Problem) -> list[int]:
        """The ids of the conversation up to ``<|im_start|>assistant\\n``: what the model reads first."""
        messages = [{"role": "user", "content": self.question(problem)}]
        if self.example is not None:  # one solved turn first: the format shown, not only said
            shown = [
                {"role": "user", "content": self.question(self.example)},
                {"role": "assistant", "content": worked(self.example)},
            ]
            messages = shown + messages
        return encode_chat(self.tokenizer, messages, add_generation_prompt=True, default_system=self.system)[
            0
        ]

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode([i for i in ids if i != self.stop])

    def describe(self) -> dict:
        """What decides the prompts (for a checkpoint's name): the system turn, the question, the example."""
        shown = None if self.example is None else [self.question(self.example), worked(self.example)]
        return {"system": self.system, "question": QUESTION, "example": shown}


def stand_in(config: LlamaConfig, *, seed: int = 0) -> tuple[Llama, BytePairEncoding]:
    """A random Llama of ``config`` over 256 bytes plus three ChatML specials (``vocab_size`` 259), and
    that tokenizer: SmolLM2's path without its file, for the ``smoke`` profile."""
    specials = ("<|endoftext|>", IM_START, IM_END)  # SmolLM2's first three ids, here after the bytes
    tokenizer = BytePairEncoding(
        {}, {i: bytes([i]) for i in range(256)}, special={s: 256 + i for i, s in enumerate(specials)}
    )
    if config.vocab_size != len(tokenizer):
        raise ValueError(
            f"The stand-in's vocab_size is {len(tokenizer)} (bytes and 3 specials), not {config.vocab_size}."
        )
    with torch.random.fork_rng(devices=[]):  # the caller's random state stays as it was
        torch.manual_seed(seed)
        model = Llama(config)
    return model.eval(), tokenizer


def chat_models(
    model: str, *, lora: dict, tiny: LlamaConfig, seed: int = 0
) -> tuple[Llama, Llama, ChatPrompts]:
    """``(reference, policy, prompts)``: the model ``model`` (``"SmolLM2-135M-Instruct"``, or ``"tiny"``:
    :func:`stand_in` of ``tiny``) frozen, a copy of it with LoRA (``lora``: ``targets``, ``rank``,
    ``alpha``; A drawn with ``seed``, B zero: at first the policy is the reference exactly), and the
    problems' prompts for its tokenizer."""
    if model == SMOLLM2:
        reference, tokenizer = load_smollm2()
    elif model == "tiny":
        reference, tokenizer = stand_in(tiny, seed=seed)
    else:
        raise ValueError(f"model is {SMOLLM2!r} or 'tiny'; got {model!r}.")
    reference = reference.eval().requires_grad_(False)
    policy = copy.deepcopy(reference)
    add_lora(policy, seed=seed, **lora)  # freezes every weight, then adds the trainable A and B
    return reference, policy, ChatPrompts(tokenizer)


__all__ = ["EXAMPLE", "QUESTION", "SMOLLM2", "ChatPrompts", "chat_models", "stand_in", "worked"]
