"""all-MiniLM-L6-v2 in our ``BertEncoder`` (:func:`minilm_encoder`, chapters 10 and 15), and its Hugging Face
twin (chapter 10 and the tests): the oracle for ``load_bert``.

:func:`fromscratch.interop.huggingface.load_bert` reads the registered MiniLM files into **our**
``BertEncoder``; :func:`hf_minilm` reads the same files into Hugging Face's ``BertModel``, so the two
can be compared on the same ids (chapter 10, section 10.6, and ``tests/test_bert.py`` through the
``hf_minilm`` fixture of ``tests/conftest.py``).
"""

from __future__ import annotations

from dataclasses import replace

from torch import nn

from fromscratch.data.pretrained import MINILM
from fromscratch.data.registry import fetch
from fromscratch.models.bert import BertEncoder

BUFFERS = {"embeddings.position_ids"}  # a buffer of 0..511 some versions save and others rebuild


def hf_minilm() -> nn.Module:
    """Hugging Face's ``transformers.BertModel`` with all-MiniLM-L6-v2's config and weights, in eval mode.

    Called as ``hf_minilm()(ids, attention_mask=mask.long()).last_hidden_state``: ``(b, t)`` ids and
    mask (1 at real tokens) in, hidden states ``(b, t, 384)`` out. Raises ValueError if the file's
    weights and the model's parameters differ by more than the ``position_ids`` buffer.
    """
    import transformers
    from safetensors.torch import load_file

    model = transformers.BertModel(transformers.BertConfig.from_json_file(fetch(MINILM["config.json"])))
    result = model.load_state_dict(load_file(fetch(MINILM["model.safetensors"])), strict=False)
    stray = (set(result.missing_keys) | set(result.unexpected_keys)) - BUFFERS
    if stray:
        raise ValueError(
            f"all-MiniLM-L6-v2's weights do not fit transformers {transformers.__version__}'s BertModel: "
            f"{sorted(stray)}; install the version in requirements.txt."
        )
    return model.eval()


def minilm_encoder(dropout: float) -> tuple[BertEncoder, object]:
    """all-MiniLM-L6-v2 in our ``BertEncoder`` with ``dropout`` (its training's: 0.1), and its tokenizer
    (chapters 10 and 15 fine-tune it)."""
    from fromscratch.interop.huggingface import load_bert

    loaded, tokenizer = load_bert("all-MiniLM-L6-v2")
    encoder = BertEncoder(replace(loaded.config, dropout=dropout))
    encoder.load_state_dict(loaded.state_dict())
    return encoder, tokenizer


__all__ = ["hf_minilm", "minilm_encoder"]
