"""The special tokens of the course, one table for every vocabulary (chapters 06, 09, 10).

Each special token has the same id wherever it appears: chapter 06's word vocabulary uses the first
three (``<pad>``, ``<unk>``, ``<cls>``); chapter 09's subword vocabulary adds ``<s>`` and ``</s>``
(begin and end of a sentence) and leaves ``<cls>`` unused, so no id means two things. BERT's
``[MASK]`` (chapter 10) is the last id of its vocabulary, after the words. ``IGNORE`` is not a token:
it is the label of a position a loss skips (``F.cross_entropy``'s ``ignore_index``).
"""

PAD, UNK, CLS, BOS, EOS = 0, 1, 2, 3, 4
SPECIAL_TOKENS = ("<pad>", "<unk>", "<cls>", "<s>", "</s>")  # SPECIAL_TOKENS[i] has id i
WORD_SPECIALS = SPECIAL_TOKENS[:3]  # a word vocabulary's specials: <pad>, <unk>, <cls>
IGNORE = -100

__all__ = ["BOS", "CLS", "EOS", "IGNORE", "PAD", "SPECIAL_TOKENS", "UNK", "WORD_SPECIALS"]
