"""Efficient attention core against references written here: naive loops over keys, closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.labs import efficient as e
from attention_core.tiled import tile_grid, tiled_attention


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

    script = Path(__file__).resolve().parent.parent / "bench" / "window_vs_full.py"
    out = subprocess.run(
        [sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    diff = float(out.splitlines()[0].rsplit(":", 1)[1])
    assert diff <= 1e-10
    rows = [line.split() for line in out.splitlines()[2:]]
    assert [r[0] for r in rows] == ["256", "512"]
    assert rows[1][-3:] == ["9", "/", "10"]  # window tiles / full causal tiles, b = 128, w = 256
