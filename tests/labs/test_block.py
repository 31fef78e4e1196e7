"""The block lab's core against references written here (norms, FFN, residuals, FLOP counts)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attention_core import AttentionConfigError
from attention_core.embeddings import embed
from attention_core.labs import block as b
from attention_core.trace import init_params

TEXT = "the cat sat on the mat"


def ln_ref(x):
    out = np.zeros_like(x)
    for i, row in enumerate(x):
        mu = sum(row) / len(row)
        var = sum((v - mu) ** 2 for v in row) / len(row)
        out[i] = [(v - mu) / math.sqrt(var + 1e-5) for v in row]
    return out


def rms_ref(x):
    return np.array([[v / math.sqrt(sum(u * u for u in row) / len(row) + 1e-5) for v in row] for row in x])


def gelu_ref(v):
    return 0.5 * v * (1 + math.erf(v / math.sqrt(2)))


def attention_ref(x, cfg):
    """Multi-head self-attention with loops over heads and query rows."""
    p = init_params(cfg.attention_config())
    n = x.shape[0]
    heads = []
    for h in range(cfg.heads):
        Q, K, V = x @ p.W_Q[h], x @ p.W_K[h], x @ p.W_V[h]
        out = np.zeros_like(V)
        for i in range(n):
            js = range(i + 1) if cfg.mask == "causal" else range(n)
            s = [float(Q[i] @ K[j]) / math.sqrt(Q.shape[1]) for j in js]
            m = max(s)
            ex = [math.exp(v - m) for v in s]
            for v, j in zip(ex, js, strict=True):
                out[i] += v / sum(ex) * V[j]
        heads.append(out)
    return np.concatenate(heads, axis=1) @ p.W_O


def ffn_ref(x, cfg):
    p = b.init_ffn(cfg.d_model, cfg.d_ff, cfg.ffn == "swiglu", cfg.seed)
    if cfg.ffn == "swiglu":
        g = x @ p.W_gate
        return (g / (1 + np.exp(-g)) * (x @ p.W_in)) @ p.W_out
    hidden = x @ p.W_in
    act = np.vectorize(gelu_ref) if cfg.ffn == "gelu" else (lambda a: np.maximum(a, 0))
    return act(hidden) @ p.W_out


@pytest.mark.parametrize(
    "placement,norm,ffn,mask",
    [("pre", "layer", "gelu", "none"), ("post", "rms", "relu", "causal"), ("pre", "rms", "swiglu", "causal")],
)
def test_block_equals_reference(placement, norm, ffn, mask):
    cfg = b.BlockConfig(d_model=8, heads=2, ff_mult=2, norm=norm, placement=placement, ffn=ffn, mask=mask)
    x = embed(("a", "b", "c", "d", "e"), 8, 0, True)
    nrm = ln_ref if norm == "layer" else rms_ref
    if placement == "pre":
        h = x + attention_ref(nrm(x), cfg)
        y = h + ffn_ref(nrm(h), cfg)
    else:
        h = nrm(x + attention_ref(x, cfg))
        y = nrm(h + ffn_ref(h, cfg))
    tr = b.block_forward(x, cfg, tokens=tuple("abcde"))
    assert np.max(np.abs(tr.h - h)) <= 1e-10
    assert np.max(np.abs(tr.y - y)) <= 1e-10
    if placement == "pre":  # the residual stream: y − x is exactly the two sub-layers' outputs
        assert np.max(np.abs(tr.y - tr.x - tr.attn_out - tr.ffn_out)) <= 1e-12


def test_norm_statistics():
    tr = b.block_lab("dog bites man", b.BlockConfig(norm="layer"))
    assert np.allclose(tr.attn_in.mean(axis=1), 0, atol=1e-12)
    assert np.allclose(tr.attn_in.var(axis=1), 1, atol=1e-4)
    tr = b.block_lab("dog bites man", b.BlockConfig(norm="rms"))
    assert np.allclose(np.sqrt((tr.attn_in**2).mean(axis=1)), 1, atol=1e-4)
    assert np.max(np.abs(tr.attn_in.mean(axis=1))) > 1e-3  # RMSNorm does not centre


def test_depth_post_ln_stays_normalised_pre_ln_grows():
    run = b.depth_run("the cat sat on the mat", b.BlockConfig(), 12)
    assert run.pre_rms.shape == (13,) and run.post_rms.shape == (13,)
    assert np.allclose(run.post_rms[1:], 1.0, atol=1e-4)
    assert run.pre_rms[-1] > 1.5 * run.pre_rms[0]


def test_config_errors():
    for bad in (
        dict(norm="batch"),
        dict(placement="middle"),
        dict(ffn="tanh"),
        dict(ff_mult=0),
        dict(heads=3),
    ):
        with pytest.raises(AttentionConfigError):
            b.BlockConfig(**bad)
    with pytest.raises(AttentionConfigError):
        b.block_lab("   ", b.BlockConfig())


def test_flops_counts_and_crossover():
    n, d, h, dff = 100, 64, 4, 256
    f = b.block_flops(n, d, h, dff, "gelu")
    assert f.projections == 4 * 2 * n * d * d
    assert f.attention_n2 == 2 * 2 * n * n * d + 6 * h * n * n
    assert f.ffn == 2 * 2 * n * d * dff
    assert b.block_flops(n, d, h, dff, "swiglu").ffn == 3 * 2 * n * d * dff
    for kind in ("gelu", "swiglu"):
        x = b.crossover_n(d, h, dff, kind)
        first = next(
            m
            for m in range(1, 10_000)
            if (g := b.block_flops(m, d, h, dff, kind)).attention_n2 >= g.linear_in_n
        )
        assert first - 1 < x <= first
    # d_ff = 4d, h ≪ d: attention's n² terms win from about n = 6d
    assert b.crossover_n(4096, 32, 4 * 4096) == pytest.approx(6 * 4096, rel=0.02)
    # issue 24: SwiGLU at d_ff = 4d crosses at about 8d, not 6d (SmolLM2's d = 576, h = 9:
    # (8·576² + 6·576·2304) / (4·576 + 54) = 10,616,832 / 2,358 ≈ 4,502 against 7,962,624 / 2,358 ≈ 3,377)
    assert round(b.crossover_n(576, 9, 4 * 576, "swiglu")) == 4502
    assert round(b.crossover_n(576, 9, 4 * 576, "gelu")) == 3377
    assert b.crossover_n(4096, 32, 4 * 4096, "swiglu") == pytest.approx(8 * 4096, rel=0.02)
    for mult, kind, per_d in ((4, "gelu", 6), (4, "swiglu", 8), (8 / 3, "swiglu", 6), (2, "relu", 4)):
        assert b.crossover_per_d_model(mult, kind) == pytest.approx(per_d)
        assert b.crossover_n(8192, 8, int(mult * 8192), kind) / 8192 == pytest.approx(per_d, rel=0.01)


def test_stage_stats_residual_gap_and_norm_comparison():
    for placement in ("pre", "post"):
        tr = b.block_lab("one two three four", b.BlockConfig(placement=placement))
        assert b.residual_gap(tr) <= 1e-12
        stats = {s.name: s for s in b.stage_stats(tr)}
        assert stats["y"].shape == (4, 16) and stats["y"].in_stream and not stats["ffn_out"].in_stream
        row = tr.y[2]
        assert stats["y"].mean_rms == pytest.approx(
            np.mean([math.sqrt(sum(v * v for v in r) / 16) for r in tr.y])
        )
        assert abs(row.mean()) <= stats["y"].max_abs_row_mean
    x = np.array([[1.0, 2.0, 3.0, 6.0], [-1.0, 0.0, 0.0, 1.0]])
    c = b.norm_comparison(x)
    assert np.allclose(c.layer_mean, 0, atol=1e-12)
    assert np.allclose(c.rms_rms, np.sqrt(np.array([12.5, 0.5]) / (np.array([12.5, 0.5]) + 1e-5)), atol=1e-12)
    assert c.rms_mean[0] == pytest.approx(3.0 / math.sqrt(12.5 + 1e-5))
    # the catalog's "RMS just below 1 (the ε in the denominator)", for both norms
    assert np.all(c.layer_rms < 1) and np.all(c.rms_rms < 1) and np.all(c.layer_rms > 0.99)


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


@pytest.mark.parametrize("placement", ["pre", "post"])
@pytest.mark.parametrize("field", ["y", "attn_out", "ffn_out", "x"])
def test_residual_gap_sees_a_changed_stage(placement, field):
    tr = b.block_lab("the cat sat on the mat", b.BlockConfig(placement=placement))
    assert b.residual_gap(tr) <= 1e-12
    broken = np.array(getattr(tr, field))
    broken[2, 3] += 0.25
    gap = b.residual_gap(dataclasses.replace(tr, **{field: broken}))
    if placement == "pre":  # y − (x + Attn + FFN) moves by exactly the change
        assert gap == pytest.approx(0.25, abs=1e-12)
    else:  # through the norms: not 0.25, but far above rounding
        assert gap > 1e-3


def test_residual_gap_of_a_post_ln_block_read_as_pre_ln_is_large():
    """The two formulas differ: a Post-LN trace does not satisfy the Pre-LN identity."""
    tr = b.block_lab("dog bites man", b.BlockConfig(placement="post"))
    as_pre = dataclasses.replace(tr, config=b.BlockConfig(placement="pre"))
    assert b.residual_gap(as_pre) > 0.1
