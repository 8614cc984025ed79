"""Chat templates: a conversation as the one text a chat model reads, and which of its tokens it must learn
to write (chapter 15).

A chat model is still a language model: it continues a token sequence. What makes it an assistant is
that it was fine-tuned on conversations written in one fixed **template**. SmolLM2 (like Qwen and
many others) uses **ChatML**: every turn is ``<|im_start|>`` + role + newline + content +
``<|im_end|>`` + newline, where ``<|im_start|>`` and ``<|im_end|>`` are single special tokens; a
conversation without a system turn first gets the model's default one; and to ask for a reply, the
text ends with ``<|im_start|>assistant\\n`` (the *generation prompt*), so the next tokens the model
writes are the assistant's, up to its ``<|im_end|>``::

    <|im_start|>system
    You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>
    <|im_start|>user
    What is the capital of France?<|im_end|>
    <|im_start|>assistant

:func:`render_chatml` writes that text (equal to ``transformers``' ``apply_chat_template`` with the
file's Jinja template). :func:`encode_chat` returns its token ids and the **assistant mask**: True at
the tokens of the assistant's replies (their content and the closing ``<|im_end|>``, so the model also
learns to stop), False at the system's and the user's text and at the template's own tokens.
Supervised fine-tuning scores only the True positions. Shapes: ``t`` tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

IM_START, IM_END = "<|im_start|>", "<|im_end|>"
ROLES = ("system", "user", "assistant")
SMOLLM2_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"  # the file's template
Message = dict[str, str]  # {"role": "user", "content": "..."}, as transformers' chat templates take it
# SmolLM2-135M-Instruct's template as its files hold it (Jinja, run by transformers' apply_chat_template)
SMOLLM2_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
    "<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
    "{% endif %}"
)


class Encoder(Protocol):
    """What :func:`encode_chat` needs of a tokenizer: :class:`~fromscratch.tokenizers.BytePairEncoding`."""

    special: dict[str, int]

    def encode(self, text: str, *, allowed_special=...) -> list[int]: ...


def check_messages(messages: Sequence[Message]) -> None:
    """A ValueError that says what is wrong unless ``messages`` is a list of ``{"role", "content"}`` dicts
    with roles from :data:`ROLES`, a system turn only first, and no special token inside a content."""
    if isinstance(messages, (str, dict)) or not len(messages):
        raise ValueError('messages must be a non-empty list of {"role": ..., "content": ...} dicts.')
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or set(message) != {"role", "content"}:
            raise ValueError(
                f'message {i} must be a dict with exactly the keys "role" and "content", got {message!r}.'
            )
        role, content = message["role"], message["content"]
        if role not in ROLES:
            raise ValueError(f"message {i} has role {role!r}; ChatML's roles are {', '.join(ROLES)}.")
        if role == "system" and i:
            raise ValueError(f"message {i} is a system turn; only the first message may be one.")
        if not isinstance(content, str) or IM_START in content or IM_END in content:
            raise ValueError(f"message {i}: the content must be a string without {IM_START} or {IM_END}.")


def with_system(messages: Sequence[Message], default_system: str | None = SMOLLM2_SYSTEM) -> list[Message]:
    """``messages`` with the default system turn put first when they have none (as SmolLM2's template)."""
    check_messages(messages)
    if default_system is None or messages[0]["role"] == "system":
        return list(messages)
    return [{"role": "system", "content": default_system}, *messages]


def render_chatml(
    messages: Sequence[Message],
    *,
    add_generation_prompt: bool = False,
    default_system: str | None = SMOLLM2_SYSTEM,
) -> str:
    """The ChatML text of ``messages``; with ``add_generation_prompt``, ending in
    ``<|im_start|>assistant\\n``.

    ``default_system``: the system turn put first when the conversation has none (None: none)."""
    turns = [
        f"{IM_START}{m['role']}\n{m['content']}{IM_END}\n" for m in with_system(messages, default_system)
    ]
    return "".join(turns) + (f"{IM_START}assistant\n" if add_generation_prompt else "")


def encode_chat(
    tokenizer: Encoder,
    messages: Sequence[Message],
    *,
    add_generation_prompt: bool = False,
    default_system: str | None = SMOLLM2_SYSTEM,
) -> tuple[list[int], list[bool]]:
    """``(ids, assistant_mask)``, both of length ``t``: the ids of :func:`render_chatml`'s text, and True
    at each token of an assistant's content and its closing ``<|im_end|>``.

    The ids equal ``tokenizer.encode(render_chatml(...), allowed_special="all")``: each turn is encoded
    as one piece between special tokens, as the whole text would be; the mask marks the tokens after
    the turn's header (role and newline). A content that starts with white space would merge with that
    newline into one token, so no token boundary would separate what is scored: a ValueError says so."""
    for token in (IM_START, IM_END):
        if token not in tokenizer.special:
            raise ValueError(f"This tokenizer has no special token {token}; it is not a ChatML tokenizer.")
    start, end = tokenizer.special[IM_START], tokenizer.special[IM_END]
    newline = tokenizer.encode("\n")
    ids: list[int] = []
    mask: list[bool] = []
    for message in with_system(messages, default_system):
        header = tokenizer.encode(f"{message['role']}\n")
        body = tokenizer.encode(f"{message['role']}\n{message['content']}")  # one piece, as in the full text
        if body[: len(header)] != header:
            raise ValueError(
                f"The content {message['content'][:30]!r}... starts with white space, which would share a "
                f"token "
                f"with the header's newline; strip it."
            )
        scored = message["role"] == "assistant"
        ids += [start, *body, end, *newline]
        mask += (
            [False] * (1 + len(header)) + [scored] * (len(body) - len(header) + 1) + [False] * len(newline)
        )
    if add_generation_prompt:
        prompt = [start, *tokenizer.encode("assistant\n")]
        ids += prompt
        mask += [False] * len(prompt)
    return ids, mask


__all__ = [
    "IM_END",
    "IM_START",
    "ROLES",
    "SMOLLM2_SYSTEM",
    "SMOLLM2_TEMPLATE",
    "Message",
    "check_messages",
    "encode_chat",
    "render_chatml",
    "with_system",
]
