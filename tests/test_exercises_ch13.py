"""Chapter 13's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest

import torch

import fromscratch.exercises.ch13 as ch13


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
    assert "✗" in capsys.readouterr().out
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


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    def shuffle_and_compare(model, sets):
        order = torch.randperm(sets.size(1))  # the learner's own draw, from the global generator
        return torch.allclose(model(sets[:, order]), model(sets), atol=1e-5)

    ch13.check_patchify(stub)
    ch13.check_local_mask(stub)
    ch13.check_invariance_test(shuffle_and_compare)
