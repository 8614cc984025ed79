"""Chapter 09's run: encoder-decoders translating Multi30k English -> German."""

from __future__ import annotations

from dataclasses import dataclass

from fromscratch.models.encoder_decoder import EncoderDecoderConfig
from fromscratch.models.rnn_seq2seq import RNNSeq2SeqConfig


@dataclass(frozen=True)
class TranslationRun:
    """Sizes of chapter 09: data, the transformer, the two RNN baselines, training and decoding."""

    vocab_size: int  # joint English+German byte-level BPE tokens, learned on the training split
    max_len: int  # longest source or target in tokens; longer training pairs are left out
    train_pairs: int | None  # use only the first this many training pairs (None: all 29,000)
    test_pairs: int | None  # translate only the first this many test pairs (None: all 1,000)
    emb: int  # transformer width e
    heads: int  # attention heads h
    depth: int  # encoder blocks = decoder blocks
    ff_mult: int  # feed-forward width = ff_mult * e
    dropout: float  # after embeddings and each sub-layer
    norm: str  # "pre" or "post"
    max_tokens: int  # tokens per batch, source and target together, padding included
    lr: float  # peak AdamW learning rate, reached after the warm-up, then linear decay to 0
    warmup_steps: int  # linear warm-up steps
    label_smoothing: float  # Vaswani et al.: 0.1
    minutes: float  # training time of the transformer; the schedule ends exactly there
    rnn_hidden: int  # GRU state width of both RNN baselines
    rnn_emb: int  # token embedding width of both RNN baselines
    rnn_minutes: float  # training time of each RNN baseline
    rnn_lr: float  # peak learning rate of the RNNs
    rnn_warmup_steps: int  # their warm-up steps (a short run takes fewer steps than the transformer's)
    rnn_max_tokens: int  # tokens per batch of the RNNs
    beam_size: int  # beam width for the final test BLEU
    max_steps: int | None = None  # stop after this many steps even within the time (smoke: a few)

    @property
    def model(self) -> EncoderDecoderConfig:
        """The transformer of this run: ``EncoderDecoder(prof.translation.model)``."""
        return EncoderDecoderConfig(
            src_vocab_size=self.vocab_size,
            tgt_vocab_size=self.vocab_size,
            emb=self.emb,
            heads=self.heads,
            encoder_depth=self.depth,
            decoder_depth=self.depth,
            ff_mult=self.ff_mult,
            dropout=self.dropout,
            norm=self.norm,
            max_len=self.max_len,
            pool_dropout=True,
        )

    def schedule(self, kind: str) -> dict[str, float]:
        """How ``kind`` ("transformer", "rnn" or "rnn_attention") trains: the keyword arguments of
        :func:`fromscratch.recipes.translation.train_for_minutes` (minutes, lr, warmup_steps, max_tokens)."""
        if kind == "transformer":
            return dict(
                minutes=self.minutes, lr=self.lr, warmup_steps=self.warmup_steps, max_tokens=self.max_tokens
            )
        if kind in ("rnn", "rnn_attention"):
            return dict(minutes=self.rnn_minutes, lr=self.rnn_lr, warmup_steps=self.rnn_warmup_steps,
                        max_tokens=self.rnn_max_tokens)  # fmt: skip
        raise ValueError(f"kind must be 'transformer', 'rnn' or 'rnn_attention', got {kind!r}.")

    def rnn(self, attention: bool) -> RNNSeq2SeqConfig:
        """An RNN baseline: ``RNNSeq2Seq(prof.translation.rnn(attention=True))`` is Bahdanau's model."""
        return RNNSeq2SeqConfig(
            vocab_size=self.vocab_size,
            emb=self.rnn_emb,
            hidden=self.rnn_hidden,
            attention=attention,
            dropout=self.dropout,
            max_len=self.max_len,
        )


# fmt: off
TRANSLATION_RUNS = {
    # smoke: tiny models, 12 steps on 2,000 pairs (the step cap, not the time, ends training, so runs repeat
    # exactly); BLEU near 0 (seconds)
    "smoke": TranslationRun(vocab_size=1000, max_len=64, train_pairs=2000, test_pairs=40, emb=32, heads=2, depth=1,
                            ff_mult=2, dropout=0.1, norm="pre", max_tokens=1500, lr=2e-3, warmup_steps=5,
                            label_smoothing=0.1, minutes=0.5, rnn_hidden=32, rnn_emb=32, rnn_minutes=0.5,
                            rnn_lr=3e-3, rnn_warmup_steps=3, rnn_max_tokens=1500, beam_size=2, max_steps=12),
    # cpu: 2 cores; benchmarks/translation.py trains these and saves checkpoints the chapter loads. Measured on
    # idle cores (`--rnn`): transformer 31.0 greedy / 32.8 beam-4 test BLEU after 15.0 min (1,298 steps);
    # GRU bottleneck 12.0, GRU + Bahdanau 13.2 (greedy, 1.75 min each, so the chapter runs within 20 min).
    # Other runs: transformer 13 min 29.4 / 31.2; ff_mult 4 29.7 / 30.9; ff_mult 4 with lr 2e-3 25.2 greedy;
    # RNNs 1.5 min 11.5 / 9.6, 2 min 11.6 / 14.5, 2.5 min 11.9 / 15.8, about 4 min 15.5 / 19.4
    "cpu": TranslationRun(vocab_size=8000, max_len=100, train_pairs=None, test_pairs=None, emb=256, heads=4, depth=3,
                          ff_mult=2, dropout=0.1, norm="pre", max_tokens=2500, lr=1e-3, warmup_steps=100,
                          label_smoothing=0.1, minutes=15.0, rnn_hidden=256, rnn_emb=256, rnn_minutes=1.75,
                          rnn_lr=3e-3, rnn_warmup_steps=30, rnn_max_tokens=2500, beam_size=4),
    # gpu: untested until run on a GPU; Vaswani-base-like width, more layers and a longer run
    "gpu": TranslationRun(vocab_size=8000, max_len=128, train_pairs=None, test_pairs=None, emb=512, heads=8, depth=6,
                          ff_mult=4, dropout=0.2, norm="pre", max_tokens=8000, lr=5e-4, warmup_steps=1000,
                          label_smoothing=0.1, minutes=30.0, rnn_hidden=512, rnn_emb=256, rnn_minutes=10.0,
                          rnn_lr=1e-3, rnn_warmup_steps=200, rnn_max_tokens=8000, beam_size=5),
}
# fmt: on
