"""Chapter 10's checkers: a right answer passes, a wrong one is reported, an untouched stub waits."""

from __future__ import annotations

import doctest

import torch
import torch.nn.functional as F

import fromscratch.chapters.ch10_modern_transformers.checks as ch10


def stub(*args): ...  # an untouched learner cell


def test_the_module_docstring_runs():
    assert doctest.testmod(ch10).failed == 0


def test_check_merge(capsys):
    def with_a_loop(ids, pair, new_id):
        out, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
                out.append(new_id)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        return out

    def overlapping(ids, pair, new_id):  # merges 5 5 5 as two pairs sharing the middle
        out = []
        for i, x in enumerate(ids):
            out.append(new_id if (x, ids[i + 1] if i + 1 < len(ids) else None) == pair else x)
        return out

    assert ch10.check_merge(with_a_loop) is True
    assert "✓" in capsys.readouterr().out
    assert ch10.check_merge(overlapping) is False
    assert "✗" in capsys.readouterr().out
    assert ch10.check_merge(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_mask_tokens(capsys):
    def devlin(ids, mask_id, vocab_size, generator):
        chosen = torch.rand(ids.shape, generator=generator) < 0.15
        how = torch.rand(ids.shape, generator=generator)
        random_ids = torch.randint(0, vocab_size, ids.shape, generator=generator)
        inputs = torch.where(chosen & (how < 0.8), mask_id, ids)
        inputs = torch.where(chosen & (how >= 0.8) & (how < 0.9), random_ids, inputs)
        return inputs, torch.where(chosen, ids, -100)

    def all_masked(ids, mask_id, vocab_size, generator):  # forgets the 10 % random and 10 % kept
        chosen = torch.rand(ids.shape, generator=generator) < 0.15
        return torch.where(chosen, mask_id, ids), torch.where(chosen, ids, -100)

    def labels_everywhere(ids, mask_id, vocab_size, generator):
        inputs, _ = devlin(ids, mask_id, vocab_size, generator)
        return inputs, ids

    assert ch10.check_mask_tokens(devlin) is True
    assert "✓" in capsys.readouterr().out
    assert ch10.check_mask_tokens(all_masked) is False
    assert "not 80%" in capsys.readouterr().out
    assert ch10.check_mask_tokens(labels_everywhere) is False
    assert "✗" in capsys.readouterr().out
    assert ch10.check_mask_tokens(lambda *args: 3) is False
    assert "two tensors" in capsys.readouterr().out
    assert ch10.check_mask_tokens(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_check_sentence_embedding(capsys):
    def pooled(hidden, padding_mask):
        keep = padding_mask[..., None].float()
        mean = (hidden * keep).sum(1) / keep.sum(1)
        return mean / mean.norm(dim=-1, keepdim=True)

    def padding_included(hidden, padding_mask):
        return F.normalize(hidden.mean(1), dim=-1)

    assert ch10.check_sentence_embedding(pooled) is True
    assert "✓" in capsys.readouterr().out
    assert ch10.check_sentence_embedding(padding_included) is False
    assert "✗" in capsys.readouterr().out
    assert ch10.check_sentence_embedding(lambda h, m: (h * m[..., None]).mean(1)) is False
    assert ch10.check_sentence_embedding(stub) is None
    assert "not attempted yet" in capsys.readouterr().out


def test_checking_leaves_the_global_random_state_alone(global_rng_untouched):
    ch10.check_merge(stub)
    ch10.check_mask_tokens(stub)
    ch10.check_sentence_embedding(stub)
