"""llama2.c's stories260K in our code (chapter 14): its config, its greedy story equal to llama2.c's own
reference character for character, and clear errors for files that do not match their header."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
import torch

from fromscratch.generate import generate
from fromscratch.interop import load_tinyllama, read_llama2c
from fromscratch.interop.llama2c import STORIES260K_GREEDY_200
from fromscratch.utils import count_parameters


@pytest.fixture(scope="module")
def shared() -> Path:
    """The offline mirror ($FROMSCRATCH_MIRROR, CI: ../shared/data); skip when it is not set."""
    path = os.environ.get("FROMSCRATCH_MIRROR")
    if not path or not (Path(path) / "tinyllamas" / "stories260K.bin").is_file():
        pytest.skip("set FROMSCRATCH_MIRROR to the course's data mirror (CI: ../shared/data)")
    return Path(path)


@pytest.fixture(scope="module")
def stories(shared):
    return load_tinyllama("stories260K")


def test_the_model_is_llama2cs_stories260k(shared, stories):
    model, tokenizer = stories
    c = model.config
    assert (c.emb, c.hidden, c.depth, c.heads, c.kv_heads, c.vocab_size, c.context) == (
        64,
        172,
        5,
        8,
        4,
        512,
        512,
    )
    assert (
        c.tied and c.norm_kind == "rms" and c.feedforward == "swiglu" and c.positions == "rope" and not c.bias
    )
    assert count_parameters(model) == 260_032
    assert len(tokenizer) == 512 and not model.training
    ids = torch.tensor([tokenizer.encode("Once upon a time")])
    assert model(ids).shape == (1, 5, 512)


def test_greedy_from_bos_is_llama2cs_reference_character_for_character(shared, stories):
    model, tokenizer = stories
    reference = (shared / "tinyllamas" / "stories260K-greedy-200.txt").read_text(encoding="utf-8")
    assert reference == STORIES260K_GREEDY_200  # the package's copy is the shared reference
    out = generate(model, torch.tensor([[1]]), steps=200, temperature=0)  # BOS = 1
    assert 1 not in out[0, 1:].tolist()  # llama2.c would stop at a second BOS
    assert tokenizer.decode(out[0].tolist()) == reference


def test_a_prompt_longer_than_the_context_is_refused(shared, stories):
    model, _ = stories
    with pytest.raises(ValueError, match="512"):
        model(torch.ones(1, 513, dtype=torch.long))


def test_a_file_whose_size_does_not_match_its_header_says_expected_and_actual_bytes(shared, tmp_path):
    data = (shared / "tinyllamas" / "stories260K.bin").read_bytes()
    cut = tmp_path / "cut.bin"
    cut.write_bytes(data[:-100])
    with pytest.raises(ValueError, match=r"expected 1,056,540 bytes, got 1,056,440"):
        read_llama2c(cut)
    tiny = tmp_path / "tiny.bin"
    tiny.write_bytes(data[:10])
    with pytest.raises(ValueError, match="expected a header of 28 bytes, got 10"):
        read_llama2c(tiny)


def test_an_untied_file_loads_its_own_output_layer(shared, tmp_path, stories):
    """A negative vocabulary size in the header means an output layer of its own after the RoPE table."""
    data = bytearray((shared / "tinyllamas" / "stories260K.bin").read_bytes())
    header = list(struct.unpack_from("<7i", data))
    header[5] = -header[5]
    struct.pack_into("<7i", data, 0, *header)
    output = torch.randn(512, 64, generator=torch.Generator().manual_seed(0))
    path = tmp_path / "untied.bin"
    path.write_bytes(bytes(data) + output.numpy().tobytes())
    model = read_llama2c(path)
    assert not model.config.tied
    torch.testing.assert_close(model.to_logits.weight, output)
    torch.testing.assert_close(model.token_embedding.weight, stories[0].token_embedding.weight)


def test_the_files_are_registered_with_their_canonical_urls_and_hashes(shared):
    from fromscratch.data.pretrained import STORIES260K

    lines = (shared / "SHA256SUMS").read_text().split("\n")
    sums = {Path(rel).name: digest for digest, rel in (line.split() for line in lines if line.strip())}
    for name in ("stories260K.bin", "tok512.bin"):
        registered = STORIES260K[name]
        assert registered.url == f"https://huggingface.co/karpathy/tinyllamas/resolve/main/stories260K/{name}"
        assert registered.sha256 == sums[name]
    assert STORIES260K["tok512.model"].url is None  # not byte-identical to the published file: mirror only
