"""Chapter 13's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest

import torch

import fromscratch.chapters.ch13_beyond_text.checks as ch13


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch13).failed == 0


def test_check_patchify(capsys):
    def with_unfold(images, p):  # another right way: unfold takes p x p blocks, channels first
        b, c, _, _ = images.shape
        blocks = torch.nn.functional.unfold(images, kernel_size=p, stride=p)  # (b, c·p·p, n)
        return blocks.view(b, c, p, p, -1).permute(0, 4, 2, 3, 1).reshape(b, -1, p * p * c)

    def channels_first(images, p):  # a common layout, but not ours: (c, p, p) inside a patch
        b, c, _, _ = images.shape
        return torch.nn.functional.unfold(images, kernel_size=p, stride=p).transpose(1, 2)

    assert ch13.check_patchify(with_unfold) is True
    assert "✓" in capsys.readouterr().out
    assert ch13.check_patchify(channels_first) is False
    assert "channels last" in capsys.readouterr().out  # the hint for the conv layout
    assert ch13.check_patchify(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_local_mask(capsys):
    def with_loops(rows, cols, radius):
        n = rows * cols
        return torch.tensor(
            [
                [
                    abs(i // cols - j // cols) <= radius and abs(i % cols - j % cols) <= radius
                    for j in range(n)
                ]
                for i in range(n)
            ]
        )

    def by_distance_along_the_sequence(rows, cols, radius):  # the 1-D window: wrong on a grid
        i = torch.arange(rows * cols)
        return (i[:, None] - i[None, :]).abs() <= radius

    assert ch13.check_local_mask(with_loops) is True
    assert "✓" in capsys.readouterr().out
    assert ch13.check_local_mask(by_distance_along_the_sequence) is False
    assert "✗" in capsys.readouterr().out
    assert ch13.check_local_mask(lambda r, c, k: with_loops(r, c, k).int()) is False
    assert "must return a boolean mask" in capsys.readouterr().out
    assert ch13.check_local_mask(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_invariance_test(capsys):
    def shuffle_and_compare(model, sets):
        order = torch.randperm(sets.size(1))
        return torch.allclose(model(sets[:, order]), model(sets), atol=1e-5)

    def only_compares_shapes(model, sets):  # a test that cannot fail
        return model(sets[:, torch.randperm(sets.size(1))]).shape == model(sets).shape

    assert ch13.check_invariance_test(shuffle_and_compare) is True
    assert "✓" in capsys.readouterr().out
    assert ch13.check_invariance_test(only_compares_shapes) is False
    assert "not invariant" in capsys.readouterr().out
    assert ch13.check_invariance_test(lambda model, sets: 1 / 0) is False
    assert "ZeroDivisionError" in capsys.readouterr().out
    assert ch13.check_invariance_test(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def vit_by_hand(vit, images):
    c = vit.config
    x = vit.patch_embedding(ch13.patchify(images, c.patch))  # (b, n, e)
    x = x if vit.positions is None else vit.positions(x)
    x = torch.cat([vit.class_token.expand(len(x), -1, -1), x], dim=1)  # (b, n + 1, e)
    for block in vit.blocks:
        x = block(x, attn_mask=vit.mask)
    return vit.to_logits(vit.final_norm(x)[:, 0])


def test_check_vit_forward(capsys):
    def no_positions(vit, images):
        c = vit.config
        x = vit.patch_embedding(ch13.patchify(images, c.patch))
        x = torch.cat([vit.class_token.expand(len(x), -1, -1), x], dim=1)
        for block in vit.blocks:
            x = block(x, attn_mask=vit.mask)
        return vit.to_logits(vit.final_norm(x)[:, 0])

    def no_mask(vit, images):
        mask, vit.mask = vit.mask, None
        try:
            return vit_by_hand(vit, images)
        finally:
            vit.mask = mask

    def mean_pooled(vit, images):
        x = vit.patch_embedding(ch13.patchify(images, vit.config.patch))
        x = x if vit.positions is None else vit.positions(x)
        x = torch.cat([vit.class_token.expand(len(x), -1, -1), x], dim=1)
        x = vit.encode(x, attn_mask=vit.mask)
        return vit.to_logits(x.mean(dim=1))

    assert ch13.check_vit_forward(vit_by_hand) is True
    assert "✓" in capsys.readouterr().out
    for wrong in (no_positions, no_mask, mean_pooled):
        assert ch13.check_vit_forward(wrong) is False
        assert "✗" in capsys.readouterr().out
    assert ch13.check_vit_forward(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def question_by_hand(model, images, words, types=(0, 1), order="words first"):
    vit = model.vit
    patches = vit.embed_patches(images) + model.types.weight[types[1]]  # (b, n, e)
    text = model.word_positions(model.words(words)) + model.types.weight[types[0]]  # (b, w, e)
    cls = vit.class_token.expand(len(images), -1, -1)  # (b, 1, e)
    parts = [cls, text, patches] if order == "words first" else [cls, patches, text]
    x = vit.encode(torch.cat(parts, dim=1))
    return vit.to_logits(x[:, 0])


def test_check_question_forward(capsys):
    def patches_first(model, images, words):  # another order of the same set: also right
        return question_by_hand(model, images, words, order="patches first")

    def types_swapped(model, images, words):
        return question_by_hand(model, images, words, types=(1, 0))

    def no_types(model, images, words):
        vit = model.vit
        text = model.word_positions(model.words(words))
        cls = vit.class_token.expand(len(images), -1, -1)
        x = vit.encode(torch.cat([cls, text, vit.embed_patches(images)], dim=1))
        return vit.to_logits(x[:, 0])

    for right in (question_by_hand, patches_first):
        assert ch13.check_question_forward(right) is True
        assert "✓" in capsys.readouterr().out
    for wrong in (types_swapped, no_types):
        assert ch13.check_question_forward(wrong) is False
        assert "✗" in capsys.readouterr().out
    assert ch13.check_question_forward(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    def shuffle_and_compare(model, sets):
        order = torch.randperm(sets.size(1))  # the learner's own draw, from the global generator
        return torch.allclose(model(sets[:, order]), model(sets), atol=1e-5)

    ch13.check_patchify(stub)
    ch13.check_local_mask(stub)
    ch13.check_invariance_test(shuffle_and_compare)
    ch13.check_vit_forward(vit_by_hand)
    ch13.check_question_forward(question_by_hand)
