"""The course's JavaScript Llama (``src/fromscratch/viz/js/llama.js``, chapter 14) under ``node``:
stories260K's greedy story from BOS byte for byte llama2.c's reference, its logits those of our PyTorch
Llama, its tokeniser our sentencepiece tokeniser, its sampling reproducible. Skipped without ``node``
or without the data mirror."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from fromscratch.data import fetch
from fromscratch.data.pretrained import STORIES260K
from fromscratch.interop import load_tinyllama
from fromscratch.interop.llama2c import STORIES260K_GREEDY_200
from fromscratch.viz.precomputed import JS_DIR

LLAMA_JS = JS_DIR / "llama.js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (the JavaScript Llama's tests)")

# Runs llama.js in node on the two files; reads one JSON request from stdin, prints one JSON answer.
DRIVER = """
const fs = require("fs");
const L = require(process.argv[1]);
const file = (path) => new Uint8Array(fs.readFileSync(path)).buffer;
const model = L.readModel(file(process.argv[2])), tok = L.readTokenizer(file(process.argv[3]));
const ask = JSON.parse(fs.readFileSync(0, "utf8"));
(async () => {
  const answer = {};
  const greedy = await L.generate(model, tok, [L.BOS], ask.steps, { temperature: 0 });
  answer.greedy = L.decode(tok, greedy);
  answer.greedyIds = greedy;
  answer.encoded = ask.texts.map((text) => L.encode(tok, text, false));
  answer.decoded = ask.idLists.map((ids) => L.decode(tok, ids));
  const cache = L.newCache(model);
  answer.logits = ask.logitIds.map((id) => Array.from(L.forward(model, cache, id)));
  const sampled = (seed, temperature, topP) =>
    L.generate(model, tok, [L.BOS], 40, { temperature, topP, seed, stopAtBos: true });
  answer.samples = [await sampled(7, 0.8, 0.9), await sampled(7, 0.8, 0.9), await sampled(8, 0.8, 0.9)];
  answer.tinyP = await sampled(3, 1.0, 1e-9);
  console.log(JSON.stringify(answer));
})();
"""
TEXTS = [  # chapter 14's oracle texts, and a few more
    "Once upon a time, there was a little girl named Lily.",
    "  two   spaces, a\ttab\n\nand newlines  ",
    "3 cats, 12,345 fish, 2024-01-31",
    "café, 日本語, 😀, e\u0301",
    "Lily saw a ☃.",
    "",
]


@pytest.fixture(scope="module")
def files() -> tuple[Path, Path]:
    mirror = os.environ.get("FROMSCRATCH_MIRROR")
    if not mirror or not (Path(mirror) / "tinyllamas" / "stories260K.bin").is_file():
        pytest.skip("set FROMSCRATCH_MIRROR to the course's data mirror (CI: ../shared/data)")
    return fetch(STORIES260K["stories260K.bin"]), fetch(STORIES260K["tok512.bin"])


@pytest.fixture(scope="module")
def answer(files) -> dict:
    model, tokenizer = load_tinyllama("stories260K")
    ask = {
        "steps": 200,
        "texts": TEXTS,
        "idLists": [tokenizer.encode(t, bos=True) for t in TEXTS] + [[1, 3 + 0xE2, 3 + 0x98, 3 + 0x83, 2]],
        "logitIds": tokenizer.encode("Lily saw a big dog.")[:6],
    }
    done = subprocess.run(
        [NODE, "-e", DRIVER, str(LLAMA_JS), *map(str, files)],
        input=json.dumps(ask),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return {**json.loads(done.stdout), "ask": ask, "model": model, "tokenizer": tokenizer}


def test_greedy_story_from_bos_is_llama2cs_reference_byte_for_byte(answer, files):
    reference = (
        Path(os.environ["FROMSCRATCH_MIRROR"]) / "tinyllamas" / "stories260K-greedy-200.txt"
    ).read_bytes()
    assert answer["greedy"].encode("utf-8") == reference
    assert answer["greedy"] == STORIES260K_GREEDY_200
    assert len(answer["greedyIds"]) == 201  # BOS and the 200 steps the Python chapter checks


def test_logits_are_our_pytorch_llamas(answer):
    ids = torch.tensor([answer["ask"]["logitIds"]])  # (1, t)
    with torch.no_grad():
        ours = answer["model"](ids)[0]  # (t, V): every position in one pass, no cache
    theirs = torch.tensor(answer["logits"])  # (t, V): one position at a time with the KV cache
    torch.testing.assert_close(theirs, ours, atol=2e-4, rtol=0)


def test_tokeniser_is_our_sentencepiece_tokeniser(answer):
    tokenizer = answer["tokenizer"]
    assert answer["encoded"] == [tokenizer.encode(t, bos=False) for t in TEXTS]
    expected = [tokenizer.decode(ids) for ids in answer["ask"]["idLists"]]
    assert answer["decoded"] == expected and answer["decoded"][-1] == "☃"


def test_sampling_is_reproducible_and_tiny_p_is_greedy(answer):
    first, again, other = answer["samples"]
    assert first == again and first != other
    assert answer["tinyP"] == answer["greedyIds"][: len(answer["tinyP"])]  # the nucleus holds one token


def test_the_javascript_llama_stays_short():
    lines = LLAMA_JS.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, "llama.js is read beside the Python: keep it short"
    assert max(len(line) for line in lines) <= 110  # the Python's limit
