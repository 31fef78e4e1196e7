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


# --- cost -------------------------------------------------------------------------------------------


def test_cost_sizes_defaults_and_limits():
    from attention_core.labs import cost as c

    assert list(c.dtypes_by_size()) == [4, 2, 1]  # largest first
    assert c.dtypes_by_size()[2] == ("fp16", "bf16")
    assert c.attention_matrix_elements(10) == 100  # one head, one sequence, one layer
    assert c.attention_matrix_elements(10, 2, 3, 5) == 2 * 3 * 5 * 100
    for bad in (dict(heads=0), dict(batch=0), dict(layers=0), dict(n=0)):
        with pytest.raises(ValueError):
            c.attention_matrix_elements(**{"n": 4, **bad})
    assert c.attention_matrix_bytes(10, 1) == 100  # 1 byte per element (fp8) is allowed
    with pytest.raises(ValueError):
        c.attention_matrix_bytes(10, 0)


def test_units_switch_at_the_base_and_stop_at_the_last():
    from attention_core.labs import cost as c

    assert c.in_units(1023, True) == (1023.0, "B") and c.in_units(1024, True) == (1.0, "KiB")
    assert c.in_units(999, False) == (999.0, "B") and c.in_units(1000, False) == (1.0, "kB")
    assert c.in_units(1024**7, True) == (1024.0, "EiB")  # no unit after EiB: the value grows
    assert c.in_units(1000**7, False) == (1000.0, "EB")
    assert c.format_bytes(8 * 1024**2) == "8 MiB"  # binary by default


def test_memory_table_passes_every_size_on():
    from attention_core.labs import cost as c

    rows = c.memory_table((100, 200), 4, heads=3, batch=5, layers=7)
    assert rows[0].bytes == 3 * 5 * 7 * 100 * 100 * 4 and rows[1].ratio_to_first == 4.0
    assert rows[0].elements == 3 * 5 * 7 * 100 * 100 and type(rows[0].elements) is int


def test_attention_flops_fields_and_defaults():
    from attention_core.labs import cost as c

    f = c.attention_flops(10, 4)
    assert (f.n, f.d_k, f.d_v, f.heads) == (10, 4, 4, 1)
    assert f.scores == 2 * 10 * 10 * 4 and f.weighted_sum == 2 * 10 * 10 * 4
    g = c.attention_flops(10, 4, 8, 3)
    assert (g.d_v, g.heads, g.weighted_sum) == (8, 3, 3 * 2 * 10 * 10 * 8)
    t = c.flops_table([10, 20.0], 4, 8)
    assert [r.n for r in t] == [10, 20] and t[0].heads == 1 and t[1].d_v == 8
    assert c.flops_table([10], 4, 8, 2)[0].heads == 2


def test_peak_bytes_counts_only_the_run_and_leaves_tracing_as_it_was():
    import tracemalloc

    from attention_core.labs import cost as c

    assert c.peak_bytes(lambda: None) == 0
    assert not tracemalloc.is_tracing()
    tracemalloc.start()
    try:
        keep = np.ones(500_000)  # 4 MB held before the run
        tmp = np.ones(2_000_000)  # a 16 MB peak before the run, freed again
        del tmp
        got = c.peak_bytes(lambda: np.ones(1_000_000))  # 8 MB during the run
        assert 8_000_000 <= got < 8_100_000
        assert tracemalloc.is_tracing()  # the caller's tracing is not stopped
        del keep
    finally:
        tracemalloc.stop()
    assert c.peak_bytes(lambda: np.ones(1000)) >= 8000 and not tracemalloc.is_tracing()


def test_measurements_pass_their_settings_on(monkeypatch):
    from attention_core.labs import cost as c

    calls = []
    monkeypatch.setattr(
        c, "direct_attention", lambda Q, K, V, causal: calls.append(("direct", Q.shape, causal))
    )
    monkeypatch.setattr(
        c, "tiled_attention", lambda Q, K, V, bq, bk, causal: calls.append(("tiled", Q.shape, bq, bk, causal))
    )
    ticks = iter([10.0, 12.5, 20.0, 21.0] + [0.0] * 4)
    monkeypatch.setattr(c.time, "perf_counter", lambda: next(ticks))
    m = c.measure_direct_attention(8, causal=True)
    assert (m.method, m.n, m.d, m.causal, m.block, m.seconds, m.matrix_bytes) == (
        "direct",
        8,
        64,
        True,
        None,
        2.5,
        512,
    )
    t = c.measure_tiled_attention(8, 4, block=3)
    assert (t.method, t.n, t.d, t.causal, t.block, t.seconds) == ("tiled", 8, 4, False, 3, 1.0)
    assert calls == [("direct", (8, 64), True)] * 2 + [("tiled", (8, 4), 3, 3, False)] * 2  # timed + traced
    assert c.measure_tiled_attention(2).block == 128 and not c.measure_direct_attention(2).causal


def test_measurement_limits(monkeypatch):
    from attention_core.labs import cost as c

    monkeypatch.setattr(c, "MAX_DIRECT_N", 16)
    monkeypatch.setattr(c, "MAX_TILED_N", 16)
    for f in (c.measure_direct_attention, c.measure_tiled_attention):
        assert f(1, 1).n == 1 and f(16, 1).n == 16
        for n, d in ((0, 4), (17, 4), (4, 0)):
            with pytest.raises(ValueError):
                f(n, d)


def test_sweep_repeats_small_sizes_and_passes_d_and_block_on(monkeypatch):
    from attention_core.labs import cost as c

    calls = []

    def fake(method):
        def run(n, d=64, seed=0, causal=False, block=None):
            calls.append((method, n, d, block))
            return c.Measurement(method, n, d, causal, 1.0 / (len(calls)), len(calls), n * n * 8, block)

        return run

    monkeypatch.setattr(c, "measure_direct_attention", fake("direct"))
    monkeypatch.setattr(c, "measure_tiled_attention", fake("tiled"))
    points = list(c.measure_sweep(1024, block=32, d=16))
    assert [p.n for p in points] == [128, 256, 512, 1024]
    per_n = {n: sum(1 for m, k, *_ in calls if k == n) for n in (128, 256, 512, 1024)}
    assert per_n == {128: 6, 256: 6, 512: 6, 1024: 2}  # 3 + 3 runs up to 512, then 1 + 1
    assert all(d == 16 for _, n, d, _ in calls if n != 64)
    assert {block for m, _, _, block in calls if m == "tiled"} == {32}
    assert all(p.direct.d == 16 and p.tiled.n == p.n for p in points)
    # calls 2, 3, 4 are the three direct runs at n = 128 (call 1 is the warm-up): the point keeps the
    # first run's peak (2) with the fastest run's time (1/4)
    assert calls[0][1] == 64 and [c_[1] for c_ in calls[1:4]] == [128] * 3
    assert points[0].direct.peak_bytes == 2 and points[0].direct.seconds == pytest.approx(1 / 4)


def test_sweep_summary_of_a_zero_peak_is_none():
    from attention_core.labs import cost as c

    def point(n, peak):
        m = c.Measurement("direct", n, 64, False, 1.0, peak, n * n * 8, None)
        return c.SweepPoint(n, m, m)

    s = c.summarise_sweep([point(128, 0), point(256, 100), point(512, 400)])
    assert s.steps == (None, None, 4.0) and s.median_step == 4.0


def test_tiled_check_fields_seed_and_frozen_grid(monkeypatch):
    from attention_core.labs import cost as c

    chk = c.tiled_check(10, 4, True)
    assert (chk.n, chk.block, chk.causal, chk.matrix_elements) == (10, 4, True, 100)
    assert not chk.grid.flags.writeable
    seen = []
    real = c.tiled_attention
    monkeypatch.setattr(c, "tiled_attention", lambda Q, *a, **k: seen.append(Q) or real(Q, *a, **k))
    c.tiled_check(6, 4, False, d=3)
    np.testing.assert_array_equal(seen[0], np.random.default_rng(0).standard_normal((6, 3)))  # seed 0


# --- decoder_view -----------------------------------------------------------------------------------


def _w(n, h=2, seed=0):
    rng = np.random.default_rng(seed)
    w = np.tril(rng.random((h, n, n)) + 0.1)
    return w / w.sum(axis=-1, keepdims=True)


def test_head_summary_of_one_and_two_tokens_by_hand():
    from attention_core.labs import decoder_view as dv

    one = np.ones((3, 1, 1))  # one token: row 0 is the only row
    assert dv.head_summary(one, "first").tolist() == [1.0, 1.0, 1.0]
    assert dv.head_summary(one, "previous").tolist() == [0.0, 0.0, 0.0]
    assert dv.head_summary(one, "distance").tolist() == [0.0, 0.0, 0.0]
    two = np.array([[[1.0, 0.0], [0.25, 0.75]]])  # two tokens: row 1 only
    assert dv.head_summary(two, "first").tolist() == [0.25]
    assert dv.head_summary(two, "previous").tolist() == [0.25]
    assert dv.head_summary(two, "distance").tolist() == [0.25]
    expected = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    assert dv.head_summary(two, "entropy")[0] == pytest.approx(expected, rel=1e-14)


def test_head_summary_keeps_leading_axes_and_computes_in_float64():
    from attention_core.labs import decoder_view as dv

    w = np.stack([_w(4, h=3, seed=s) for s in range(2)])  # [layers 2, heads 3, 4, 4]
    for stat in dv.HEAD_STATS:
        got = dv.head_summary(w, stat)
        assert got.shape == (2, 3)
        np.testing.assert_allclose(got[1], dv.head_summary(w[1], stat), rtol=1e-14)
    w32 = w[0].astype(np.float32)
    got = dv.head_summary(w32, "first")
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, w32.astype(np.float64)[:, 1:, 0].mean(axis=1))


def test_layer_head_grid_stacks_every_layer():
    from types import SimpleNamespace

    from attention_core.labs import decoder_view as dv

    layers = [SimpleNamespace(weights=_w(5, h=3, seed=s)) for s in range(4)]
    grid = dv.layer_head_grid(SimpleNamespace(layers=layers), "distance")
    assert grid.shape == (4, 3)
    np.testing.assert_allclose(grid[2], dv.head_summary(layers[2].weights, "distance"))


def test_pair_norm_change_is_computed_in_float64():
    from attention_core.labs import decoder_view as dv

    before = np.array([[0.1, 0.7, 3.3, -1.9]], dtype=np.float32)
    after = np.array([[0.7, 0.1, -1.9, 3.3]], dtype=np.float32)  # swapped inside pairs: same lengths
    b64, a64 = before.astype(np.float64), after.astype(np.float64)
    expected = max(
        abs(math.hypot(b64[0, i], b64[0, i + 1]) - math.hypot(a64[0, i], a64[0, i + 1])) for i in (0, 2)
    )
    assert dv.max_pair_norm_change(before, after) == expected == 0.0
    stretched = (after * np.float32(1.1)).astype(np.float32)
    s64 = stretched.astype(np.float64)
    expected = max(
        abs(math.hypot(b64[0, i], b64[0, i + 1]) - math.hypot(s64[0, i], s64[0, i + 1])) for i in (0, 2)
    )
    assert dv.max_pair_norm_change(before, stretched) == pytest.approx(expected, rel=1e-15)


def test_rope_offset_curve_fields_layout_and_precision():
    from attention_core.labs import decoder_view as dv

    rng = np.random.default_rng(3)
    q, k = rng.normal(size=4).astype(np.float32), rng.normal(size=4).astype(np.float32)
    curve = dv.rope_offset_curve(q, k, [0, 1, 2], [0, 5], 10.0, "half")
    assert curve.offsets.tolist() == [0, 1, 2] and curve.starts.tolist() == [0, 5]
    assert curve.scores.dtype == np.float64
    for arr in (curve.offsets, curve.starts, curve.scores):
        assert not arr.flags.writeable
    q64, k64 = q.astype(np.float64), k.astype(np.float64)

    def rot_half(x, p):  # pairs (i, i + d/2), θ_i = 10^(−2i/4)
        out = x.copy()
        for i in range(2):
            a = p * 10.0 ** (-2 * i / 4)
            out[i], out[i + 2] = (
                x[i] * math.cos(a) - x[i + 2] * math.sin(a),
                x[i] * math.sin(a) + x[i + 2] * math.cos(a),
            )
        return out

    for a, s in enumerate((0, 5)):
        for b_, o in enumerate((0, 1, 2)):
            assert curve.scores[a, b_] == pytest.approx(rot_half(q64, s + o) @ rot_half(k64, s), abs=1e-12)


def test_kv_memory_and_choose_next():
    from types import SimpleNamespace

    from attention_core.labs import decoder_view as dv

    cfg = SimpleNamespace(n_layers=2, n_kv_heads=1, n_heads=4, head_dim=8)
    m = dv.kv_memory(cfg, 10)
    assert (m.n_tokens, m.gqa_bytes, m.mha_bytes, m.ratio) == (
        10,
        2 * 2 * 10 * 1 * 8 * 4,
        2 * 2 * 10 * 4 * 8 * 4,
        4.0,
    )
    flat = np.zeros(5)  # T = 1: a seeded draw from the uniform distribution, not the greedy 0
    draws = [dv.choose_next(flat, 1.0, 0, 7, step) for step in range(6)]
    assert draws == [int(np.random.default_rng([7, s]).choice(5, p=np.full(5, 0.2))) for s in range(6)]
    assert len(set(draws)) > 1
    assert dv.choose_next(np.array([0.0, 3.0, 1.0]), 0.0, 0, 7, 0) == 1  # T = 0: greedy


# --- efficient --------------------------------------------------------------------------------------


def _recorder(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)

    def record(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, record)
    return calls


def test_masked_attention_treats_boolean_inputs_as_numbers():
    from attention_core.labs import efficient as e

    Q = np.array([[True, True], [True, False]])
    K = np.array([[True, True], [False, True]])
    V = np.array([[1.0, 0.0], [0.0, 1.0]])
    expected = _loop_full(Q.astype(float), K.astype(float), V)
    np.testing.assert_allclose(e.masked_attention(Q, K, V, np.ones((2, 2), bool)), expected, atol=1e-13)


def _loop_full(Q, K, V):
    out = np.zeros((len(Q), V.shape[1]))
    for i in range(len(Q)):
        s = [float(Q[i] @ K[j]) / math.sqrt(Q.shape[1]) for j in range(len(K))]
        ex = [math.exp(v - max(s)) for v in s]
        out[i] = sum(x / sum(ex) * V[j] for j, x in enumerate(ex))
    return out


def test_window_check_fields_seed_and_limits(monkeypatch):
    from attention_core.labs import efficient as e

    assert e.window_score_elements(10, 4) == 34 and type(e.window_score_elements(10, 4)) is int
    calls = _recorder(monkeypatch, e, "tiled_attention")
    chk = e.window_check(12, 3, 4, d=2)
    assert (chk.n, chk.window, chk.block, chk.tiles_total) == (12, 3, 4, 9)
    np.testing.assert_array_equal(calls[0][0][0], np.random.default_rng(0).standard_normal((12, 2)))  # seed 0
    assert e.window_check(1, 1, 1, d=2).n == 1
    monkeypatch.setattr(e, "MAX_WINDOW_N", 16)
    assert e.window_check(16, 2, 1, d=2).n == 16
    for n, w, blk in ((0, 1, 1), (17, 1, 1), (8, 0, 2), (8, 2, 0)):
        with pytest.raises(ValueError):
            e.window_check(n, w, blk, d=2)


def test_best_is_the_fastest_run_on_a_fake_clock(monkeypatch):
    from attention_core.labs import efficient as e

    ticks = iter([0.0, 1.0, 10.0, 10.5, 20.0, 23.0])
    monkeypatch.setattr(e.time, "perf_counter", lambda: next(ticks))
    assert e._best(lambda: None, 3) == 0.5


def test_window_timing_times_the_three_methods_with_its_settings(monkeypatch):
    from attention_core.labs import efficient as e

    monkeypatch.setattr(e, "_best", lambda fn, repeats: (fn.func.__name__, fn.args[3:], fn.keywords, repeats))
    direct = _recorder(monkeypatch, e, "direct_attention")
    tiled = _recorder(monkeypatch, e, "tiled_attention")
    (t,) = list(e.window_timing(ns=(300,), d=4))
    assert (t.n, t.window, t.block) == (300, 256, 128)  # the defaults
    assert t.full_direct[1:] == ((), {"causal": True}, 2)
    assert t.full_tiled[1:] == ((128, 128), {"causal": True}, 2)
    assert t.window_tiled[1:] == ((128, 128), {"window": 256}, 2)
    # 3 query tiles, 1 + 2 + 3 causal; with w = 256 the last query tile still reaches key 1 (tile 0)
    assert (t.tiles_full, t.tiles_window) == (6, 6)
    assert [kw for _, kw in tiled] == [{"causal": True}, {"window": 256}]
    assert direct[0][1] == {"causal": True}  # the warm-up
    np.testing.assert_array_equal(tiled[0][0][0], np.random.default_rng(0).standard_normal((300, 4)))
    (t,) = list(e.window_timing(ns=(40,), window=8, block=16, d=4, repeats=5))
    assert t.window_tiled[1:] == ((16, 16), {"window": 8}, 5) and (t.window, t.block) == (8, 16)
    assert (t.tiles_full, t.tiles_window) == (6, 5)  # window 8: 1 + 2 + 2 (rows 32..39 need keys 25..39)
    assert list(e.window_timing(ns=(1,), d=4))[0].n == 1
    monkeypatch.setattr(e, "MAX_WINDOW_N", 50)
    assert list(e.window_timing(ns=(50,), d=4))[0].n == 50
    for bad in (0, 51):
        with pytest.raises(ValueError):
            list(e.window_timing(ns=(bad,), d=4))


def _cross_brute(d_phi, d_v, d_k, n_max):
    from attention_core.labs import efficient as e

    return next(
        (
            n
            for n in range(1, n_max + 1)
            if n * (4 * d_phi * d_v + 3 * d_phi + d_v) < e.softmax_attention_flops(n, d_k, d_v)
        ),
        None,
    )


@pytest.mark.parametrize(
    "d_phi,d_v,d_k,n_max", [(1, 1, 100, 50), (2, 2, 1, 2), (2, 2, 1, 10), (16, 8, 32, 500), (4, 16, 2, 300)]
)
def test_linear_crossover_against_counting_up(d_phi, d_v, d_k, n_max):
    """(2, 2, 1): the two counts are equal at n = 2 (24·2 = 12·2²), where the recurrence is not cheaper."""
    from attention_core.labs import efficient as e

    got = e.linear_crossover_n(d_phi, d_v, d_k, n_max)
    assert got == _cross_brute(d_phi, d_v, d_k, n_max)
    assert got is None or type(got) is int


def test_softmax_flops_keep_d_k_and_d_v_apart():
    from attention_core.labs import efficient as e

    n, d_k, d_v = 10, 3, 7
    assert e.softmax_attention_flops(n, d_k, d_v) == 2 * n * n * d_k + 6 * n * n + 2 * n * n * d_v


def test_linear_lab_fields_follow_d_model_and_seed():
    from attention_core import AttentionConfig
    from attention_core.labs import efficient as e
    from attention_core.trace import trace_text

    lab = e.linear_lab("a b c d", d_model=8, seed=3)
    tr = trace_text("a b c d", AttentionConfig(d_model=8, heads=1, mask="causal", seed=3))
    assert lab.tokens == ("a", "b", "c", "d") and lab.d_k == 8 and lab.state_shape == (8, 8)
    np.testing.assert_array_equal(lab.softmax_weights, tr.weights[0])
    phi_q, phi_k = (np.where(m > 0, m + 1, np.exp(np.minimum(m, 0))) for m in (tr.Q[0], tr.K[0]))
    z = np.cumsum(phi_k, axis=0)
    np.testing.assert_allclose(lab.normalisers, np.sum(phi_q * z, axis=1), rtol=1e-13)
    assert lab.tokenization is not None and not lab.softmax_weights.flags.writeable
    assert not lab.linear_top.flags.writeable and not lab.softmax_top.flags.writeable


def test_exactness_defaults_and_methods(monkeypatch):
    from attention_core.labs import efficient as e

    calls = _recorder(monkeypatch, e, "tiled_attention")
    rows = e.exactness(d=4)
    assert [r.method for r in rows] == ["tiled", "window", "linear"]
    (args0, kw0), (args1, kw1) = calls
    assert args0[0].shape == (256, 4) and args0[3:] == (64, 64) and kw0 == {"causal": True}
    assert args1[3:] == (64, 64) and kw1 == {"window": 32}
    np.testing.assert_array_equal(args0[0], np.random.default_rng(0).standard_normal((256, 4)))


# --- inference --------------------------------------------------------------------------------------


def test_inference_settings_limits():
    from attention_core.labs import inference as inf

    lo, hi = inf.D_MODEL_RANGE
    h_hi = inf.HEADS_RANGE[1]
    assert inf.InferenceSettings("a", d_model=lo, heads=1, kv_heads=1).d_model == lo
    assert inf.InferenceSettings("a", d_model=hi, heads=1, kv_heads=1).d_model == hi
    assert inf.InferenceSettings("a", d_model=h_hi * 2, heads=h_hi, kv_heads=1).heads == h_hi
    for bad in (
        dict(d_model=lo - 1, heads=1),
        dict(d_model=hi + 1, heads=1),
        dict(d_model=h_hi * 4, heads=h_hi * 2),
    ):
        with pytest.raises(AttentionConfigError):
            inf.InferenceSettings("a", kv_heads=1, **bad)


def test_projection_weights_have_variance_one_over_d():
    from attention_core.labs import inference as inf

    W_Q, W_K, W_V = inf.projection_weights(64, 4, 2, 0)
    assert W_Q.shape == (64, 64) and W_K.shape == (64, 32) and W_V.shape == (64, 32)
    for W in (W_Q, W_K, W_V):
        assert 0.9 / 8 < W.std() < 1.1 / 8  # N(0, 1/64): standard deviation 1/8
    np.testing.assert_array_equal(W_Q, inf.projection_weights(64, 4, 2, 0)[0])
    assert not np.array_equal(W_Q, inf.projection_weights(64, 4, 2, 1)[0])


def test_inference_lab_of_two_tokens_and_its_fields():
    from attention_core.labs import inference as inf

    s = inf.InferenceSettings("a a", d_model=8, heads=2, kv_heads=1, seed=2)
    lab = inf.inference_lab(s)
    assert lab.settings is s and lab.tokenization is not None and lab.d_k == 4 and type(lab.d_k) is int
    assert lab.change_causal.shape == (1,) and lab.change_causal[0] == 0.0
    assert lab.change_bidirectional.shape == (1,) and lab.change_bidirectional[0] > 1e-6
    # the same word twice differs only by its position: the outputs of the two rows differ
    assert np.max(np.abs(lab.full[:, 0] - lab.full[:, 1])) > 1e-3
    cut = inf.inference_lab(inf.InferenceSettings("one two three four five", max_tokens=3))
    assert cut.tokens == ("one", "two", "three")
    assert inf.prefix_change(np.zeros((2, 0, 3)), np.zeros((2, 1, 3))).shape == (0,)


def test_flops_curve_counts_are_integers():
    from attention_core.labs import inference as inf

    c = inf.flops_curve([4, 8], 16, 4, 2)
    assert c.ns == (4, 8) and all(type(v) is int for v in c.cached + c.recompute)
    assert c.cached[0] == 2 * 16 * (4 + 2 * 2) * 4 + 4 * 4 * 4 * 4


# --- multihead --------------------------------------------------------------------------------------


def test_head_counts_and_cost_limits():
    from attention_core.labs import multihead as mh

    assert mh.valid_head_counts(1) == (1,) and mh.valid_head_counts(12) == (1, 2, 3, 4, 6, 12)
    c = mh.multihead_cost(1, 1, 1)
    assert (c.n, c.d_model, c.heads, c.d_k, c.d_v) == (1, 1, 1, 1, 1) and type(c.d_k) is int
    for bad in ((0, 4, 2), (4, 0, 2), (4, 4, 0)):
        with pytest.raises(ValueError):
            mh.multihead_cost(*bad)
    sweep = mh.cost_vs_heads(10, 8, [2, 4.0], bias=True)
    assert [s.heads for s in sweep] == [2, 4]
    assert sweep[0].params_out == 2 * 4 * 8 + 8  # W_O plus its bias
    assert [s.heads for s in mh.cost_vs_heads(10, 8)] == [1, 2, 4, 8]


def test_split_check_fields_boolean_inputs_and_no_rows():
    from attention_core.labs import multihead as mh

    X = np.array([[True, False, True], [True, True, False]])
    W = np.array([[True, True, False, True], [False, True, True, True], [True, False, True, False]])
    chk = mh.split_vs_separate(X, W, 2)
    assert (chk.heads, chk.d_k) == (2, 2)
    products = X.astype(float) @ W.astype(float)  # sums of products, not logical ors
    np.testing.assert_array_equal(chk.split, np.stack([products[:, :2], products[:, 2:]]))
    np.testing.assert_array_equal(chk.separate, chk.split)
    assert chk.max_abs_diff == 0.0 and chk.equal
    empty = mh.split_vs_separate(np.zeros((0, 3)), np.ones((3, 4)), 2)
    assert empty.max_abs_diff == 0.0 and empty.split.shape == (2, 0, 2)
    assert mh.merge_head_weights(np.ones((2, 3, 4), dtype=int)).dtype == np.float64


def test_multihead_lab_settings_and_a_wrong_split(monkeypatch):
    from attention_core import AttentionConfig
    from attention_core.labs import multihead as mh
    from attention_core.trace import trace_text

    lab = mh.multihead_lab("one two three four five", 8, 2, 4, max_tokens=3)
    assert lab.trace.tokens == ("one", "two", "three") and lab.head_dims == (8, 4, 2, 1)
    assert all(type(d) is int for d in lab.head_dims)
    ref = trace_text("one two three", AttentionConfig(d_model=8, heads=2, seed=4))
    np.testing.assert_array_equal(lab.trace.Q, ref.Q)
    assert lab.split_vs_trace <= 1e-12
    monkeypatch.setattr(mh, "split_heads", lambda x, h: x.reshape(x.shape[0], -1, h).transpose(2, 0, 1))
    assert mh.multihead_lab("one two three", 8, 2, 4).split_vs_trace > 0.1


# --- positions --------------------------------------------------------------------------------------


def test_positions_settings_limits():
    from attention_core.labs import positions as p

    ok = [
        dict(d_model=2), dict(d_model=128), dict(seen=2, offset=1), dict(seen=512),
        dict(seen=10, offset=9), dict(offset=0), dict(d_model=16, pair=7), dict(seen=200, offset=64),
    ]  # fmt: skip
    for kw in ok:
        p.PositionsSettings("a", **kw)
    bad = [
        dict(d_model=1), dict(d_model=130), dict(d_model=15), dict(seen=1, offset=0), dict(seen=513),
        dict(seen=10, offset=10), dict(offset=-1), dict(d_model=16, pair=8), dict(seen=200, offset=65),
        dict(seed=-1),
    ]  # fmt: skip
    for kw in bad:
        with pytest.raises(AttentionConfigError):
            p.PositionsSettings("a", **kw)


def test_position_steps_by_hand():
    from attention_core.labs import positions as p

    W_Q, W_K, W_V = p.head_weights(64, 1)
    assert not np.array_equal(W_Q, W_K) and not np.array_equal(W_K, W_V) and not np.array_equal(W_Q, W_V)
    for W in (W_Q, W_K, W_V):
        assert 0.9 / 8 < W.std() < 1.1 / 8  # N(0, 1/64)
    np.testing.assert_array_equal(p.shuffle_order(8, 3), p.shuffle_order(8, 3))
    assert p.row_gaps(np.array([[1.0]]), np.array([[0.0]]), np.array([0])).tolist() == [1.0]
    assert p.row_gaps(np.zeros((0, 3)), np.zeros((0, 3)), np.arange(0)).shape == (0,)
    assert p.row_gaps(np.ones((2, 3)), np.zeros((2, 3)), np.array([1, 0])).tolist() == [1.0, 1.0]
    assert p.equivariance_gap(np.zeros((0, 3)), np.zeros((0, 3)), np.arange(0)) == 0.0
    assert p.position_vectors("sinusoidal", np.arange(0), 4, None).shape == (0, 4)


def test_unseen_angle_pairs_against_a_loop():
    from attention_core.labs import positions as p

    for d in (2, 8, 16):
        for seen in range(2, 400):
            expected = sum(1 for i in range(d // 2) if 10000.0 ** (-2 * i / d) * (seen - 1) < 2 * math.pi)
            assert p.unseen_angle_pairs(d, seen) == expected, (d, seen)


def test_positions_lab_fields():
    from attention_core.labs import positions as p

    s = p.PositionsSettings(
        "one two three four five", d_model=8, seed=2, seen=12, offset=3, pair=1, max_tokens=4
    )
    lab = p.positions_lab(s)
    assert lab.settings is s and lab.tokenization is not None
    assert lab.tokens == ("one", "two", "three", "four") and (lab.query_token, lab.key_token) == (
        "four",
        "one",
    )
    assert lab.placements.tolist() == list(range(3, 12)) and lab.arrow_positions.tolist() == list(range(9))
    assert lab.unseen_pairs == p.unseen_angle_pairs(8, 12)
    W_Q, W_K, W_V = p.head_weights(8, 2)
    X = embed(lab.tokens, 8, 2, False)
    np.testing.assert_allclose(lab.out_plain, _loop_full(X @ W_Q, X @ W_K, X @ W_V), atol=1e-12)
    np.testing.assert_allclose(
        lab.out_plain_shuffled, _loop_full(*(X[lab.perm] @ W for W in (W_Q, W_K, W_V))), atol=1e-12
    )
    pe = np.array(
        [
            [
                math.sin(pos / 10000 ** (2 * (i // 2) / 8))
                if i % 2 == 0
                else math.cos(pos / 10000 ** (2 * (i // 2) / 8))
                for i in range(8)
            ]
            for pos in range(4)
        ]
    )
    np.testing.assert_allclose(lab.out_pos, _loop_full(*((X + pe) @ W for W in (W_Q, W_K, W_V))), atol=1e-12)
    for arr in (
        lab.perm,
        lab.out_plain,
        lab.out_plain_shuffled,
        lab.out_pos,
        lab.placements,
        lab.arrow_positions,
    ):
        assert not arr.flags.writeable


# --- lookalikes -------------------------------------------------------------------------------------


def test_cross_attention_biases_mask_and_shape_checks():
    from attention_core.labs import lookalikes as lk
    from attention_core.trace import AttentionParams

    rng = np.random.default_rng(14)
    h, d, dk = 2, 4, 2
    P = AttentionParams(
        *(rng.normal(size=(h, d, dk)) for _ in range(3)), rng.normal(size=(h * dk, d)),
        b_Q=rng.normal(size=(h, dk)), b_K=rng.normal(size=(h, dk)), b_V=rng.normal(size=(h, dk)), b_O=rng.normal(size=d),
    )  # fmt: skip
    Xq = np.array([[1, 0, 2, 0], [0, 1, 0, 1]])  # integers: converted to float
    Xkv = rng.normal(size=(3, d))
    allowed = np.array([[1, 1, 0], [1, 0, 0]])  # 0/1: a mask, not numbers
    got = lk.cross_attention(Xq, Xkv, P, 2.0, allowed)
    heads = []
    for j in range(h):
        q, k, v = Xq @ P.W_Q[j] + P.b_Q[j], Xkv @ P.W_K[j] + P.b_K[j], Xkv @ P.W_V[j] + P.b_V[j]
        out = np.zeros((2, dk))
        for i in range(2):
            js = [c for c in range(3) if allowed[i, c]]
            s = [float(q[i] @ k[c]) / 2.0 for c in js]
            e = [math.exp(x - max(s)) for x in s]
            out[i] = sum(w / sum(e) * v[c] for w, c in zip(e, js, strict=True))
        heads.append(out)
    np.testing.assert_allclose(got.output, np.concatenate(heads, axis=1) @ P.W_O + P.b_O, atol=1e-12)
    for bad in ((np.zeros(4), Xkv), (Xq, np.zeros(4)), (np.zeros((2, 3)), Xkv)):
        with pytest.raises(ValueError):
            lk.cross_attention(*bad, P, 2.0)


def test_additive_params_and_scores_by_hand():
    from attention_core.labs import lookalikes as lk

    rng = np.random.default_rng(0)  # the default seed, draws in the order W1, W2, v
    W1, W2, v = (
        rng.standard_normal((3, 2)) / math.sqrt(2),
        rng.standard_normal((3, 4)) / math.sqrt(4),
        rng.standard_normal(3) / math.sqrt(3),
    )
    p = lk.init_additive_params(2, 4, 3)
    np.testing.assert_array_equal(p.W1, W1)
    np.testing.assert_array_equal(p.W2, W2)
    np.testing.assert_array_equal(p.v, v)
    Q = np.array([[True, False]])  # booleans and integers are numbers here
    K = np.array([[1, 0, 2, 0], [0, 1, 0, 1]])
    W1i = np.array([[1, 0], [0, 1], [1, 1]])
    expected = [
        [
            sum(float(v[a]) * math.tanh((W1i[a] @ [1.0, 0.0]) + (W2[a] @ K[j])) for a in range(3))
            for j in range(2)
        ]
    ]
    np.testing.assert_allclose(lk.additive_scores(Q, K.astype(float), W1i, W2, v), expected, atol=1e-14)
    cmp = lk.compare_scores(
        Q.astype(float), np.array([[1.0, 0.0], [0.0, 1.0]]), lk.init_additive_params(2, 2, 3)
    )
    assert (
        cmp.additive_scores.shape == (1, 2)
        and not cmp.additive_scores.flags.writeable
        and cmp.dot_params == 0
    )


def test_layer_cost_paths_and_curves_fields():
    from attention_core.labs import lookalikes as lk

    c = lk.layer_cost(5, 3)
    assert (c.n, c.d) == (5, 3)
    p = lk.rnn_steps_illustration(1)
    assert (p.n, p.i, p.j, p.rnn_path_length, p.attention_path_length) == (1, 0, 0, 0, 0)
    p = lk.rnn_steps_illustration(5, 3, 1)
    assert (p.n, p.i, p.j, p.rnn_path_length, p.rnn_hidden_states) == (5, 3, 1, 2, (1, 2, 3))
    assert lk.rnn_steps_illustration(5, 0, 0).attention_path_length == 0
    for bad in ((5, 5, 0), (5, 0, 5), (5, -1, 0), (5, 0, -1), (0, 0, 0)):
        with pytest.raises(ValueError):
            lk.rnn_steps_illustration(*bad)
    cc = lk.cost_curves(8, 64)
    assert (cc.n, cc.d) == (8, 64) and cc.ns[0] == 1.0 and cc.ns[-1] == 64 * 16
    assert len(cc.ns) <= 120 and len(lk.cost_curves(8, 64, 7).ns) <= 7


def test_lookalikes_lab_settings_reach_every_trace():
    from attention_core import AttentionConfig
    from attention_core.labs import lookalikes as lk
    from attention_core.trace import trace_text

    lab = lk.lookalikes_lab("a b c d", "e f g h i", 8, 2, 3, 1, 4, 3)
    cfg = AttentionConfig(d_model=8, heads=2, seed=3)
    assert (
        lab.a.tokens == ("a", "b", "c")
        and lab.b.tokens == ("e", "f", "g")
        and lab.causal.tokens == ("a", "b", "c")
    )
    np.testing.assert_array_equal(lab.a.Q, trace_text("a b c", cfg).Q)
    np.testing.assert_array_equal(lab.b.X, trace_text("e f g", cfg).X)
    Q, K = lab.a.Q[1], lab.a.K[1]
    ref = lk.compare_scores(Q, K, lk.init_additive_params(Q.shape[1], K.shape[1], 4, seed=3), lab.a.divisor)
    np.testing.assert_array_equal(lab.scores.additive_scores, ref.additive_scores)
    np.testing.assert_allclose(lab.scores.dot_scores, Q @ K.T / math.sqrt(4), atol=1e-15)
    assert lab.causal_last_row_same and lab.causal_masked == 3


def test_compare_scores_of_booleans_and_the_curve_points():
    from attention_core.labs import lookalikes as lk

    Q = np.array([[True, True], [True, False]])
    K = np.array([[True, True], [False, True]])
    cmp = lk.compare_scores(Q, K, lk.init_additive_params(2, 2, 3))
    np.testing.assert_allclose(
        cmp.dot_scores, [[2 / math.sqrt(2), 1 / math.sqrt(2)], [1 / math.sqrt(2), 0.0]]
    )
    cc = lk.cost_curves(1000, 2000)  # 62.5 … 32,000: 120 distinct whole numbers
    assert len(cc.ns) == 120 and cc.ns[0] == 62.0 and cc.ns[-1] == 32000.0


# --- scaling ----------------------------------------------------------------------------------------


def test_dot_variance_defaults_draws_and_limits(monkeypatch):
    from attention_core.labs import scaling as sc

    v = sc.dot_variance_experiment([3], samples=5)
    rng = np.random.default_rng((0, 3))  # the documented per-d_k generator, seed 0
    q, k = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    s = np.sum(q * k, axis=1)
    assert v.raw_variance[0] == pytest.approx(np.var(s, ddof=1), rel=1e-13)
    assert v.scaled_variance[0] == pytest.approx(np.var(s / math.sqrt(3), ddof=1), rel=1e-13)
    assert v.d_ks == (3,) and v.samples == 5
    assert v.scaled_standard_error[0] == pytest.approx(math.sqrt((2 * 9 + 18) / 5) / 3)
    assert sc.dot_variance_experiment([2]).samples == 20_000
    assert sc.dot_variance_experiment([2], samples=2).samples == 2
    with pytest.raises(ValueError):
        sc.dot_variance_experiment([2], samples=1)
    # _CHUNK = 4 numbers: one row of d_k = 3 per chunk, q and k drawn chunk by chunk
    monkeypatch.setattr(sc, "_CHUNK", 4)
    v = sc.dot_variance_experiment([3], samples=5)
    rng = np.random.default_rng((0, 3))
    chunks = []
    for m in (1, 1, 1, 1, 1):
        q, k = rng.standard_normal((m, 3)), rng.standard_normal((m, 3))
        chunks.append(np.sum(q * k, axis=1))
    assert v.raw_variance[0] == pytest.approx(np.var(np.concatenate(chunks), ddof=1), rel=1e-13)
    monkeypatch.setattr(sc, "MAX_DRAWS", 100)
    sc.dot_variance_experiment([5], samples=100)  # 100 · 5 · 2 = 1000 = MAX_DRAWS · 10: allowed
    with pytest.raises(ValueError):
        sc.dot_variance_experiment([5], samples=101)


def test_score_draws_defaults_and_limits(monkeypatch):
    from attention_core.labs import scaling as sc

    s = sc.score_samples(4)
    assert (s.d_k, s.n_keys, s.samples, s.scaled, s.divisor) == (4, 8, 2000, True, 2.0)
    rng = np.random.default_rng((0, 4))
    q, k = rng.standard_normal((2000, 1, 4)), rng.standard_normal((2000, 8, 4))
    np.testing.assert_allclose(s.scores, np.sum(q * k, axis=2) / 2.0, atol=1e-14)
    assert sc.score_samples(4, scaled=False).divisor == 1.0
    assert sc.score_samples(1, 1, 1).scores.shape == (1, 1)
    for bad in ((0, 1, 1), (1, 0, 1), (1, 1, 0)):
        with pytest.raises(ValueError):
            sc.score_samples(*bad)
    monkeypatch.setattr(sc, "MAX_DRAWS", 90)
    sc.score_samples(3, 2, 10)  # 10 · 3 · 3 = 90: allowed
    with pytest.raises(ValueError):
        sc.score_samples(3, 2, 11)
    assert sc.samples_within([2, 4], 3, 1000, 240) == 50  # floor(240 / 24) = 10, raised to the minimum 50
    assert (
        sc.samples_within([2, 4], 3, 1000, 2400, minimum=1) == 100
        and type(sc.samples_within([1], 1, 9, 9, 1)) is int
    )


def test_peakedness_defaults_fields_and_entropy_of_zeros():
    from attention_core.labs import scaling as sc

    p = sc.softmax_peakedness([4], samples=50)
    assert (p.d_ks, p.n_keys, p.samples) == ((4,), 16, 50)
    raw = np.einsum(
        "sqd,skd->sk",
        *(lambda r: (r.standard_normal((50, 1, 4)), r.standard_normal((50, 16, 4))))(
            np.random.default_rng((0, 4))
        ),
    )
    e = np.exp((raw / 2.0) - (raw / 2.0).max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    assert p.max_weight_scaled[0] == pytest.approx(w.max(axis=1).mean(), rel=1e-12)
    ent = -np.sum(w * np.log(w), axis=1).mean()
    assert p.entropy_scaled[0] == pytest.approx(ent, rel=1e-12)
    assert sc.softmax_peakedness([2], n_keys=2, samples=10).n_keys == 2
    assert sc.softmax_peakedness([1]).samples == 2000
    with pytest.raises(ValueError):
        sc.softmax_peakedness([2], n_keys=1, samples=10)
    assert sc.entropy_nats(np.array([0.5, 0.5, 0.0])) == pytest.approx(math.log(2))
    assert sc.entropy_nats(np.array([1, 0])) == 0.0  # integers: one-hot


def test_one_row_by_hand_and_parse_limits():
    from attention_core.labs import scaling as sc

    r = sc.one_row([1, 3])  # divisor 1 by default, integers accepted
    e = [math.exp(-2), 1.0]
    assert r.divisor == 1.0 and r.scaled.tolist() == [1.0, 3.0]
    assert r.weights.tolist() == pytest.approx([e[0] / sum(e), e[1] / sum(e)])
    p = r.weights
    assert r.entropy == pytest.approx(-sum(x * math.log(x) for x in p))
    assert r.jacobian_norm == pytest.approx(
        math.sqrt(sum((p[i] * ((i == j) - p[j])) ** 2 for i in range(2) for j in range(2)))
    )
    assert sc.one_row([5.0]).weights.tolist() == [1.0]  # one score is a row too
    for bad in ([], [[1.0, 2.0]]):
        with pytest.raises(ValueError):
            sc.one_row(bad)
    assert sc.parse_scores("x" * 30)[2] == {"part": "x" * 20}
    assert sc.parse_scores(f"{sc.MAX_ABS_SCORE:g} 1")[0] == [
        sc.MAX_ABS_SCORE,
        1.0,
    ]  # the limit itself is allowed
    assert sc.parse_scores("1e5 1")[1:] == ("scores_range", {"limit": "10000"})
    assert sc.parse_scores(" ".join(["1"] * 32))[0] == [1.0] * 32
    assert sc.parse_scores(" ".join(["1"] * 33))[1:] == ("scores_count", {"count": 33, "lo": 2, "hi": 32})


# --- masks ------------------------------------------------------------------------------------------


def _mk_params(seed=16, h=2, d=4, dk=2, bias=False):
    from attention_core.trace import AttentionParams

    rng = np.random.default_rng(seed)
    extra = {}
    if bias:
        extra = dict(
            b_Q=rng.normal(size=(h, dk)),
            b_K=rng.normal(size=(h, dk)),
            b_V=rng.normal(size=(h, dk)),
            b_O=rng.normal(size=d),
        )
    return AttentionParams(
        *(rng.normal(size=(h, d, dk)) for _ in range(3)), rng.normal(size=(h * dk, d)), **extra
    )


def _layer_loop(X, P, allowed, divisor):
    heads = []
    for j in range(P.W_Q.shape[0]):
        bias = {n: 0.0 if getattr(P, n) is None else getattr(P, n)[j] for n in ("b_Q", "b_K", "b_V")}
        q, k, v = X @ P.W_Q[j] + bias["b_Q"], X @ P.W_K[j] + bias["b_K"], X @ P.W_V[j] + bias["b_V"]
        out = np.zeros((len(X), v.shape[1]))
        for i in range(len(X)):
            js = [c for c in range(len(X)) if allowed[i][c]]
            s = [float(q[i] @ k[c]) / divisor for c in js]
            e = [math.exp(x - max(s)) for x in s]
            out[i] = sum(w / sum(e) * v[c] for w, c in zip(e, js, strict=True))
        heads.append(out)
    return np.concatenate(heads, axis=1) @ P.W_O + (0.0 if P.b_O is None else P.b_O)


def test_mask_builders_defaults_and_fields():
    from attention_core.labs import masks as mk

    for bad in ((0, 2), (2, 0)):
        with pytest.raises(ValueError):
            mk.sliding_window_mask(*bad)
    assert mk.allowed_mask("padding", 3).all()  # no [PAD] by default
    assert mk.allowed_mask("sliding", 4).tolist() == [
        [1, 0, 0, 0],
        [1, 1, 0, 0],
        [0, 1, 1, 0],
        [0, 0, 1, 1],
    ]  # w = 2
    m = mk.mask_matrices("padding", 4, 1)
    assert (m.kind, m.n, m.n_pad, m.window, m.masked_cells) == ("padding", 4, 1, None, 4)
    s = mk.mask_matrices("sliding", 5, window=3)
    assert (s.n_pad, s.window) == (0, 3) and s.allowed_per_query.tolist() == [1, 2, 3, 3, 3]
    assert mk.mask_matrices("sliding", 4).window == 2


def test_masking_methods_fields_names_and_booleans():
    import warnings

    from attention_core.labs import masks as mk

    Q = np.array([[[True, False], [True, True], [False, True]]] * 2)  # [h 2, n 3, d 2], booleans
    V = np.arange(12.0).reshape(2, 3, 2)
    allowed = np.array([[False, False, False], [True, True, False], [True, True, True]])  # row 0: no key
    s = np.einsum("hid,hjd->hij", Q.astype(float), Q.astype(float)) / 2.0
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    soft = e / e.sum(axis=-1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = {m: mk.masked_attention(m, Q, Q, V, allowed, 2.0) for m in mk.METHODS}
    assert [r.method for r in results.values()] == list(mk.METHODS)
    for r in results.values():
        np.testing.assert_allclose(r.scores, s, atol=1e-15)
        assert r.row_sums.shape == (2, 3)
    np.testing.assert_allclose(results["zero_values"].softmax_weights, soft, atol=1e-15)
    np.testing.assert_allclose(results["zero_weights"].softmax_weights, soft, atol=1e-15)
    np.testing.assert_allclose(results["correct"].softmax_weights, results["correct"].effective_weights)
    assert results["renormalise"].effective_weights[:, 0].tolist() == [[0.0] * 3] * 2  # no key: zeros
    np.testing.assert_allclose(results["renormalise"].output, results["correct"].output, atol=1e-12)
    np.testing.assert_allclose(results["renormalise"].row_sums[:, 1:], 1.0)


def test_multihead_output_and_leakage_defaults():
    from attention_core.labs import masks as mk

    P = _mk_params(bias=True)
    X = np.array([[1, 0, 2, 0], [0, 1, 0, 1], [2, 1, 0, 0]])  # integers
    causal = np.tril(np.ones((3, 3), bool))
    np.testing.assert_allclose(
        mk.multihead_output(X, P, causal, 2.0), _layer_loop(X.astype(float), P, causal, 2.0), atol=1e-12
    )
    lk = mk.leakage(X, P, 1)  # method correct, causal mask, divisor √d_k, replacement from default_rng(0)
    assert (lk.method, lk.position) == ("correct", 1) and lk.verdict == "zero"
    X2 = X.astype(float)
    X2[1] = np.random.default_rng(0).standard_normal(4)
    np.testing.assert_allclose(lk.after, _layer_loop(X2, P, causal, math.sqrt(2)), atol=1e-12)


def test_leakage_matrix_passes_mask_divisor_method_and_seed_on():
    from attention_core.labs import masks as mk

    P = _mk_params()
    X = np.random.default_rng(17).normal(size=(3, 4))
    m = mk.leakage_matrix(X, P)
    assert m.method == "correct" and m.total_leaks == 0
    X2 = X.copy()
    X2[2] = np.random.default_rng((0, 2)).standard_normal(4)  # seed 0, changed row 2
    causal = np.tril(np.ones((3, 3), bool))
    moved = np.max(
        np.abs(_layer_loop(X2, P, causal, math.sqrt(2)) - _layer_loop(X, P, causal, math.sqrt(2))), axis=1
    )
    np.testing.assert_allclose(m.moved[2], moved, atol=1e-12)
    full = mk.leakage_matrix(X, P, "correct", np.ones((3, 3), bool), 1.0, seed=4)
    assert full.total_leaks == 3  # no mask: every earlier output moves
    X3 = X.copy()
    X3[1] = np.random.default_rng((4, 1)).standard_normal(4)
    ones = np.ones((3, 3), bool)
    expected = np.max(np.abs(_layer_loop(X3, P, ones, 1.0) - _layer_loop(X, P, ones, 1.0)), axis=1)
    np.testing.assert_allclose(full.moved[1], expected, atol=1e-12)
    assert mk.leakage_matrix(X, P, "zero_values").method == "zero_values"


def test_mask_lab_layer_swap_and_map_use_every_setting():
    from attention_core.labs import masks as mk

    layer = mk.lab_layer(("a", "b"), 1, 3)
    assert layer.X.shape == (3, mk.D_MODEL) and layer.heads == mk.HEADS
    s = mk.MaskLabSettings(("a", "b", "c", "d"), 1, "sliding", 3, 5)
    lab = mk.mask_lab(s)
    assert lab.settings is s and lab.mask.kind == "sliding" and lab.mask.window == 3
    assert all(m.n_pad == 1 for m in lab.all_masks) and lab.all_masks[-1].window == 3
    swap = mk.swap_leakage(s, 1, "zzz")
    layer = mk.lab_layer(s.sentence, 1, 5)
    allowed = mk.sliding_window_mask(5, 3)
    X2 = np.array(layer.X)
    X2[1] = embed(("a", "zzz", "c", "d", "[PAD]"), mk.D_MODEL, 5, True)[1]
    ref = mk.leakage(layer.X, layer.params, 1, "correct", allowed, layer.divisor, replacement=X2[1])
    np.testing.assert_allclose(swap[0].after, ref.after, atol=1e-12)
    np.testing.assert_allclose(swap[0].moved, ref.moved, atol=1e-12)
    lmap = mk.leakage_map(s, "correct")
    ref_map = mk.leakage_matrix(layer.X, layer.params, "correct", allowed, layer.divisor, seed=5)
    np.testing.assert_allclose(lmap.moved, ref_map.moved, atol=1e-12)
    pad = mk.MaskLabSettings(("a", "b", "c"), 2, "causal+padding", 2, 1)
    np.testing.assert_allclose(
        mk.leakage_map(pad, "correct").moved,
        mk.leakage_matrix(
            mk.lab_layer(("a", "b", "c"), 2, 1).X,
            mk.lab_layer(("a", "b", "c"), 2, 1).params,
            "correct",
            mk.allowed_mask("causal+padding", 5, 2),
            seed=1,
        ).moved,
        atol=1e-12,
    )


# --- quiz -------------------------------------------------------------------------------------------


def test_quiz_distinct_build_and_seed_checks():
    from attention_core.labs import quiz as qz

    assert qz._distinct((1, 2), 3.0, 0.0) and not qz._distinct((2, 3), (2, 3), 0.0)
    assert not qz._distinct(1.0, 1.5, 0.25)  # exactly 2·tol apart: too close to tell apart
    assert qz._distinct(1.0, 1.625, 0.25)  # 0.625 > 2·tol
    rng = np.random.default_rng(0)
    q = qz._build("k", 7, rng, {}, 1.0, 0.0, [2.0, 3.0], [4.0], unit="MiB")
    assert (q.seed, q.unit, sorted(q.choices)) == (7, "MiB", [1.0, 2.0, 3.0, 4.0]) and q.choices[
        q.answer_index
    ] == 1.0
    with pytest.raises(RuntimeError):
        qz._build("k", 7, np.random.default_rng(0), {}, 1.0, 0.0, [2.0, 3.0], [1.0])  # only two distinct
    for bad in (-1, True, 1.5, "3"):
        with pytest.raises(ValueError):
            qz.generate_question("kv_cache_size", bad)
    assert qz.generate_question("kv_cache_size", np.int64(3)).seed == 3


def test_quiz_worked_numbers_of_the_kv_cache_by_hand():
    from attention_core.labs import quiz as qz

    q = qz.generate_question("kv_cache_size", 5)
    p = q.params
    assert q.unit == "MiB"
    assert qz.worked_numbers(q) == {
        "bytes": 2 * p["layers"] * p["n"] * p["kv_heads"] * p["d_k"] * p["bytes_per_value"]
    }


# --- cost, efficient, masks: the survivors of the re-run against these tests (2026-12-01) ---------


def test_cost_tiled_measurement_and_sweep_use_the_direct_defaults():
    """The page sets direct and tiled side by side: one d and the sweep's tiles are the tiled default."""
    from attention_core.labs import cost as c

    assert c.measure_tiled_attention(16).d == c.measure_direct_attention(16).d
    first = next(c.measure_sweep(c.SWEEP_MIN_N))
    assert first.tiled.block == c.measure_tiled_attention(16).block
    assert first.tiled.d == first.direct.d == c.SWEEP_D


def test_causal_softmax_flops_by_hand():
    from attention_core.labs import cost as c
    from attention_core.labs import efficient as e

    per_score = lambda d_k, d_v: 2 * d_k + (1 + c.SOFTMAX_FLOPS_PER_ELEMENT) + 2 * d_v  # noqa: E731
    assert e.causal_softmax_attention_flops(1, 2, 4) == per_score(2, 4)  # one token, one score
    assert e.causal_softmax_attention_flops(3, 2, 4) == 6 * per_score(2, 4)  # 1 + 2 + 3 allowed scores
    assert e.causal_softmax_attention_flops(4, 3, 5) == 10 * per_score(3, 5)
    assert type(e.causal_softmax_attention_flops(4, 3, 5)) is int  # a count, shown without a decimal point


@pytest.mark.parametrize("causal", [False, True])
def test_linear_crossover_against_a_count_up(causal):
    """The bisection against counting n up from 1, d_v ≠ d_k, and n_max below the crossover (None)."""
    from attention_core.labs import cost as c
    from attention_core.labs import efficient as e

    rate = 1 + c.SOFTMAX_FLOPS_PER_ELEMENT
    for d_phi, d_v, d_k in ((4, 2, 8), (3, 5, 2), (8, 1, 16)):
        linear = lambda n: n * (4 * d_phi * d_v + 3 * d_phi + d_v)  # noqa: E731, B023
        scores = lambda n: n * (n + 1) // 2 if causal else n * n  # noqa: E731, B023
        softmax = lambda n: scores(n) * (2 * d_k + rate + 2 * d_v)  # noqa: E731, B023
        first = next(n for n in range(1, 10_000) if linear(n) < softmax(n))
        for n_max in range(1, first + 3):
            expected = first if first <= n_max else None
            got = e.linear_crossover_n(d_phi, d_v, d_k, n_max=n_max, causal=causal)
            assert got == expected, (d_phi, n_max)


def test_window_check_refuses_a_zero_window_or_block_alone():
    from attention_core.labs import efficient as e

    for window, block in ((0, 4), (4, 0)):
        with pytest.raises(ValueError, match="window and block must be positive"):
            e.window_check(8, window, block)


def test_window_check_tile_counts_by_hand():
    """n = 8, window 2, 2 × 2 tiles: the 4 diagonal tiles and the 3 just below are formed, 9 skipped."""
    from attention_core.labs import efficient as e

    w = e.window_check(8, 2, 2)
    assert (w.tiles_computed, w.tiles_skipped, w.tiles_total) == (7, 9, 16)


def test_linear_lab_weights_from_the_feature_map():
    """a_ij = φ(q_i)·φ(k_j) / Σ_{j' ≤ i} φ(q_i)·φ(k_j'), φ(x) = elu(x) + 1, one loop per entry."""
    from attention_core.config import AttentionConfig
    from attention_core.labs import efficient as e
    from attention_core.trace import trace_text

    lab = e.linear_lab(TEXT, d_model=8, seed=3)
    t = trace_text(TEXT, AttentionConfig(d_model=8, heads=1, mask="causal", seed=3))
    phi = lambda x: [v + 1 if v > 0 else math.exp(v) for v in x]  # noqa: E731
    n = len(t.tokens)
    for i in range(n):
        sims = [sum(a * c for a, c in zip(phi(t.Q[0][i]), phi(t.K[0][j]), strict=True)) for j in range(i + 1)]
        expected = [s / sum(sims) for s in sims] + [0.0] * (n - i - 1)
        np.testing.assert_allclose(lab.linear_weights[i], expected, atol=1e-12)


def test_masks_leakage_of_an_unchanged_row_is_zero_for_every_method():
    """Replacing a row by itself changes nothing, whatever the (wrong) masking method: before and
    after are the same layer run."""
    from attention_core.labs import masks as m

    layer = m.lab_layer(("a", "b", "c", "d"), 0, 2)
    for method in m.METHODS:
        for position in range(4):
            r = m.leakage(layer.X, layer.params, position, method, replacement=layer.X[position])
            assert not r.moved.any() and r.verdict == "zero", (method, position)


def test_masks_row_sums_of_the_wrong_methods_by_hand():
    """A padding mask hides the [PAD] keys of every row: zeroing their weights after softmax leaves
    each row the softmax mass of the real keys (< 1); the correct method's rows sum to 1."""
    from attention_core.labs import masks as m

    lab = m.mask_lab(m.MaskLabSettings(("a", "b", "c"), 2, "padding", 2, 0))
    summary = {s.method: s for s in lab.summary}
    s = np.asarray(lab.methods[0].scores)  # [5, 5] scaled scores of the chosen head
    w = np.exp(s - s.max(axis=1, keepdims=True))
    real_mass = w[:, :3].sum(axis=1) / w.sum(axis=1)  # [5] softmax weight on the 3 real keys
    assert summary["zero_weights"].row_sum_max == pytest.approx(real_mass.max(), abs=1e-12)
    assert summary["zero_weights"].row_sum_min == pytest.approx(real_mass.min(), abs=1e-12)
    assert real_mass.max() < 1 - 1e-6
    assert summary["correct"].row_sum_max == pytest.approx(1.0, abs=1e-12)
    assert summary["renormalise"].row_sum_max == pytest.approx(1.0, abs=1e-12)


# --- ring -------------------------------------------------------------------------------------------


def test_ring_block_bounds_one_token_per_device():
    from attention_core.labs import ring as r

    assert r.block_bounds(4, 4) == ((0, 1), (1, 2), (2, 3), (3, 4))


def test_ring_attention_input_checks_one_at_a_time():
    """Each malformed input alone is refused with the ring's own message (not a later NumPy error)."""
    from attention_core.labs import ring as r

    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((6, 2)) for _ in range(3))
    bad = [
        (Q[:, 0], K[:, 0], V),  # 1-D queries and keys of the same shape
        (Q, K[:5], V),  # one key fewer
        (Q, K, V[:5]),  # one value row fewer, V still 2-D
    ]
    for q, k, v in bad:
        with pytest.raises(ValueError, match="expected Q"):
            r.ring_attention(q, k, v, 2)
    with pytest.raises(ValueError, match="followed row"):
        r.ring_attention(Q, K, V, 2, row=6)
    good = r.ring_schedule(2)
    for entry in (2, -1):  # one block index out of range, the rest a valid schedule
        sched = good.copy()
        sched[0, 1] = entry
        with pytest.raises(ValueError, match="a schedule is"):
            r.ring_attention(Q, K, V, 2, schedule=sched)


def test_ring_attention_follows_row_zero_by_default_and_finds_its_device():
    from attention_core.labs import ring as r

    rng = np.random.default_rng(1)
    Q, K, V = (rng.standard_normal((8, 2)) for _ in range(3))
    first = r.ring_attention(Q, K, V, 4)
    assert (first.row, first.row_device) == (0, 0)
    for row, device in ((1, 0), (2, 1), (3, 1), (4, 2), (7, 3)):  # blocks [0,2) [2,4) [4,6) [6,8)
        assert r.ring_attention(Q, K, V, 4, row=row).row_device == device


def test_ring_attention_skips_future_blocks_and_keeps_the_callers_schedule():
    """Causal, P = 4: device p folds in p + 1 blocks, so 6 of the 16 are skipped; a schedule given as
    floats is read as block indices, and the caller's array is neither frozen nor aliased."""
    from attention_core.labs import ring as r

    rng = np.random.default_rng(2)
    Q, K, V = (rng.standard_normal((8, 2)) for _ in range(3))
    ring = r.ring_attention(Q, K, V, 4, causal=True)
    assert int((~ring.computed).sum()) == 6 and ring.blocks_per_device.tolist() == [1, 2, 3, 4]
    sched = r.ring_schedule(4)
    from_floats = r.ring_attention(Q, K, V, 4, causal=True, schedule=sched.astype(float))
    np.testing.assert_array_equal(from_floats.output, ring.output)
    given = r.ring_attention(Q, K, V, 4, schedule=sched)
    assert sched.flags.writeable
    sched[0, 0] = 3
    assert given.schedule[0, 0] == 0


def test_ring_row_state_before_any_allowed_key_is_minus_infinity():
    """Causal, P = 2, a schedule that hands device 0 the future block first: row 0's running max is
    −∞ and its denominator 0 after step 0, then its own key's score and e^0 = 1 after step 1."""
    from attention_core.labs import ring as r

    Q = np.array([[1.0, 0.0], [0.0, 1.0]])
    K = np.array([[2.0, 0.0], [0.0, 2.0]])
    ring = r.ring_attention(Q, K, np.eye(2), 2, causal=True, schedule=[[1, 0], [1, 0]])
    assert np.isneginf(ring.row_max).tolist() == [True, False]
    assert ring.row_max[1] == pytest.approx(2 / math.sqrt(2)) and ring.row_denom.tolist() == [0.0, 1.0]


def test_ring_lab_fields_and_its_documented_seed():
    from attention_core.labs import ring as r

    lab = r.ring_lab(12, 3, 4, True, 5)
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((12, 3)) for _ in range(3))
    np.testing.assert_array_equal(lab.ring.output, r.ring_attention(Q, K, V, 4, True, 5).output)
    assert (lab.n, lab.d, lab.P, lab.causal, lab.ring.row) == (12, 3, 4, True, 5)
    assert (lab.blocks_total, lab.blocks_computed) == (16, 10)  # P², P(P + 1)/2


def test_ring_zigzag_tokens_by_hand():
    from attention_core.labs import ring as r

    eight = r.device_tokens(8, 4, "zigzag")  # 2P chunks of one token: p and 2P − 1 − p
    assert [t.tolist() for t in eight] == [[0, 7], [1, 6], [2, 5], [3, 4]]
    ten = r.device_tokens(10, 2, "zigzag")  # chunk edges 0, 2, 5, 7, 10
    assert [t.tolist() for t in ten] == [[0, 1, 7, 8, 9], [2, 3, 4, 5, 6]]
    with pytest.raises(ValueError, match="zig-zag"):
        r.device_tokens(7, 4, "zigzag")


def test_ring_costs_limits_one_at_a_time():
    from attention_core.labs import ring as r

    ok = dict(n=16, d=4, P=4, bytes_per_element=2, bandwidth=1.0, flop_rate=1.0)
    for key, value in (("n", 3), ("P", 1), ("P", 17), ("d", 0), ("bytes_per_element", 0),
                       ("bandwidth", 0.0), ("flop_rate", 0.0)):  # fmt: skip
        with pytest.raises(ValueError):
            r.ring_costs(**(ok | {key: value}))
    for key, value in (("n", 4), ("P", 2), ("P", 16), ("d", 1), ("bytes_per_element", 1),
                       ("bandwidth", 0.5), ("flop_rate", 0.5)):  # fmt: skip
        r.ring_costs(**(ok | {key: value}))  # the edges of the ranges are accepted


def test_ring_costs_every_field_by_hand():
    """n = 10, d = 8, P = 4, 2 bytes: blocks of b = ⌈10/4⌉ = 3 tokens."""
    from attention_core.labs import ring as r
    from attention_core.labs.multihead import SOFTMAX_FLOPS_PER_ELEMENT as S

    c = r.ring_costs(10, 8, 4, 2, 1e9, 1e12)
    assert (c.n, c.d, c.P, c.bytes_per_element, c.block) == (10, 8, 4, 2, 3) and type(c.block) is int
    assert c.memory == {"q": 24, "kv_now": 48, "kv_next": 48, "state": 30, "scores": 9}
    assert (c.device_bytes, c.full_matrix_bytes) == (2 * 159, 200)
    assert (c.send_bytes_per_device, c.send_bytes_per_step, c.send_steps, c.send_bytes_total) == (
        96,
        384,
        3,
        1152,
    )
    flops = 2 * 9 * 8 + (1 + S) * 9 + 2 * 9 * 8  # QKᵀ, scaling + softmax, ·V on a 3 × 3 block
    assert c.block_flops == flops
    assert c.compute_seconds == pytest.approx(flops / 1e12) and c.transfer_seconds == pytest.approx(96 / 1e9)


def test_ring_min_block_at_an_exact_ratio():
    """With B = 1 byte/s and F = the FLOPs of one score, transfer 2bdβ ≤ compute b² ⇔ b ≥ 2dβ exactly."""
    from attention_core.labs import ring as r
    from attention_core.labs.multihead import SOFTMAX_FLOPS_PER_ELEMENT as S

    d, beta = 4, 2
    c = r.ring_costs(64, d, 2, beta, 1.0, 4 * d + 1 + S)
    assert c.min_block_to_hide == 2 * d * beta


# --- ssm --------------------------------------------------------------------------------------------


def test_ssm_selective_step_by_hand():
    """w·X_t = 2, d = 4: Δ = softplus(2/√4 + β) with softplus(β) = Δ₀."""
    from attention_core.labs import ssm

    X = np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    got = ssm.selective_steps(X, np.array([1.0, 0.0, 0.0, 0.0]), 0.5)
    beta = math.log(math.exp(0.5) - 1)
    assert got[0] == pytest.approx(math.log(1 + math.exp(1 + beta)), abs=1e-12)
    assert got[1] == pytest.approx(0.5, abs=1e-12)


def test_ssm_scan_states_by_hand():
    """x = (1, 0), a = 0.5, b = 2, c = 3: h = 2 then 1, y = 6 then 3."""
    from attention_core.labs import ssm

    s = ssm.diagonal_ssm_scan([1.0, 0.0], [[0.5], [0.5]], np.array([2.0]), np.array([3.0]))
    assert s.states.tolist() == [[2.0], [1.0]] and s.y.tolist() == [6.0, 3.0]


def test_ssm_implied_weights_warn_nothing():
    import warnings

    from attention_core.labs import ssm

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        W = ssm.ssm_implied_weights(np.full((3, 1), 0.5), np.array([1.0]), np.array([1.0]))
    np.testing.assert_allclose(W[2], [0.25, 0.5, 1.0], atol=1e-15)


def test_ssm_state_sizes_keep_the_ns():
    from attention_core.labs import ssm

    s = ssm.state_sizes(4, 2, (10, 20))
    assert (s.ns, s.attention, s.linear, s.ssm) == ((10, 20), (80, 160), (20, 20), (8, 8))


def test_ssm_lab_defaults_are_the_pages_first_view():
    """N 4, Δ 0.5 and 16 tokens (attention_ui.lookalikes.ssm_view), d_model 16 and seed 0 (the look-alikes
    sidebar): a long sentence is cut to 16 tokens."""
    from attention_core.labs import ssm

    long = " ".join(["the cat sat on the mat"] * 4)  # 24 words
    lab = ssm.ssm_lab(long)
    assert (lab.d, lab.N, lab.delta, len(lab.tokens)) == (16, 4, 0.5, 16)
    assert lab.tokenization.truncated
    same = ssm.ssm_lab(long, d_model=16, seed=0, N=4, delta=0.5, max_tokens=16)
    for m in ssm.MODELS:
        np.testing.assert_array_equal(lab.weights[m], same.weights[m])


def test_ssm_lab_limits_edges():
    from attention_core.labs import ssm

    for N, delta in ((1, 0.5), (64, 0.5), (4, 0.01), (4, 5.0)):
        ssm.ssm_lab(TEXT, N=N, delta=delta)
    for N, delta in ((0, 0.5), (65, 0.5), (4, 0.005), (4, 5.5)):
        with pytest.raises(ValueError):
            ssm.ssm_lab(TEXT, N=N, delta=delta)


def test_ssm_lab_fields_against_its_own_head_and_draws():
    """The attention weights are the one causal head of the traced sentence (d_model 8, seed 3); the
    selective steps come from w = 2·N(0, 1) drawn after u from default_rng([seed, 29])."""
    from attention_core.config import AttentionConfig
    from attention_core.labs import ssm
    from attention_core.trace import trace_text

    lab = ssm.ssm_lab(TEXT, d_model=8, seed=3)
    t = trace_text(TEXT, AttentionConfig(d_model=8, heads=1, mask="causal", seed=3))
    np.testing.assert_allclose(lab.weights["attention"], t.weights[0], atol=1e-15)
    assert not np.triu(lab.weights["attention"], 1).any()  # causal
    assert lab.tokens == tuple(t.tokens) and lab.d == 8 and lab.tokenization is not None
    rng = np.random.default_rng([3, 29])
    rng.standard_normal(8)  # u
    w = 2 * rng.standard_normal(8)
    beta = math.log(math.expm1(0.5))
    z = np.asarray(t.X) @ w / math.sqrt(8) + beta
    np.testing.assert_allclose(lab.steps, np.log1p(np.exp(z)), atol=1e-12)
    assert set(lab.recurrence_diffs) == {"linear", "ssm_fixed", "ssm_selective"}
    assert lab.sizes.attention[0] == 2 * lab.sizes.ns[0] * 8 and lab.sizes.ssm[0] == 4 * 8


# --- inference: the calculator (re-measured 2026-12-01 after the Gemma preset) -----------------------


def _shape(**kw):
    from attention_core.labs import inference as li

    base = dict(key="k", name="m", layers=4, heads=8, kv_heads=2, head_dim=16, source="s", context=100)
    return li.ModelShape(**(base | kw))


def test_model_shape_checks_and_windowed_layers():
    assert _shape().layers_windowed == 0 and _shape(window=10).layers_windowed == 4
    assert _shape(window=10, window_layers=3).layers_windowed == 3
    _shape(context=1, window=0, window_layers=0)  # the edges are accepted
    _shape(window_layers=4)
    for bad in (
        dict(kv_heads=3),
        dict(context=0),
        dict(window=-1),
        dict(window_layers=-1),
        dict(window_layers=5),
    ):
        with pytest.raises(ValueError, match="^m: "):
            _shape(**bad)


def test_flops_knee_and_tokens_held_by_hand():
    from attention_core.labs import inference as li

    assert li.flops_knee(64, 4, 2) == 64 * 8 / 8 == 64.0  # d(h + 2g) / 2h
    assert li.flops_knee(30, 3, 1) == 30 * 5 / 6
    assert (li.tokens_held(10, 0), li.tokens_held(10, 4), li.tokens_held(3, 4)) == (10, 4, 3)


def test_cache_size_with_some_windowed_layers_by_hand():
    """4 layers, 3 of them windowed at W = 5, n = 12, 2 KV heads of 16 values, 2 bytes:
    2 · (3·5 + 1·12) · 2 · 16 · 2 = 3456 bytes; MHA (8 KV heads) is 4 times that."""
    from attention_core.labs import inference as li

    s = li.cache_size(4, 12, 8, 2, 16, 2, window=5, window_layers=3)
    assert (s.bytes, s.bytes_mha, s.saved, s.held) == (3456, 4 * 3456, 3 * 3456, 5)
    assert s.ratio == 0.25
    assert li.cache_size(4, 12, 8, 2, 16, 2, window=5).bytes == 2 * 4 * 5 * 2 * 16 * 2  # all layers windowed
    assert li.cache_size(4, 12, 8, 2, 16, 2).bytes == 2 * 4 * 12 * 2 * 16 * 2  # no window
    with pytest.raises(AttentionConfigError):
        li.cache_size(4, 12, 8, 2, 16, 2, window=5, window_layers=5)


def test_cache_calculation_caps_n_and_sizes_every_bar():
    from attention_core.labs import inference as li

    shape = _shape(window=5, window_layers=3)
    calc = li.cache_calculation(shape, 500, 2, 2, 5)
    assert (calc.asked, calc.n, calc.window, calc.capped) == (500, 100, 5, True)
    per_g = lambda g: 2 * (3 * 5 + 1 * 100) * g * 16 * 2  # noqa: E731
    assert calc.size.bytes == per_g(2) and calc.bars == tuple((g, per_g(g)) for g in (1, 2, 4, 8))
    small = li.cache_calculation(shape, 40, 2, 2, 5)
    assert (small.n, small.capped) == (40, False)
    plain = li.cache_calculation(_shape(), 40, 4, 2, 10)  # no window of its own: the typed one, all layers
    assert plain.size.bytes == 2 * 4 * 10 * 4 * 16 * 2


def test_gemma3_270m_shape_by_hand():
    """Gemma 3 270M: 18 layers, 4 query heads over 1 KV head of 256, 32,768 positions, and 15 of the
    18 layers local with a 512-token window (five local layers before each global one)."""
    from attention_core.labs import inference as li

    s = li.gemma3_270m_shape()
    assert (s.key, s.name, s.layers, s.heads, s.kv_heads, s.head_dim) == (
        "gemma3_270m",
        "Gemma 3 270M",
        18,
        4,
        1,
        256,
    )
    assert (s.context, s.window, s.window_layers, s.layers_windowed) == (32_768, 512, 15, 15)
    assert s.source == "its GGUF file's metadata (the file this project runs)"


# --- decoder_view: the Gemma checks (re-measured 2026-12-01) ----------------------------------------


def test_band_check_counts_a_key_exactly_window_back_and_short_texts():
    from attention_core.labs import decoder_view as dv

    w = np.zeros((1, 5, 5))
    w[0, 4, 1] = 0.3  # 3 positions back: outside a window of 3 (keys i − 2 … i)
    assert dv.weight_outside_window(w, 3) == 0.3 and dv.weight_outside_window(w, 4) == 0.0
    assert dv.weight_outside_window(np.ones((2, 3, 3)), 3) == 0.0  # no key is 3 back in 3 tokens


def test_score_bound_holds_at_equality_at_any_scale():
    """q ∥ k gives |q·k| = |q||k| exactly (Cauchy–Schwarz with equality): the bound holds, small or
    large; 10⁻⁴ relative and 10⁻⁵ absolute beyond it does not."""
    from attention_core.labs import decoder_view as dv

    for q in (1e-3, 1.0, 1e3):
        r = dv.score_bound(np.array([[q]]), np.array([[2.0]]), np.array([[-2 * q / 4, 2 * q / 4]]), 4.0)
        assert r.bound == pytest.approx(q / 2) and r.holds, q
        over = dv.score_bound(
            np.array([[q]]), np.array([[2.0]]), np.array([[0.0, q / 2 * (1 + 1e-4) + 1e-5]]), 4.0
        )
        assert not over.holds, q


def test_cache_size_without_a_window_ignores_the_windowed_layer_count():
    from attention_core.labs import inference as li

    every = 2 * 4 * 12 * 2 * 16 * 2
    assert li.cache_size(4, 12, 8, 2, 16, 2, window=0, window_layers=5).bytes == every  # no window: no check
    assert li.cache_size(0, 12, 8, 2, 16, 2).bytes == 0  # no layers, no cache
    # a shape without a window of its own: the typed window applies to every layer, whatever window_layers says
    calc = li.cache_calculation(_shape(window_layers=3), 40, 4, 2, 10)
    assert calc.size.bytes == 2 * 4 * 10 * 4 * 16 * 2
