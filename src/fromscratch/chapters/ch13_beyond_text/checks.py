"""Checkers for chapter 13's exercises (beyond text: patches, a local mask, invariance, the ViT's forward
pass, words and patches in one set).

Each checker takes the learner's answer and returns True (right), False (wrong, printing what
differs) or None (the stub is untouched: "not attempted yet"); see ``fromscratch.chapters.checking``.
Test inputs and models come from private generators with fixed seeds, and the learner's code runs
inside ``torch.random.fork_rng``, so checking an answer never changes the notebook's random numbers.

>>> import torch
>>> def my_patchify(images, p):
...     b, c, h, w = images.shape
...     x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
...     return x.reshape(b, (h // p) * (w // p), p * p * c)
>>> check_patchify(my_patchify)
✓ my_patchify matches the reference on 3 test inputs.
True
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from fromscratch.attention.masks import local_mask
from fromscratch.chapters import checking
from fromscratch.models.sets import DeepSets, SetConfig, SetTransformer
from fromscratch.models.vision import ImageQuestion, ImageQuestionConfig, ViT, ViTConfig, patchify

__all__ = [
    "check_invariance_test",
    "check_local_mask",
    "check_patchify",
    "check_question_forward",
    "check_vit_forward",
]


def check_patchify(candidate: Callable[[Tensor, int], Tensor]) -> bool | None:
    """Exercise 13.1. Expects a function ``(images (b, c, h, w), p) -> (b, n, p·p·c)``: patches numbered
    row by row, each flattened row by row with a pixel's channels side by side, as ``patchify``."""
    generator = torch.Generator().manual_seed(13)
    inputs = [
        (torch.randn(2, 1, 4, 4, generator=generator), 2),
        (torch.randn(1, 3, 6, 9, generator=generator), 3),
        (torch.randn(3, 1, 28, 28, generator=generator), 7),
    ]
    name = getattr(candidate, "__name__", "your function")
    right = checking.check_function(candidate, patchify, inputs=inputs)
    if right is False:
        print(
            f"  Check the order inside a patch for {name}: rows of pixels, then pixels, then a pixel's "
            "channels side by side (channels last), as a (p, p, c) block flattened; F.unfold and "
            "Conv2d's kernels use (c, p, p) instead."
        )
    return right


def _local(rows: int, cols: int, radius: int) -> Tensor:
    return local_mask(rows, cols, radius)  # (n, n)


def check_local_mask(candidate: Callable[[int, int, int], Tensor]) -> bool | None:
    """Exercise 13.2. Expects a function ``(rows, cols, radius) -> (n, n)`` boolean mask, ``n = rows·cols``,
    True where patch ``i`` may attend to patch ``j``: their rows and their columns each differ by at
    most ``radius`` (patches numbered row by row), as ``masks.local_mask``."""
    name = getattr(candidate, "__name__", "your function")
    try:
        got = candidate(3, 3, 1)
    except Exception:  # a stub or a failing answer: check_function below says which, kindly
        got = None
    if isinstance(got, Tensor) and got.dtype != torch.bool:
        print(f"✗ {name} must return a boolean mask (True = may attend), got dtype {got.dtype}.")
        return False
    return checking.check_function(candidate, _local, inputs=[(3, 3, 1), (4, 5, 1), (7, 7, 2), (2, 6, 0)])


class _FirstElement(nn.Module):
    """A model that is *not* invariant: it reads only the first element of each set."""

    def __init__(self, config: SetConfig) -> None:
        super().__init__()
        self.inner = DeepSets(config)

    def forward(self, x: Tensor) -> Tensor:
        return self.inner(x[:, :1])  # (b, num_classes)


def check_invariance_test(candidate: Callable[[nn.Module, Tensor], bool]) -> bool | None:
    """Exercise 13.3. Expects a function ``(model, sets (b, n, d)) -> bool``: True when shuffling the
    elements of the sets leaves the model's output unchanged (up to float rounding), False otherwise.
    It is run on two invariant models (DeepSets, a set transformer) and on two that are not (one reads
    only the first element; one answers per element, so its outputs move with the elements)."""
    name = getattr(candidate, "__name__", "your function")
    config = SetConfig(input_dim=6, hidden=16, emb=8, heads=2, depth=2, num_classes=3)
    with torch.random.fork_rng(devices=[]):  # the models, the sets and the learner's shuffles
        torch.manual_seed(13)
        cases = [
            ("DeepSets", DeepSets(config).eval(), True),
            ("a set transformer", SetTransformer(config).eval(), True),
            ("a model reading the first element only", _FirstElement(config).eval(), False),
            ("a set transformer answering per element", SetTransformer(config, pooling=None).eval(), False),
        ]
        sets = torch.randn(4, 8, 6)
        for label, model, invariant in cases:
            try:
                with torch.no_grad():
                    got = candidate(model, sets.clone())
            except NotImplementedError:
                return checking.not_attempted(name)
            except Exception as error:  # the learner's code may fail in any way; say how, kindly
                print(f"✗ {name} raised {error.__class__.__name__}: {error} (on {label}).")
                return False
            if checking.is_stub(got):
                return checking.not_attempted(name)
            if bool(got) is not invariant:
                print(
                    f"✗ {name} says {bool(got)} for {label}, which is {'' if invariant else 'not '}invariant."
                )
                return False
    print(f"✓ {name} tells the {len(cases)} test models apart: 2 invariant, 2 not.")
    return True


def _scaled(model: nn.Module, std: float) -> nn.Module:
    """``model`` with every weight drawn again from N(0, std²): positions, class token and type vectors
    large enough that leaving one out changes the logits far beyond rounding."""
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, std)
    return model.eval()


def check_vit_forward(candidate: Callable[[nn.Module, Tensor], Tensor]) -> bool | None:
    """Exercise 13.4. Expects a function ``(vit, images (b, c, s, s)) -> logits (b, num_classes)`` that runs
    a class-token :class:`~fromscratch.models.ViT`'s parts by hand (patches, their linear map, positions,
    the class token in front, the blocks with ``vit.mask``, the final norm, the class token's logits) and
    gives what ``vit(images)`` gives. Tried on ViTs with grid, 1-D and no positions, and a local mask."""
    name = getattr(candidate, "__name__", "your function")
    base = dict(image_size=8, channels=1, patch=2, num_classes=5, emb=16, heads=2, depth=2)
    cases = [
        ("grid positions", ViTConfig(**base)),
        ("1-D learned positions, 2 channels", ViTConfig(**{**base, "channels": 2}, positions="learned")),
        ("no positions", ViTConfig(**{**base, "patch": 4}, positions=None)),
        ("a local mask (radius 1)", ViTConfig(**base, local=1)),
    ]
    with torch.random.fork_rng(devices=[]):  # the models, the images and whatever the learner draws
        torch.manual_seed(13)
        for label, config in cases:
            vit = _scaled(ViT(config), 0.3)
            images = torch.rand(3, config.channels, 8, 8)
            with torch.no_grad():
                expected = vit(images)  # (b, num_classes)
                try:
                    got = candidate(vit, images)
                except NotImplementedError:
                    return checking.not_attempted(name)
                except Exception as error:  # the learner's code may fail in any way; say how, kindly
                    print(f"✗ {name} raised {error.__class__.__name__}: {error} (on a ViT with {label}).")
                    return False
            if checking.is_stub(got):
                return checking.not_attempted(name)
            if not isinstance(got, Tensor) or got.shape != expected.shape:
                shape = tuple(got.shape) if isinstance(got, Tensor) else type(got).__name__
                print(f"✗ {name} must return logits of shape {tuple(expected.shape)}, got {shape}.")
                return False
            if not torch.allclose(got, expected, atol=1e-4, rtol=1e-4):
                print(
                    f"✗ {name} differs from vit(images) on a ViT with {label} (largest gap "
                    f"{(got - expected).abs().max():.3g}): check the positions, the class token in "
                    "front, the mask and the final norm."
                )
                return False
    print(f"✓ {name} equals vit(images) on {len(cases)} ViTs (grid, 1-D and no positions, a local mask).")
    return True


def check_question_forward(candidate: Callable[[nn.Module, Tensor, Tensor], Tensor]) -> bool | None:
    """Exercise 13.5. Expects a function ``(model, images (b, 1, s, s), words (b, w)) -> logits (b, 2)`` that
    builds :class:`~fromscratch.models.ImageQuestion`'s one set by hand (the class token; the words, their
    1-D positions and type vector 0; the patches with their 2-D positions and type vector 1) and gives
    what ``model(images, words)`` gives."""
    name = getattr(candidate, "__name__", "your function")
    vit = ViTConfig(image_size=8, patch=4, emb=16, heads=2, depth=2, num_classes=2)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(13)
        model = _scaled(ImageQuestion(ImageQuestionConfig(vit=vit, vocab_size=15, max_words=4)), 0.3)
        images, words = torch.rand(3, 1, 8, 8), torch.randint(0, 15, (3, 4))
        with torch.no_grad():
            expected = model(images, words)  # (b, 2)
            try:
                got = candidate(model, images, words)
            except NotImplementedError:
                return checking.not_attempted(name)
            except Exception as error:  # the learner's code may fail in any way; say how, kindly
                print(f"✗ {name} raised {error.__class__.__name__}: {error}.")
                return False
    if checking.is_stub(got):
        return checking.not_attempted(name)
    if not isinstance(got, Tensor) or got.shape != expected.shape:
        shape = tuple(got.shape) if isinstance(got, Tensor) else type(got).__name__
        print(f"✗ {name} must return logits of shape {tuple(expected.shape)}, got {shape}.")
        return False
    if not torch.allclose(got, expected, atol=1e-4, rtol=1e-4):
        print(
            f"✗ {name} differs from model(images, words) (largest gap {(got - expected).abs().max():.3g}): "
            "check which type vector each kind of token gets, and the positions of each."
        )
        return False
    print(f"✓ {name} equals model(images, words): words and patches in one set, told apart by type.")
    return True
