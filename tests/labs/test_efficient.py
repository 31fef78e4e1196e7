"""Efficient attention core against references written here: naive loops over keys, closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.labs import efficient as e
from attention_core.tiled import tile_grid, tiled_attention

TOL = 1e-10  # what a check reads as equal; a deliberately broken input gives far more

TEXT = "the cat sat on the mat"


def naive_window(Q, K, V, w):
    """Loop over each query and the keys of its window: softmax by hand."""
    n, d = Q.shape
    out = np.zeros((n, V.shape[1]))
    for i in range(n):
        js = [j for j in range(n) if i - w < j <= i]
        s = [float(Q[i] @ K[j]) / math.sqrt(d) for j in js]
        m = max(s)
        ex = [math.exp(x - m) for x in s]
        tot = sum(ex)
        for x, j in zip(ex, js, strict=True):
            out[i] += x / tot * V[j]
    return out


def phi(x):
    return np.array([[v + 1 if v > 0 else math.exp(v) for v in row] for row in x])


def naive_linear(Q, K, V):
    """Causal linear attention by the definition: weights φ(q_i)·φ(k_j) normalised over j ≤ i."""
    fq, fk = phi(Q), phi(K)
    n = Q.shape[0]
    out = np.zeros((n, V.shape[1]))
    for i in range(n):
        sims = [float(fq[i] @ fk[j]) for j in range(i + 1)]
        for j, s in enumerate(sims):
            out[i] += s / sum(sims) * V[j]
    return out


def rand(n, d, seed=3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal((n, d)), rng.standard_normal((n, d))


@pytest.mark.parametrize("n,w,b", [(37, 5, 4), (40, 8, 8), (33, 1, 7), (20, 50, 6), (64, 16, 16)])
def test_window_tiles_equal_naive_window(n, w, b):
    Q, K, V = rand(n, 6)
    out = tiled_attention(Q, K, V, b, b, window=w).output
    assert np.max(np.abs(out - naive_window(Q, K, V, w))) <= 1e-10


def test_window_skips_tiles_outside_and_grid_matches_mask():
    n, w, b = 64, 10, 8
    grid = tile_grid(n, n, b, b, window=w)
    # a tile is formed exactly when some (i, j) inside it is in the window
    for qi in range(n // b):
        for ki in range(n // b):
            any_allowed = any(
                i - w < j <= i for i in range(qi * b, qi * b + b) for j in range(ki * b, ki * b + b)
            )
            assert grid[qi, ki] == any_allowed
    run = tiled_attention(*rand(n, 4), b, b, window=w)
    assert run.tiles_computed == grid.sum()
    assert run.tiles_computed + run.tiles_skipped == grid.size


def test_window_check_numbers():
    c = e.window_check(256, 32, 32)
    assert c.max_abs_diff <= 1e-10
    assert c.diff_to_causal > 0.01  # a different model once n > w
    assert c.scores_needed == sum(min(i + 1, 32) for i in range(256))
    assert e.window_check(50, 64, 16).diff_to_causal <= 1e-12  # n ≤ w: the same as causal
    assert c.tiles_computed < c.tiles_total // 2


def test_window_work_grows_linearly():
    """Tiles formed per n: about n/b · (w/b + 1) for the window, n²/(2b²) for causal."""
    b, w = 16, 32
    counts = [int(tile_grid(n, n, b, b, window=w).sum()) for n in (256, 512, 1024)]
    r = w // b  # query tile q sees key tiles q − r … q (fewer for the first r)
    assert counts == [(n // b) * (r + 1) - r * (r + 1) // 2 for n in (256, 512, 1024)]
    assert counts[2] - counts[1] == 2 * (counts[1] - counts[0])  # linear in n
    causal = [int(tile_grid(n, n, b, b, causal=True).sum()) for n in (256, 512)]
    assert causal == [(n // b) * (n // b + 1) // 2 for n in (256, 512)]


def test_window_rejects_bad_arguments():
    Q, K, V = rand(8, 2)
    with pytest.raises(ValueError):
        tiled_attention(Q, K, V, 4, 4, causal=True, window=3)
    with pytest.raises(ValueError):
        tiled_attention(Q, K, V, 4, 4, window=0)
    with pytest.raises(ValueError):
        e.window_check(5000, 8, 8)


def test_elu_plus_one_closed_form():
    x = np.array([-3.0, -0.5, 0.0, 0.2, 4.0])
    assert np.allclose(e.elu_plus_one(x), [math.exp(-3), math.exp(-0.5), 1.0, 1.2, 5.0], atol=1e-15)


@pytest.mark.parametrize("n,d,dv", [(1, 3, 2), (9, 4, 5), (30, 8, 8)])
def test_linear_recurrence_equals_definition_and_quadratic(n, d, dv):
    rng = np.random.default_rng(n)
    Q, K, V = rng.standard_normal((n, d)), rng.standard_normal((n, d)), rng.standard_normal((n, dv))
    rec = e.linear_attention_recurrent(Q, K, V)
    ref = naive_linear(Q, K, V)
    assert np.max(np.abs(rec.output - ref)) <= 1e-10
    assert np.max(np.abs(e.linear_attention_quadratic(Q, K, V) - ref)) <= 1e-10
    assert rec.state.shape == (d, dv) and rec.normaliser_state.shape == (d,)
    assert np.allclose(rec.state, phi(K).T @ V, atol=1e-12)
    fq, fk = phi(Q), phi(K)
    assert np.allclose(rec.normalisers, [fq[i] @ fk[: i + 1].sum(axis=0) for i in range(n)], atol=1e-12)


def test_linear_weights_rows_sum_to_one_and_are_not_softmax():
    Q, K, _ = rand(12, 4)
    w = e.linear_weights(Q, K)
    assert np.allclose(w.sum(axis=1), 1.0, atol=1e-12) and np.all(np.triu(w, 1) == 0)
    lab = e.linear_lab("dog bites man and the man bites back")
    assert lab.recurrence_vs_quadratic <= 1e-10
    assert lab.weight_diff > 1e-3
    assert np.allclose(lab.softmax_weights.sum(axis=1), 1.0)


def test_linear_flops_and_crossover():
    assert e.linear_attention_flops(10, 4, 3) == 10 * (4 * 4 * 3 + 3 * 4 + 3)
    for d in (8, 64):
        n = e.linear_crossover_n(d, d, d)
        lin = [m * (4 * d * d + 4 * d) for m in (n - 1, n)]
        soft = [4 * m * m * d + 6 * m * m for m in (n - 1, n)]
        assert lin[1] < soft[1] and lin[0] >= soft[0]


def test_exactness_table():
    rows = {r.method: r.max_abs_diff for r in e.exactness(n=128, window=16, block=32)}
    assert rows["tiled"] <= 1e-10
    assert rows["window"] > 1e-3 and rows["linear"] > 1e-3


def test_window_timing_yields_each_n_without_asserting_times():
    points = list(e.window_timing(ns=(64, 128), window=16, block=16, repeats=1))
    assert [p.n for p in points] == [64, 128]
    assert points[1].tiles_full == 36 and points[1].tiles_window == 8 + 7


def test_bench_script_smoke_prints_equal_outputs_and_ratios():
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "bench" / "window_vs_full.py"
    out = subprocess.run(
        [sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    diff = float(out.splitlines()[0].rsplit(":", 1)[1])
    assert diff <= 1e-10
    rows = [line.split() for line in out.splitlines()[2:]]
    assert [r[0] for r in rows] == ["256", "512"]
    assert rows[1][-3:] == ["9", "/", "10"]  # window tiles / full causal tiles, b = 128, w = 256


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


def test_window_check_of_a_wider_window_is_large(monkeypatch):
    assert e.window_check(40, 8, 16).max_abs_diff <= TOL
    real = e.tiled_attention
    monkeypatch.setattr(e, "tiled_attention", lambda *a, window=None, **k: real(*a, window=window + 1, **k))
    assert e.window_check(40, 8, 16).max_abs_diff > 1e-3


@pytest.mark.parametrize("n,window,block", [(10, 3, 4), (37, 5, 8), (16, 16, 4), (7, 2, 7), (9, 1, 2)])
def test_scores_formed_counts_only_the_entries_of_formed_tiles(n, window, block):
    """Counted here entry by entry: edge tiles (n not a multiple of block) hold fewer than block²."""
    chk = e.window_check(n, window, block)
    formed = sum(
        1 for i in range(n) for j in range(n) if chk.grid[i // block, j // block]
    )  # every score entry whose tile is formed
    needed = sum(1 for i in range(n) for j in range(n) if i - window < j <= i)
    assert chk.scores_formed == formed
    assert chk.scores_needed == needed
    assert needed <= chk.scores_formed <= chk.tiles_computed * block * block
    if n % block:
        assert chk.scores_formed < chk.tiles_computed * block * block


def test_window_timing_ratios_by_hand():
    t = e.WindowTiming(
        n=1024,
        window=64,
        block=32,
        full_direct=6.0,
        full_tiled=3.0,
        window_tiled=0.5,
        tiles_full=1,
        tiles_window=1,
    )
    assert t.ratio_tiled == pytest.approx(6.0)  # full tiled ÷ window tiled
    assert t.ratio_direct == pytest.approx(12.0)  # full direct ÷ window tiled


def _softmax_rows(s):
    out = np.zeros_like(s)
    for i, row in enumerate(s):
        m = max(row[: i + 1])
        ex = [math.exp(v - m) for v in row[: i + 1]]
        out[i, : i + 1] = [v / sum(ex) for v in ex]
    return out


def test_linear_lab_tops_and_differences_against_loops():
    from attention_core import AttentionConfig
    from attention_core.trace import trace_text

    text = "the cat sat on the mat today"
    lab = e.linear_lab(text)
    tr = trace_text(text, AttentionConfig(d_model=16, heads=1, mask="causal", seed=0))
    Q, K = np.asarray(tr.Q[0]), np.asarray(tr.K[0])
    soft = _softmax_rows(Q @ K.T / math.sqrt(Q.shape[1]))
    phi = lambda a: np.where(a > 0, a + 1, np.exp(np.minimum(a, 0)))  # noqa: E731
    sim = np.array(
        [[float(phi(Q[i]) @ phi(K[j])) if j <= i else 0.0 for j in range(len(K))] for i in range(len(Q))]
    )
    lin = sim / sim.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(lab.softmax_top, soft.max(axis=1), atol=1e-12)
    np.testing.assert_allclose(lab.linear_top, lin.max(axis=1), atol=1e-12)
    # the two tops differ, so a swap of the two would fail the lines above
    assert np.max(np.abs(soft.max(axis=1) - lin.max(axis=1))) > 1e-2
    assert lab.weight_diff == pytest.approx(np.max(np.abs(lin - soft)), abs=1e-12)
    assert lab.recurrence_vs_quadratic <= TOL


def test_recurrence_check_of_a_non_causal_quadratic_form_is_large(monkeypatch):
    real = e.linear_attention_quadratic
    monkeypatch.setattr(
        e, "linear_attention_quadratic", lambda Q, K, V, causal=True: real(Q, K, V, causal=False)
    )
    assert e.linear_lab("one two three four").recurrence_vs_quadratic > 1e-3


def test_exactness_of_a_non_causal_reference_is_large(monkeypatch):
    rows = {r.method: r.max_abs_diff for r in e.exactness(n=96, window=16, block=32)}
    assert rows["tiled"] <= TOL and rows["window"] > 1e-3 and rows["linear"] > 1e-3
    real = e.direct_attention
    monkeypatch.setattr(e, "direct_attention", lambda Q, K, V, causal=False: real(Q, K, V, causal=False))
    rows = {r.method: r.max_abs_diff for r in e.exactness(n=96, window=16, block=32)}
    assert rows["tiled"] > 1e-3
