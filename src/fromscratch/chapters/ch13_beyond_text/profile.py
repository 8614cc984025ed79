"""Chapter 13's run: sets, images (ViT against a CNN), local attention, graphs, a mixed set.

Every model is a config held here and every training run a :class:`~fromscratch.training.TrainConfig`,
so the chapter writes ``train(ViT(size.vit), batches, labelled_loss, size.image_train)``. Comparisons
share their ``TrainConfig``: the ViT and the CNN get the same minutes, the local and the full ViT the
same steps, DeepSets and the set transformer the same steps and batches.

In the ``cpu`` profile the chapter trains the ViT and the CNN for a few minutes each; the 10-minute
figures it quotes come from ``benchmarks/vision.py``, which trains the same models with ``reference``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fromscratch.models import CNNConfig, ImageQuestionConfig, SetConfig, ViTConfig
from fromscratch.training import TrainConfig


@dataclass(frozen=True)
class BeyondRun:
    """The sizes of chapter 13's experiments."""

    # 13.1 sets: which digit is the odd one out?
    sets: SetConfig  # the set transformer; DeepSets is the same config without its blocks
    set_train: TrainConfig  # both set models: the same steps (or minutes) and the same kind of batches
    set_batch: int  # sets per training step
    set_size: int  # digits per set (one of them the odd one out)
    set_test: int  # test sets, drawn once from the test digits
    # 13.2 images: a ViT and a CNN on MNIST (and Fashion-MNIST)
    vit: ViTConfig  # the Vision Transformer
    cnn: CNNConfig  # the convolutional baseline
    image_train: TrainConfig  # the ViT, the CNN, the ViT without positions: the same minutes, evaluated alike
    image_batch: int  # images per training step
    shift: int  # augmentation: each training image moved by up to this many pixels
    train_images: int | None  # training images used (None: all 60,000)
    test_images: int | None  # test images scored (None: all 10,000)
    curve_images: int  # test images scored at each evaluation (every image_train.eval_every steps)
    reference: TrainConfig  # benchmarks/vision.py: the ViT and the CNN for 10 minutes each
    # 13.2.4 inductive bias: local against full attention at several training set sizes
    local_vit: ViTConfig  # a ViT with a local mask (local=r), mean-pooled; full attention: local=None
    local_train: TrainConfig  # every run of the comparison: the same steps, whatever the data size
    local_sizes: tuple[int, ...]  # training images of each pair of runs (the issue: 1,000, 5,000, 60,000)
    local_seeds: int  # runs of each pair, seeds 0, 1, ...: the initial draw and the order of the batches
    # 13.3 graphs: Zachary's karate club
    graph: SetConfig  # the node classifier: one-hot node ids in, one label per node out (pooling=None)
    graph_train: TrainConfig  # every graph model
    graph_depths: tuple[int, ...]  # numbers of graph-masked layers compared
    graph_labelled: int  # labelled nodes per faction (the rest are predicted)
    graph_seeds: int  # runs per model (different labelled nodes), averaged
    # 13.4 mixing modalities (a toy)
    question: ImageQuestionConfig  # patches and words in one set
    question_train: TrainConfig  # its training


# smoke: a few steps of every experiment on small subsets, only to prove the cells run (seconds)
SMOKE = BeyondRun(
    sets=SetConfig(hidden=32, emb=16, heads=2, depth=1),
    set_train=TrainConfig(steps=20, lr=3e-3, warmup_steps=2),
    set_batch=16,
    set_size=10,
    set_test=200,
    vit=ViTConfig(patch=7, emb=16, heads=2, depth=1),
    cnn=CNNConfig(widths=(4, 8), hidden=16),
    image_train=TrainConfig(steps=20, lr=3e-3, warmup_steps=2, eval_every=10),
    image_batch=32,
    shift=0,
    train_images=2_000,
    test_images=500,
    curve_images=200,
    reference=TrainConfig(steps=20, lr=3e-3, warmup_steps=2),
    local_vit=ViTConfig(patch=7, emb=16, heads=2, depth=2, pooling="mean", local=1),
    local_train=TrainConfig(steps=10, lr=3e-3, warmup_steps=2),
    local_sizes=(100, 500, 2_000),
    local_seeds=2,
    # one-hot node ids in, one label per node out; the same in every profile
    graph=SetConfig(input_dim=34, hidden=32, emb=32, heads=2, depth=1, num_classes=2, pooling=None),
    graph_train=TrainConfig(steps=20, lr=1e-2, warmup_steps=0, progress=False),
    graph_depths=(1, 2),
    graph_labelled=2,
    graph_seeds=1,
    # reads images with the chapter's ViT's patch size and width
    question=ImageQuestionConfig(vit=ViTConfig(patch=7, emb=16, heads=2, depth=2, num_classes=2)),
    question_train=TrainConfig(steps=10, lr=3e-3, warmup_steps=2),
)
# cpu: the chapter in about 20 minutes on 2 cores; the ViT and the CNN get 2 minutes each live
# (the 10-minute figures come from benchmarks/vision.py with `reference`)
CPU = replace(
    SMOKE,
    sets=replace(SMOKE.sets, hidden=128, emb=64, heads=4, depth=2),
    # lr 3e-3 (warm-up 100) left the set transformer at ln 10 for all 6,000 steps with the chapter's seeds
    set_train=replace(SMOKE.set_train, steps=6_000, lr=1e-3, warmup_steps=300),
    set_batch=64,
    set_test=2_000,
    vit=replace(SMOKE.vit, emb=64, heads=4, depth=6),
    cnn=replace(SMOKE.cnn, widths=(32, 64), hidden=128),
    image_train=replace(
        SMOKE.image_train,
        steps=None,
        minutes=2.0,
        lr=2e-3,
        warmup_steps=100,
        weight_decay=0.05,
        eval_every=100,
    ),
    image_batch=128,
    shift=1,
    train_images=None,
    test_images=None,
    curve_images=2_000,
    reference=replace(
        SMOKE.reference, steps=None, minutes=10.0, lr=2e-3, warmup_steps=100, weight_decay=0.05
    ),
    local_vit=replace(SMOKE.local_vit, patch=4, emb=48, heads=4, depth=3),
    local_train=replace(SMOKE.local_train, steps=400, lr=2e-3, warmup_steps=40, weight_decay=0.05),
    local_sizes=(1_000, 5_000, 60_000),
    local_seeds=3,
    graph_train=replace(SMOKE.graph_train, steps=100),
    graph_depths=(1, 2, 3),
    graph_seeds=10,
    question=replace(SMOKE.question, vit=replace(SMOKE.question.vit, emb=64, heads=4)),
    question_train=replace(SMOKE.question_train, steps=None, minutes=1.0, lr=2e-3, warmup_steps=50),
)
# gpu: a T4 in about 30 minutes; bigger ViTs, longer runs, the whole comparison at full size
# (set_train as cpu's: 3e-3 stalled there)
GPU = replace(
    CPU,
    sets=replace(CPU.sets, hidden=256, emb=128, heads=8),
    set_batch=128,
    set_test=10_000,
    vit=replace(CPU.vit, patch=4, emb=128, heads=8),
    image_train=replace(CPU.image_train, minutes=4.0, lr=1e-3, warmup_steps=500, eval_every=500),
    image_batch=256,
    shift=2,
    curve_images=10_000,
    reference=replace(CPU.reference, lr=1e-3, warmup_steps=500),
    local_vit=replace(CPU.local_vit, emb=64, depth=4),
    local_train=replace(CPU.local_train, steps=3_000, lr=1e-3, warmup_steps=200),
    graph_seeds=20,
    question=replace(CPU.question, vit=replace(CPU.question.vit, patch=4, emb=128, heads=8)),
    question_train=replace(CPU.question_train, minutes=2.0, lr=1e-3, warmup_steps=200),
)

RUNS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU}
