"""Chapter 09's run: encoder-decoders translating Multi30k English -> German."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.models.encoder_decoder import EncoderDecoderConfig
from fromscratch.models.rnn_seq2seq import RNNSeq2SeqConfig
from fromscratch.training import TrainConfig


@dataclass(frozen=True)
class TranslationRun:
    """Sizes of chapter 09: the data, the transformer and the two RNN baselines with their training, the beam.

    ``EncoderDecoder(size.model)`` trains with ``size.train``; ``RNNSeq2Seq(size.rnn)`` (the bottleneck)
    and ``RNNSeq2Seq(size.rnn_attention)`` (Bahdanau's) with ``size.rnn_train``. A ``minutes`` budget
    ends a run; its learning rate decays to zero exactly then (smoke also caps the steps).
    """

    vocab_size: int  # joint English+German byte-level BPE tokens, learned on the training split
    context: int  # longest source or target in tokens; longer training pairs are left out
    train_pairs: int | None  # use only the first this many training pairs (None: all 29,000)
    test_pairs: int | None  # translate only the first this many test pairs (None: all 1,000)
    model: EncoderDecoderConfig  # the transformer (pre-norm, joint vocabulary, pooled dropout masks)
    train: TrainConfig  # the transformer's training: minutes, peak AdamW lr, warm-up (smoke: a step cap)
    rnn: RNNSeq2SeqConfig  # the GRU bottleneck baseline (attention=False)
    rnn_attention: RNNSeq2SeqConfig  # the same GRUs with Bahdanau attention (attention=True)
    rnn_train: TrainConfig  # each RNN baseline's training (a short run takes fewer warm-up steps)
    max_tokens: int  # tokens per batch of every model, source and target together, padding included
    label_smoothing: float  # of the translation loss; Vaswani et al.: 0.1
    beam_size: int  # beam width for the final test BLEU
    val_pairs: int  # validation pairs scored (greedy BLEU) every `eval_every` steps while training
    timing_repeats: int  # 9.4: timed training steps per model on one batch (the median; one CPU thread)


# smoke: tiny models, 12 steps on 2,000 pairs (the step cap, not the time, ends training, so runs repeat
# exactly); BLEU near 0 (seconds). The vocabulary and context are every model's.
_RNN = RNNSeq2SeqConfig(vocab_size=1000, emb=32, hidden=32, context=64, attention=False)
SMOKE = TranslationRun(
    vocab_size=1000,
    context=64,
    train_pairs=2000,
    test_pairs=40,
    model=EncoderDecoderConfig(
        src_vocab_size=1000,
        tgt_vocab_size=1000,
        emb=32,
        heads=2,
        encoder_depth=1,
        decoder_depth=1,
        ff_mult=2,
        norm="pre",
        context=64,
        pool_dropout=True,
    ),
    train=TrainConfig(steps=12, minutes=0.5, lr=2e-3, warmup_steps=5, eval_every=6),
    rnn=_RNN,
    rnn_attention=replace(_RNN, attention=True),  # Bahdanau's: the bottleneck one, everything else equal
    rnn_train=TrainConfig(steps=12, minutes=0.5, lr=3e-3, warmup_steps=3, eval_every=6),
    max_tokens=1500,
    label_smoothing=0.1,
    beam_size=2,
    val_pairs=20,
    timing_repeats=1,
)
# cpu: 2 cores; the three models train for the same 5 minutes each (the chapter then runs in ~20 min).
# Each peak lr is the best of three on validation BLEU (greedy, 1,014 pairs) after 1.5 min of training
# (benchmarks/translation.py --val --no-save, under the lock): GRU bottleneck 1e-3 8.1, 3e-3 9.5, 1e-2
# 9.3; GRU + Bahdanau 10.2, 14.1, 11.2; transformer 5e-4 3.0, 1e-3 5.2, 2e-3 6.1. The 15-minute runs
# of the previous profile (transformer lr 1e-3) are in benchmarks/README.md.
_CPU_RNN = replace(SMOKE.rnn, vocab_size=8000, context=100, emb=256, hidden=256)
CPU = replace(
    SMOKE,
    vocab_size=8000,
    context=100,
    train_pairs=None,
    test_pairs=None,
    model=replace(
        SMOKE.model,
        src_vocab_size=8000,
        tgt_vocab_size=8000,
        context=100,
        emb=256,
        heads=4,
        encoder_depth=3,
        decoder_depth=3,
    ),
    train=replace(SMOKE.train, steps=None, minutes=5.0, warmup_steps=100, eval_every=100),  # no step cap
    rnn=_CPU_RNN,
    rnn_attention=replace(_CPU_RNN, attention=True),
    rnn_train=replace(SMOKE.rnn_train, steps=None, minutes=5.0, warmup_steps=30, eval_every=100),
    max_tokens=2500,
    beam_size=4,
    val_pairs=200,
    timing_repeats=5,
)
# gpu: not run in full on a GPU yet; Vaswani-base-like width, more layers and a longer run. 8 + 8 + 8 min
# of training (the three models get the same minutes, as in cpu); benchmarks/gpu/report.py plans the
# chapter on each card (an earlier 30 + 2 x 10 took ~56 min on a T4)
_GPU_RNN = replace(CPU.rnn, context=128, hidden=512, dropout=0.2)
GPU = replace(
    CPU,
    context=128,
    model=replace(
        CPU.model, context=128, emb=512, heads=8, encoder_depth=6, decoder_depth=6, ff_mult=4, dropout=0.2
    ),
    train=replace(CPU.train, minutes=8.0, lr=5e-4, warmup_steps=1000, eval_every=1000),
    rnn=_GPU_RNN,
    rnn_attention=replace(_GPU_RNN, attention=True),
    rnn_train=replace(CPU.rnn_train, minutes=8.0, lr=1e-3, warmup_steps=200, eval_every=1000),
    max_tokens=8000,
    beam_size=5,
    val_pairs=500,
    timing_repeats=10,
)

RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}
