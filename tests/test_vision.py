"""Images as sets of patches (chapter 13): patching, 2-D positions, the local mask, the ViT and the CNN."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fromscratch.attention import GridPositionEmbedding, local_mask
from fromscratch.models import CNN, ImageQuestion, ImageQuestionConfig, ViT, ViTConfig
from fromscratch.models.vision import patchify, unpatchify


@pytest.mark.parametrize(("c", "h", "w", "p"), [(1, 28, 28, 7), (3, 8, 12, 4), (2, 6, 6, 1), (1, 5, 5, 5)])
def test_patching_round_trips(c, h, w, p):
    images = torch.randn(2, c, h, w)
    patches = patchify(images, p)
    assert patches.shape == (2, (h // p) * (w // p), p * p * c)
    assert torch.equal(unpatchify(patches, p, h, w), images)


def test_a_patch_is_a_square_of_pixels_row_by_row():
    image = torch.arange(16.0).reshape(1, 1, 4, 4)
    patches = patchify(image, 2)  # (1, 4, 4)
    assert patches[0, 0].tolist() == [0, 1, 4, 5]  # top left
    assert patches[0, 1].tolist() == [2, 3, 6, 7]  # top right: patches are numbered row by row
    assert patches[0, 3].tolist() == [10, 11, 14, 15]
    rgb = torch.stack([image, 100 + image, 200 + image], dim=1)[:, :, 0]  # (1, 3, 4, 4)
    assert patchify(rgb, 2)[0, 0, :3].tolist() == [0, 100, 200]  # a pixel's channels side by side


def test_a_size_that_is_not_a_multiple_of_the_patch_says_which_work():
    with pytest.raises(ValueError, match=r"Patch sizes that work: 1, 2, 4, 7, 14, 28"):
        patchify(torch.zeros(1, 1, 28, 28), 5)
    with pytest.raises(ValueError, match="1, 3"):
        patchify(torch.zeros(1, 1, 6, 9), 2)
    with pytest.raises(ValueError, match=r"images\[:, None\]"):
        patchify(torch.zeros(28, 28), 4)
    with pytest.raises(ValueError, match="multiples of the patch"):
        ViTConfig(image_size=28, patch=6)


def test_the_linear_patch_embedding_is_a_strided_convolution():
    torch.manual_seed(0)
    c, p, e = 3, 4, 8
    linear = nn.Linear(p * p * c, e)
    conv = nn.Conv2d(c, e, kernel_size=p, stride=p)
    with torch.no_grad():  # the same weights, reordered from (e, p, p, c) to (e, c, p, p)
        conv.weight.copy_(linear.weight.view(e, p, p, c).permute(0, 3, 1, 2))
        conv.bias.copy_(linear.bias)
    images = torch.randn(2, c, 12, 16)
    by_conv = conv(images).flatten(2).transpose(1, 2)  # (b, n, e)
    torch.testing.assert_close(linear(patchify(images, p)), by_conv, atol=1e-5, rtol=1e-5)


def test_grid_positions_are_a_row_plus_a_column():
    grid = GridPositionEmbedding(3, 4, 8)
    table = grid.positions().view(3, 4, 8)
    torch.testing.assert_close(table[2, 1] - table[0, 1], table[2, 3] - table[0, 3])  # same rows apart
    assert grid(torch.zeros(2, 12, 8)).shape == (2, 12, 8)
    with pytest.raises(ValueError, match="3x4"):
        grid(torch.zeros(2, 10, 8))


def test_local_mask_is_a_window_on_the_grid():
    mask = local_mask(3, 3, radius=1)
    assert mask.shape == (9, 9) and mask.dtype == torch.bool and torch.equal(mask, mask.T)
    assert mask[4].all(), "the centre patch sees the whole 3x3 grid"
    assert mask[0].nonzero().flatten().tolist() == [0, 1, 3, 4], "a corner sees its 2x2 corner"
    assert torch.equal(local_mask(2, 5, radius=0), torch.eye(10, dtype=torch.bool))
    assert local_mask(4, 4, radius=3).all()
    with pytest.raises(ValueError, match="radius"):
        local_mask(3, 3, radius=-1)


@pytest.mark.parametrize("pooling", ["cls", "mean"])
@pytest.mark.parametrize("positions", ["grid", "learned", None])
def test_vit_shapes_and_attention(pooling, positions):
    model = ViT(patch=7, emb=16, heads=2, depth=2, pooling=pooling, positions=positions)
    images = torch.rand(3, 1, 28, 28)
    weights = []
    logits = model(images, attention=weights)
    t = 16 + (pooling == "cls")
    assert logits.shape == (3, 10) and len(weights) == 2 and weights[0].shape == (3, 2, t, t)
    torch.testing.assert_close(model(images), logits, atol=1e-5, rtol=1e-4)  # fast path = teaching path
    with pytest.raises(ValueError, match=r"\(b, 1, 28, 28\)"):
        model(torch.rand(3, 28, 28))


def test_without_positions_the_order_of_the_patches_does_not_matter():
    torch.manual_seed(0)
    model = ViT(patch=7, emb=16, heads=2, depth=2, positions=None).eval()
    images = torch.rand(4, 1, 28, 28)
    shuffled = unpatchify(patchify(images, 7)[:, torch.randperm(16)], 7, 28, 28)
    assert not torch.equal(shuffled, images)
    torch.testing.assert_close(model(shuffled), model(images), atol=1e-5, rtol=1e-5)
    with_positions = ViT(patch=7, emb=16, heads=2, depth=2).eval()
    assert not torch.allclose(with_positions(shuffled), with_positions(images), atol=1e-4)


def test_a_local_vit_patch_does_not_see_a_far_patch_in_one_layer():
    torch.manual_seed(0)
    model = ViT(patch=7, emb=16, heads=2, depth=1, local=1, pooling="mean").eval()
    assert torch.equal(model.mask, local_mask(4, 4, 1))
    images = torch.rand(1, 1, 28, 28)
    far = images.clone()
    far[..., 21:, 21:] += 1  # the bottom-right patch (15), two rows and columns from patch 0
    tokens = [model.encode(model.embed_patches(x), attn_mask=model.mask) for x in (images, far)]
    torch.testing.assert_close(tokens[0][:, 0], tokens[1][:, 0])  # patch 0 did not see it
    assert not torch.allclose(tokens[0][:, 10], tokens[1][:, 10])  # patch 10, its neighbour, did
    with_class = ViT(patch=7, emb=16, heads=2, depth=1, local=1)
    assert with_class.mask[0].all() and not with_class.mask[1:, 0].any()  # the class token reads all


def test_cnn_shapes_and_sizes():
    model = CNN(widths=(4, 8), hidden=16)
    assert model(torch.rand(5, 1, 28, 28)).shape == (5, 10)
    assert CNN(image_size=32, channels=3, widths=(8, 8, 8))(torch.rand(2, 3, 32, 32)).shape == (2, 10)
    with pytest.raises(ValueError, match="multiple of 8"):
        CNN(image_size=28, widths=(4, 4, 4))


def test_image_question_reads_words_and_patches():
    torch.manual_seed(0)
    config = ImageQuestionConfig(vit=ViTConfig(patch=7, emb=16, heads=2, depth=1, num_classes=2))
    model = ImageQuestion(config).eval()
    images, words = torch.rand(2, 1, 28, 28), torch.tensor([[1, 2, 3], [1, 2, 4]])
    weights = []
    logits = model(images, words, attention=weights)
    assert logits.shape == (2, 2) and weights[0].shape == (2, 2, 1 + 3 + 16, 1 + 3 + 16)
    same_image = model(images[:1].expand(2, -1, -1, -1), words)
    assert not torch.allclose(same_image[0], same_image[1]), "the question changes the answer"
    with pytest.raises(ValueError, match="pooling='cls'"):
        ImageQuestion(ImageQuestionConfig(vit=ViTConfig(pooling="mean")))


def test_beyond_runs_hold_model_and_train_configs():
    from fromscratch.chapters import PROFILE_NAMES, get_profile
    from fromscratch.models import CNNConfig, ImageQuestionConfig, SetConfig
    from fromscratch.training import TrainConfig

    for name in PROFILE_NAMES:
        run = get_profile(name).ch13
        assert isinstance(run.vit, ViTConfig) and isinstance(run.cnn, CNNConfig)
        assert isinstance(run.sets, SetConfig) and run.graph.pooling is None and run.graph.input_dim == 34
        assert run.local_vit.local is not None and isinstance(run.question, ImageQuestionConfig)
        trains = (run.set_train, run.image_train, run.reference, run.local_train, run.graph_train)
        assert all(isinstance(t, TrainConfig) for t in (*trains, run.question_train))
        assert run.local_train.steps is not None, "local and full attention compare at equal steps"
        assert len(run.local_sizes) == 3 and run.image_batch <= min(run.local_sizes)
    assert get_profile("cpu").ch13.reference.minutes == 10.0
    assert get_profile("cpu").ch13.local_sizes == (1_000, 5_000, 60_000)
