"""fromscratch.interp's hooks and head scores on every decoder family of the course.

``record`` and ``patch`` hold PyTorch forward hooks: the identity patch changes no bit of the logits,
zeroing a block's attention output is zeroing its output projection, the last block's recorded
output through the final norm and the output layer gives the logits, and no hook outlives its block,
also when the forward raises. The head scores give 1 on planted patterns and the exactly computed
mean on a uniform causal head.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
import torch

from fromscratch.interp import (
    ablate_heads,
    block_names,
    fit_probe,
    induction_score,
    module_named,
    patch,
    patch_heads,
    previous_token_score,
    record,
    record_heads,
    repeated_tokens,
    unembed,
)
from fromscratch.models import (
    GPT2,
    Generator,
    Llama,
    LlamaConfig,
    LongContextGenerator,
    TransformerXL,
)

STORIES260K = LlamaConfig(  # llama2.c's stories260K: the header's numbers, random weights here
    vocab_size=512, context=512, emb=64, heads=8, kv_heads=4, depth=5, hidden=172, rope_theta=10_000.0
)
FAMILIES = {  # name -> a small model of the family, built under a fixed seed
    "llama-stories260K": lambda: Llama(STORIES260K),
    "llama-smollm2-shape": lambda: Llama(
        vocab_size=300, context=64, emb=72, heads=9, kv_heads=3, depth=2, hidden=96
    ),
    "gpt2": lambda: GPT2(vocab_size=300, context=64, emb=32, heads=4, depth=2),
    "generator-post": lambda: Generator(vocab_size=256, emb=32, heads=4, depth=2, context=64),
    "generator-pre": lambda: Generator(vocab_size=256, emb=32, heads=4, depth=2, context=64, norm="pre"),
    "long-context-rope": lambda: LongContextGenerator(
        vocab_size=256, emb=32, heads=4, depth=2, context=64, positions="rope"
    ),
    "transformer-xl": lambda: TransformerXL(vocab_size=256, emb=32, heads=4, depth=2, segment=32, memory=8),
}


def logits_of(model, tokens, **keywords):
    """The logits ``(b, t, V)`` (Transformer-XL returns its memory beside them)."""
    out = model(tokens, **keywords)
    return out[0] if isinstance(out, tuple) else out


@pytest.fixture(params=list(FAMILIES))
def family(request):
    torch.manual_seed(0)
    model = FAMILIES[request.param]().eval()  # eval: GPT-2's dropout off
    tokens = torch.randint(0, 256, (2, 12), generator=torch.Generator().manual_seed(1))
    return model, tokens


def no_hooks_left(model) -> bool:
    return all(not m._forward_hooks for m in model.modules())


def test_the_identity_patch_changes_no_bit(family):
    model, tokens = family
    names = block_names(model)
    with torch.no_grad():
        plain = logits_of(model, tokens)
        attentions = [f"{name}.attention" for name in names]
        with patch(model, {name: (lambda out: out) for name in names + attentions}):
            patched = logits_of(model, tokens)
    assert torch.equal(plain, patched)
    assert no_hooks_left(model)


@pytest.mark.parametrize("layer", [0, -1])
def test_zeroing_attention_is_zeroing_its_output_projection(family, layer):
    model, tokens = family
    block = block_names(model)[layer]
    with torch.no_grad():
        plain = logits_of(model, tokens)
        with patch(model, {f"{block}.attention": torch.zeros_like}):
            ablated = logits_of(model, tokens)
        with patch(model, {f"{block}.attention.unify_heads": torch.zeros_like}):
            projection = logits_of(model, tokens)
        edited = copy.deepcopy(model)  # the same ablation written into the weights, no hooks
        unify = module_named(edited, f"{block}.attention.unify_heads")
        unify.weight.zero_()
        if unify.bias is not None:
            unify.bias.zero_()
        weights_zeroed = logits_of(edited, tokens)
    assert not torch.allclose(plain, ablated), "the ablation must change the logits"
    assert torch.equal(ablated, projection)
    torch.testing.assert_close(ablated, weights_zeroed, rtol=0, atol=0)


def test_the_last_block_through_the_final_norm_and_output_layer_gives_the_logits(family):
    model, tokens = family
    names = block_names(model)
    with torch.no_grad(), record(model, names) as acts:
        logits = logits_of(model, tokens)
    assert [len(acts[name]) for name in names] == [1] * len(names)  # one forward: one output each
    last = acts[names[-1]][0]  # (b, t, e)
    prefix = "stack." if names[0].startswith("stack.") else ""
    final_norm = module_named(model, f"{prefix}final_norm")
    torch.testing.assert_close(model.to_logits(final_norm(last)), logits, rtol=0, atol=0)
    torch.testing.assert_close(unembed(model, last), logits, rtol=0, atol=0)


def test_hooks_are_removed_when_the_forward_raises(family):
    model, tokens = family
    names = block_names(model)

    def broken(out):
        raise RuntimeError("planted failure")

    raises = pytest.raises(RuntimeError, match="planted failure")
    with raises, record(model, names), patch(model, {names[-1]: broken}):
        assert not no_hooks_left(model)
        logits_of(model, tokens)
    assert no_hooks_left(model)


def test_patching_a_clean_run_into_another_gives_its_logits():
    torch.manual_seed(0)
    model = Llama(STORIES260K).eval()
    clean, corrupted = torch.randint(0, 512, (2, 1, 10), generator=torch.Generator().manual_seed(2))
    last = block_names(model)[-1]
    with torch.no_grad():
        with record(model, [last]) as acts:
            clean_logits = model(clean)
        with patch(model, {last: lambda out: acts[last][0]}):
            patched = model(corrupted)
    torch.testing.assert_close(patched, clean_logits, rtol=0, atol=0)


def test_record_keeps_one_output_per_call():
    torch.manual_seed(0)
    model = GPT2(vocab_size=300, context=64, emb=32, heads=4, depth=2).eval()
    tokens = torch.randint(0, 300, (1, 6))
    cache = model.new_cache()
    with torch.no_grad(), record(model, ["blocks.1", "blocks.1.attention"]) as acts:
        model(tokens[:, :5], cache=cache)
        model(tokens[:, 5:], cache=cache)  # one more step with the KV cache
    assert [tuple(a.shape) for a in acts["blocks.1"]] == [(1, 5, 32), (1, 1, 32)]
    assert len(acts["blocks.1.attention"]) == 2
    with record(model, ["blocks.0"]) as acts:
        model(tokens)
    assert not acts["blocks.0"][0].requires_grad  # detached by default


def test_an_unknown_name_lists_close_ones_and_leaves_no_hook():
    torch.manual_seed(0)
    model = Llama(STORIES260K)
    with (
        pytest.raises(ValueError, match=r"blocks\.1\.attention"),
        record(model, ["blocks.0", "blocks.1.attn"]),
    ):
        pass
    assert no_hooks_left(model)


def test_a_patch_must_return_an_output_of_the_same_shape():
    torch.manual_seed(0)
    model = Generator(vocab_size=256, emb=32, heads=4, depth=2, context=64).eval()
    tokens = torch.randint(0, 256, (1, 8))
    with pytest.raises(ValueError, match="returned None"), patch(model, {"stack.blocks.0": lambda out: None}):
        model(tokens)
    shorter = {"stack.blocks.0": lambda out: out[:, :4]}
    with pytest.raises(ValueError, match=r"shaped like the output \(1, 8, 32\)"), patch(model, shorter):
        model(tokens)
    assert no_hooks_left(model)


# Head scores


def planted(t: int, period: int) -> torch.Tensor:
    """Three heads ``(1, 3, t, t)``: previous-token, induction (period), uniform causal."""
    w = torch.zeros(1, 3, t, t)
    for i in range(t):
        w[0, 0, i, max(i - 1, 0)] = 1.0  # the previous token (the first query: itself)
        w[0, 1, i, i - period + 1 if i >= period else 0] = 1.0  # the token after the previous occurrence
        w[0, 2, i, : i + 1] = 1.0 / (i + 1)  # evenly over what it may see
    return w


def test_planted_heads_score_one_and_a_uniform_head_its_exact_mean():
    period = 100
    t = 2 * period
    w = planted(t, period).expand(2, -1, -1, -1)  # a batch of two
    previous, induction = previous_token_score(w), induction_score(w, period)
    assert previous.shape == induction.shape == (3,)
    assert previous[0] == 1 and induction[1] == 1
    uniform_previous = sum(Fraction(1, i + 1) for i in range(1, t)) / (t - 1)  # queries 1 .. t-1
    uniform_induction = sum(Fraction(1, i + 1) for i in range(period, t)) / (t - period)  # period .. t-1
    assert previous[2].item() == pytest.approx(float(uniform_previous), rel=1e-6)
    assert induction[2].item() == pytest.approx(float(uniform_induction), rel=1e-6)
    assert induction[2] < 0.01  # about ln(2) / period
    assert induction[0] == 0 and previous[1] == pytest.approx(1 / (t - 1))  # each head scores the other's low


def test_scores_of_a_model_s_attention_list():
    torch.manual_seed(0)
    model = Llama(STORIES260K).eval()
    tokens = repeated_tokens(3, 16, 512, low=3, generator=torch.Generator().manual_seed(0))
    weights = []
    with torch.no_grad():
        model(tokens, attention=weights)
    assert len(weights) == STORIES260K.depth
    for w in weights:
        for score in (previous_token_score(w), induction_score(w, 16)):
            assert score.shape == (STORIES260K.heads,) and ((score >= 0) & (score <= 1)).all()


def test_repeated_tokens_and_score_errors():
    tokens = repeated_tokens(4, 10, 50, low=5, generator=torch.Generator().manual_seed(0))
    assert tokens.shape == (4, 20) and torch.equal(tokens[:, :10], tokens[:, 10:])
    assert tokens.min() >= 5 and all(len(set(row[:10].tolist())) == 10 for row in tokens)
    with pytest.raises(ValueError, match="2 <= period < t"):
        induction_score(torch.zeros(1, 2, 8, 8), 8)
    with pytest.raises(ValueError, match=r"\(b, h, t, t\)"):
        previous_token_score(torch.zeros(2, 8, 8))


# One head at a time


@pytest.mark.parametrize("name", ["llama-stories260K", "gpt2", "generator-pre"])
def test_per_head_hooks_agree_with_the_weights(name):
    torch.manual_seed(0)
    model = FAMILIES[name]().eval()
    tokens = torch.randint(0, 256, (2, 12), generator=torch.Generator().manual_seed(1))
    layer = f"{block_names(model)[-1]}.attention"
    attention = module_named(model, layer)
    h = attention.heads
    with torch.no_grad():
        plain = logits_of(model, tokens)
        with record_heads(model, [layer]) as z, record(model, [layer]) as out:
            logits_of(model, tokens)
        (b, t, heads, s), e = z[layer][0].shape, out[layer][0].size(-1)
        assert heads == h and h * s == attention.unify_heads.in_features
        torch.testing.assert_close(attention.unify_heads(z[layer][0].flatten(-2)), out[layer][0])
        with patch_heads(model, {layer: lambda z: z}):
            assert torch.equal(logits_of(model, tokens), plain)  # the identity changes no bit
        with ablate_heads(model, {layer: [1]}):
            ablated = logits_of(model, tokens)
        edited = copy.deepcopy(model)  # head 1 removed from the weights: its columns of unify_heads
        module_named(edited, f"{layer}.unify_heads").weight[:, s : 2 * s] = 0.0
        torch.testing.assert_close(ablated, logits_of(edited, tokens))
        assert not torch.allclose(ablated, plain)
        with ablate_heads(model, {layer: range(h)}), record(model, [layer]) as every:
            logits_of(model, tokens)
        bias = attention.unify_heads.bias
        expected = torch.zeros(b, t, e) if bias is None else bias.expand(b, t, e)
        torch.testing.assert_close(every[layer][0], expected)  # all heads gone: only the bias
    assert no_hooks_left(model)


def test_per_head_hooks_say_what_went_wrong():
    torch.manual_seed(0)
    model = Llama(STORIES260K).eval()
    tokens = torch.randint(0, 512, (1, 6))
    with pytest.raises(ValueError, match="not an attention layer"), record_heads(model, ["blocks.0"]):
        pass
    with pytest.raises(ValueError, match=r"heads 0\.\.7"), ablate_heads(model, {"blocks.0.attention": [8]}):
        pass
    wrong = {"blocks.0.attention": lambda z: z[:, :, :2]}
    with pytest.raises(ValueError, match=r"\(1, 6, 8, 8\)"), patch_heads(model, wrong):
        model(tokens)
    assert no_hooks_left(model)


def test_recorded_activations_equal_nnsight_s():
    nnsight = pytest.importorskip("nnsight", reason="nnsight is not installed (optional oracle of record)")
    torch.manual_seed(0)
    model = GPT2(vocab_size=300, context=64, emb=32, heads=4, depth=2).eval()
    tokens = torch.randint(0, 300, (2, 10))
    with torch.no_grad(), record(model, ["blocks.1"]) as ours:
        model(tokens)
    traced = nnsight.NNsight(model)
    with torch.no_grad(), traced.trace(tokens):
        theirs = traced.blocks[1].output.save()
    torch.testing.assert_close(ours["blocks.1"][0], getattr(theirs, "value", theirs))


def _newton_logistic(z: torch.Tensor, y: torch.Tensor, decay: float) -> torch.Tensor:
    """The regularised logistic regression's optimum by Newton's method in float64 (an oracle independent
    of L-BFGS): ``z (n, e)`` standardised features -> ``(w (e,), c)`` stacked as ``(e + 1,)``."""
    n, e = z.shape
    design = torch.cat([z, torch.ones(n, 1, dtype=z.dtype)], dim=1)  # (n, e + 1): a bias column
    penalty = torch.full((e + 1,), 2 * decay, dtype=z.dtype)
    penalty[-1] = 0.0  # no decay on the bias
    theta = torch.zeros(e + 1, dtype=z.dtype)
    for _ in range(50):
        p = torch.sigmoid(design @ theta)
        gradient = design.T @ (p - y) / n + penalty * theta
        hessian = design.T @ (design * (p * (1 - p))[:, None]) / n + torch.diag(penalty)
        theta = theta - torch.linalg.solve(hessian, gradient)
    return theta


def test_a_probe_finds_the_regularised_optimum_newton_s_method_finds():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(200, 6, generator=generator) * torch.tensor([1.0, 5.0, 0.1, 2.0, 1.0, 3.0]) + 4.0
    y = (x[:, 0] - 0.3 * x[:, 1] + torch.randn(200, generator=generator) > 2.0).long()
    probe = fit_probe(x, y, weight_decay=0.05)
    z = ((x - probe.mean) / probe.scale).double()
    expected = _newton_logistic(z, y.double(), 0.05)
    got = torch.cat([probe.linear.weight[0], probe.linear.bias]).double()
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)


def test_a_probe_s_direction_is_the_planted_one_in_the_activations_own_space():
    generator = torch.Generator().manual_seed(1)
    planted = torch.nn.functional.normalize(torch.randn(16, generator=generator), dim=0)  # (e,)
    x = torch.randn(2_000, 16, generator=generator) * 3.0 + 1.0  # (n, e): offset, equal spreads
    y = x @ planted > float(planted.sum())  # the side of a plane through the mean
    probe = fit_probe(x, y, weight_decay=1e-3)
    assert float(probe.direction() @ planted) > 0.99 and float(probe.direction().norm()) == pytest.approx(1.0)
    assert ((probe(x) > 0) == y).float().mean() > 0.97


def test_a_probe_says_what_is_wrong_with_its_input():
    x = torch.randn(8, 3)
    with pytest.raises(ValueError, match="both classes"):
        fit_probe(x, torch.ones(8))
    with pytest.raises(ValueError, match="weight_decay"):
        fit_probe(x, torch.arange(8) % 2, weight_decay=0.0)
    with pytest.raises(ValueError, match=r"\(n, e\)"):
        fit_probe(x, torch.arange(7) % 2)
