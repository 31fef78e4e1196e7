"""Tests for the lab modules written from mutation testing (``make mutate``, issue 28): each fails
for a small change of a lab module that the other tests let pass. Expected values come from hand
arithmetic, closed forms or the documented seeds, never from the function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import AttentionConfigError
from attention_core.embeddings import embed
from attention_core.labs import block as b

TEXT = "the cat sat on the mat"

# --- block ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["norm", "placement", "ffn", "mask"])
def test_block_config_error_names_the_setting(field):
    with pytest.raises(AttentionConfigError, match=f"^{field} must be one of"):
        b.BlockConfig(**{field: "nonsense"})


def test_block_ff_mult_limits():
    assert b.BlockConfig(ff_mult=1).d_ff == 16 and b.BlockConfig(ff_mult=8).d_ff == 128
    for bad in (0, 9, 2.0):
        with pytest.raises(AttentionConfigError):
            b.BlockConfig(ff_mult=bad)


def test_attention_config_of_a_layer_keeps_the_mask_and_shifts_the_seed():
    a = b.BlockConfig(mask="causal", seed=5, d_model=8, heads=4).attention_config(3)
    assert (a.mask, a.seed, a.d_model, a.heads) == ("causal", 8, 8, 4)


def test_init_ffn_uses_its_documented_seed_and_scale():
    rng = np.random.default_rng((7, 1))
    W_in = rng.standard_normal((4, 12)) / math.sqrt(4)
    W_out = rng.standard_normal((12, 4)) / math.sqrt(12)
    gate = rng.standard_normal((4, 12)) / math.sqrt(4)
    p = b.init_ffn(4, 12, True, 7)
    np.testing.assert_array_equal(p.W_in, W_in)
    np.testing.assert_array_equal(p.W_out, W_out)
    np.testing.assert_array_equal(p.W_gate, gate)
    assert b.init_ffn(4, 12, False, 7).W_gate is None


def test_block_trace_names_its_stages_and_keeps_the_attention_trace():
    cfg = b.BlockConfig(seed=2)
    tokens = ("a", "b", "c")
    x = embed(tokens, 16, 2, True)
    tr = b.block_forward(x, cfg, tokens=tokens)
    assert [name for name, _ in tr.stages()] == ["x", "attn_in", "attn_out", "h", "ffn_in", "ffn_out", "y"]
    assert tr.tokens == tokens and tr.attention.tokens == tokens
    assert tr.attention.config == cfg.attention_config(0)
    np.testing.assert_array_equal(tr.attention.output, tr.attn_out)
    assert x.flags.writeable and not tr.x.flags.writeable  # the trace froze a copy, not the caller's x
    x[:] = 0.0
    assert tr.x.any()


def test_block_lab_keeps_max_tokens_and_embeds_with_seed_and_positions():
    cfg = b.BlockConfig(seed=5)
    tr = b.block_lab("one two three four five", cfg, max_tokens=3)
    assert tr.tokens == ("one", "two", "three") and tr.attention.tokens == tr.tokens
    np.testing.assert_array_equal(tr.x, embed(("one", "two", "three"), 16, 5, True))


def _mean_rms(x):
    return float(np.mean([math.sqrt(sum(v * v for v in row) / len(row)) for row in x]))


def test_depth_run_stacks_layers_with_their_own_seeds():
    cfg = b.BlockConfig(seed=3)
    run = b.depth_run(TEXT, cfg, 2)
    assert run.depth == 2
    x0 = embed(tuple(TEXT.split()), 16, 3, True)
    assert run.pre_rms[0] == pytest.approx(_mean_rms(x0), rel=1e-12)
    for placement, sizes in (("pre", run.pre_rms), ("post", run.post_rms)):
        c = b.BlockConfig(seed=3, placement=placement)
        x1 = b.block_forward(x0, c, 0).y
        x2 = b.block_forward(x1, c, 1).y  # layer 1 draws its weights with seed + 1
        assert list(sizes) == pytest.approx([_mean_rms(x0), _mean_rms(x1), _mean_rms(x2)], rel=1e-12)


def test_depth_limits():
    assert b.depth_run("a b", b.BlockConfig(), 1).depth == 1
    assert b.depth_run("a", b.BlockConfig(), b.MAX_DEPTH).pre_rms.shape == (b.MAX_DEPTH + 1,)
    for bad in (0, b.MAX_DEPTH + 1):
        with pytest.raises(AttentionConfigError):
            b.depth_run("a b", b.BlockConfig(), bad)


def test_flops_defaults_are_the_classic_ffn_and_the_sweep_is_per_n():
    n, d, h, dff = 50, 32, 4, 128
    f = b.block_flops(n, d, h, dff)
    assert f.n == n and f.ffn == 2 * 2 * n * d * dff  # the default is the classic (GELU) FFN
    assert b.crossover_n(d, h, dff) == pytest.approx((8 * d * d + 4 * d * dff) / (4 * d + 6 * h))
    sweep = b.flops_sweep([10, 20.0], d, h, dff)
    assert [s.n for s in sweep] == [10, 20] and sweep[1].ffn == 4 * 20 * d * dff
    assert sweep[0].attention_n2 == 4 * 10 * 10 * d + 6 * h * 10 * 10
    swi = b.flops_sweep([10], d, h, dff, "swiglu")
    assert swi[0].ffn == 6 * 10 * d * dff and swi[0].projections == 8 * 10 * d * d


def test_residual_gap_of_post_ln_with_rmsnorm_uses_rmsnorm():
    tr = b.block_lab(TEXT, b.BlockConfig(placement="post", norm="rms"))
    assert b.residual_gap(tr) <= 1e-12


def test_norm_comparison_is_per_token():
    x = np.array([[1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 1.0, 1.0], [5.0, -5.0, 5.0, -5.0]])
    c = b.norm_comparison(x)
    assert c.layer_mean.shape == (3,) and np.allclose(c.layer_mean, 0.0, atol=1e-15)
    # RMSNorm does not centre: row 0's mean after it is mean(x) / rms(x)
    assert c.rms_mean[0] == pytest.approx(3.0 / math.sqrt((1 + 4 + 9 + 36) / 4 + 1e-5))
    np.testing.assert_allclose(c.rms_rms, [math.sqrt(r / (r + 1e-5)) for r in (12.5, 0.5, 25.0)], rtol=1e-12)
