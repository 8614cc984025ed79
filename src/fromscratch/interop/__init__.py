"""Our modules and other libraries' twins hold the same weights under other names.

One module per library whose models we compare with:

- :mod:`fromscratch.interop.pytorch`: weight tables and :func:`copy_weights`; ``SelfAttention`` <->
  ``nn.MultiheadAttention``, ``TransformerBlock`` <-> ``nn.TransformerEncoderLayer`` and Hugging
  Face's ``BertLayer`` (chapters 04-05).
- :mod:`fromscratch.interop.torch_transformer`: ``EncoderDecoder`` <-> ``nn.Transformer`` (chapter 09).
- :mod:`fromscratch.interop.huggingface`: whole BERT and GPT-2 models, ``from_hf``, ``load_bert``,
  ``load_gpt2`` (chapter 10); :mod:`fromscratch.interop.minilm`: ``hf_minilm``, Hugging Face's twin of
  the MiniLM that ``load_bert`` loads (chapter 10 and the tests). ``from_hf`` takes Llama too
  (:mod:`fromscratch.interop.hf_llama`, chapter 14).
- :mod:`fromscratch.interop.llama2c`: llama2.c's models, ``load_tinyllama("stories260K")`` (chapter 14).
- :mod:`fromscratch.interop.gguf` (with :mod:`~fromscratch.interop.quant`, Q4_1 and Q8_0 blocks) reads and
  writes llama.cpp's GGUF files; :mod:`fromscratch.interop.gguf_llama` turns one into our Llama and BPE,
  ``load_smollm2()``; :mod:`fromscratch.interop.hf_lora` builds ``peft``'s twin of our LoRA (chapter 15).
"""

from fromscratch.interop.gguf import read_gguf, write_gguf  # chapter 15
from fromscratch.interop.gguf_llama import load_smollm2, read_gguf_llama, write_gguf_llama
from fromscratch.interop.huggingface import StateDictMismatch, from_hf, load_bert, load_gpt2  # chapter 10
from fromscratch.interop.llama2c import load_tinyllama, read_llama2c  # chapter 14
from fromscratch.interop.pytorch import (
    bert_layer_table,
    copy_weights,
    encoder_layer_table,
    from_bert_layer,
    from_encoder_layer,
    from_multihead_attention,
    multihead_attention_table,
    prefixed,
    to_bert_layer,
    to_encoder_layer,
    to_multihead_attention,
)
from fromscratch.interop.torch_transformer import (  # chapter 09
    decoder_layer_table,
    load_from_transformer,
    to_transformer,
    transformer_logits,
    transformer_table,
)

__all__ = [
    "StateDictMismatch",
    "from_hf",
    "load_bert",
    "load_gpt2",
    "load_tinyllama",
    "read_llama2c",
    "load_smollm2",
    "read_gguf",
    "read_gguf_llama",
    "write_gguf",
    "write_gguf_llama",
    "decoder_layer_table",
    "load_from_transformer",
    "to_transformer",
    "transformer_logits",
    "transformer_table",
    "bert_layer_table",
    "copy_weights",
    "encoder_layer_table",
    "from_bert_layer",
    "from_encoder_layer",
    "from_multihead_attention",
    "multihead_attention_table",
    "prefixed",
    "to_bert_layer",
    "to_encoder_layer",
    "to_multihead_attention",
]
