"""A real model in the page: llama2.c's stories260K writing stories in the reader's browser (chapter 14).

``llama_in_browser(weights, tokenizer)`` returns one HTML output that holds the model file (llama2.c's
version-0 ``.bin``, base64), its ``tokenizer.bin``, the course's JavaScript Llama (``js/llama.js``: the
forward pass, RoPE, grouped-query attention, the KV cache, the tokeniser and sampling, in plain
JavaScript a learner can read beside the Python) and its controls (``js/llama_page.js``): a prompt box,
a temperature slider (0 = greedy), the number of tokens, a seed, and a button that checks the greedy
story from BOS against llama2.c's reference. Nothing is fetched: the book, a deck and a notebook run
it the same way, offline. The files are read when the chapter runs (from the data registry), so the
weights travel in the built page and are never committed.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
from pathlib import Path

from fromscratch.viz.precomputed import JS_DIR

__all__ = ["BrowserLlama", "llama_in_browser"]

_count = itertools.count()


class BrowserLlama:
    """stories260K as an HTML output that runs it in JavaScript (see the module docstring)."""

    def __init__(
        self,
        model: bytes,
        tokenizer: bytes,
        *,
        reference: str | None,
        steps: int,
        prompt: str,
        temperature: float,
    ):
        self.model, self.tokenizer, self.reference = model, tokenizer, reference
        self.steps, self.prompt, self.temperature = steps, prompt, temperature

    def __repr__(self) -> str:
        return (
            f"stories260K in the browser ({len(self.model):,} bytes of weights, llama.js): "
            "shown as a page with a prompt box and a temperature slider in Jupyter and the book"
        )

    def _repr_html_(self) -> str:
        ident = f"fs-llama-{next(_count)}"
        code = (JS_DIR / "llama.js").read_text(encoding="utf-8")
        page = (JS_DIR / "llama_page.js").read_text(encoding="utf-8").replace("LLAMA_ID", ident)
        reference = json.dumps({"text": self.reference or "", "steps": self.steps}).replace("</", "<\\/")
        check = (
            f"<button type='button' class='fs-llama-check'>check: {self.steps} greedy tokens from BOS "
            "against llama2.c's story</button>"
            if self.reference
            else "<span class='fs-llama-check' hidden></span>"
        )

        def blob(name: str, data: bytes) -> str:
            encoded = base64.b64encode(data).decode("ascii")
            return f"<script type='application/octet-stream' class='fs-llama-{name}'>{encoded}</script>"

        return (
            f"<div class='fromscratch-llama' id='{ident}' style='border:1px solid #999;border-radius:6px;"
            "padding:0.6em;margin:0.5em 0'>"
            "<div style='font-weight:bold'>stories260K, running in this page (llama.js, no server)</div>"
            "<div style='display:flex;flex-wrap:wrap;gap:0.4em 1.2em;align-items:center;margin:0.4em 0'>"
            f"<label>prompt <input type='text' class='fs-llama-prompt' size='28' "
            f"value='{html.escape(self.prompt, quote=True)}'></label>"
            "<label>temperature <input type='range' class='fs-llama-temperature' min='0' max='1.5' "
            f"step='0.05' value='{self.temperature:g}'> <output>{self.temperature:g}</output></label>"
            "<label>tokens <input type='number' class='fs-llama-steps' min='1' max='500' "
            f"value='{self.steps}' style='width:4.5em'></label>"
            "<label>seed <input type='number' class='fs-llama-seed' min='1' value='1' "
            "style='width:4em'></label>"
            "<button type='button' class='fs-llama-generate'>generate</button>"
            f"{check}</div>"
            "<div style='font-size:0.9em'>temperature 0 is greedy; above it, sampling from the top-p = 0.9 "
            "nucleus; a story ends where the model starts a new one (BOS)</div>"
            "<pre class='fs-llama-output' style='white-space:pre-wrap;min-height:5em;margin:0.4em 0'></pre>"
            "<div class='fs-llama-status' style='font-size:0.9em'></div>"
            f"<details><summary>the model in JavaScript: llama.js, {len(code.splitlines())} lines</summary>"
            f"<pre style='font-size:0.8em;max-height:30em;overflow:auto'>{html.escape(code)}</pre></details>"
            f"{blob('model', self.model)}{blob('tokenizer', self.tokenizer)}"
            f"<script type='application/json' class='fs-llama-reference'>{reference}</script>"
            f"<script>{code}</script><script>{page}</script></div>"
        )


def llama_in_browser(
    weights: str | Path | bytes,
    tokenizer: str | Path | bytes,
    *,
    reference: str | None = None,
    steps: int = 200,
    prompt: str = "Once upon a time",
    temperature: float = 0.8,
) -> BrowserLlama:
    """stories260K (or another llama2.c version-0 model) generating in the reader's browser (chapter 14).

    weights, tokenizer: llama2.c's model ``.bin`` and ``tokenizer.bin`` (paths or bytes), e.g. from
    ``data.fetch``. reference: the text ``steps`` greedy tokens from BOS must give (llama2.c's test
    expectation); the page gets a button that checks it. Shown when last in a cell.
    """
    model = weights if isinstance(weights, bytes) else Path(weights).read_bytes()
    vocabulary = tokenizer if isinstance(tokenizer, bytes) else Path(tokenizer).read_bytes()
    if len(model) < 28 or len(model) % 4:
        raise ValueError(
            f"{len(model):,} bytes is not a llama2.c model (a 28-byte header, then float32 weights); "
            "pass stories260K.bin (data.fetch(STORIES260K['stories260K.bin']))."
        )
    return BrowserLlama(
        model, vocabulary, reference=reference, steps=steps, prompt=prompt, temperature=temperature
    )
