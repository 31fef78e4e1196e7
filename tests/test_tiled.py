"""Tiled online-softmax attention against a naive full-matrix computation; its memory against direct."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.labs.cost import measure_direct_attention, measure_tiled_attention
from attention_core.tiled import causal_allowed, direct_attention, tile_grid, tiled_attention


def _naive(Q, K, V, allowed, divisor):
    """Row by row, with the whole row of scores: plain softmax over the allowed keys."""
    out = np.zeros((Q.shape[0], V.shape[1]))
    for i in range(Q.shape[0]):
        s = np.array([Q[i] @ K[j] / divisor for j in range(K.shape[0])])
        ok = allowed[i]
        if not ok.any():
            continue
        e = np.where(ok, np.exp(s - s[ok].max()), 0.0)
        out[i] = (e / e.sum()) @ V
    return out


CASES = [
    # n_q, n_k, d_k, d_v, block_q, block_k
    (1, 1, 1, 1, 1, 1),
    (7, 7, 3, 2, 2, 3),
    (33, 33, 8, 5, 8, 8),
    (50, 50, 4, 4, 7, 13),  # blocks that do not divide n
    (64, 64, 16, 8, 64, 64),  # one tile
    (20, 20, 4, 3, 100, 100),  # blocks larger than n
    (31, 31, 6, 6, 1, 5),
]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n_q,n_k,d_k,d_v,bq,bk", CASES)
def test_tiled_matches_naive(n_q, n_k, d_k, d_v, bq, bk, causal):
    rng = np.random.default_rng(n_q * 100 + bq)
    Q, K = rng.standard_normal((n_q, d_k)) * 2, rng.standard_normal((n_k, d_k)) * 2
    V = rng.standard_normal((n_k, d_v))
    allowed = np.tril(np.ones((n_q, n_k), bool)) if causal else np.ones((n_q, n_k), bool)
    ref = _naive(Q, K, V, allowed, np.sqrt(d_k))
    t = tiled_attention(Q, K, V, bq, bk, causal=causal)
    np.testing.assert_allclose(t.output, ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(direct_attention(Q, K, V, causal=causal), ref, rtol=0, atol=1e-10)
    assert t.max_tile_elements <= bq * bk


def test_tiled_cross_attention_shapes_and_custom_mask():
    rng = np.random.default_rng(3)
    Q, K, V = rng.standard_normal((9, 4)), rng.standard_normal((14, 4)), rng.standard_normal((14, 3))

    def window(qi, kj):  # key j visible when |i - j| <= 2, plus one fully masked query (row 4)
        ok = np.abs(qi[:, None] - kj[None, :]) <= 2
        ok[qi == 4, :] = False
        return ok

    allowed = window(np.arange(9), np.arange(14))
    t = tiled_attention(Q, K, V, 4, 5, allowed_fn=window, divisor=1.5)
    np.testing.assert_allclose(t.output, _naive(Q, K, V, allowed, 1.5), atol=1e-10)
    assert np.all(t.output[4] == 0.0)
    assert t.tiles_skipped > 0


def test_causal_skips_tiles_above_diagonal():
    rng = np.random.default_rng(4)
    Q = K = V = rng.standard_normal((40, 4))
    t = tiled_attention(Q, K, V, 10, 10, causal=True)
    assert (t.tiles_computed, t.tiles_skipped) == (10, 6)  # 4 x 4 grid, lower triangle incl. diagonal
    assert np.array_equal(causal_allowed(np.arange(3), np.arange(3)), np.tril(np.ones((3, 3), bool)))


def test_large_scores_do_not_overflow():
    Q = np.array([[1000.0], [-1000.0], [0.5]])
    K = np.array([[1.0], [2.0], [3.0]])
    V = np.eye(3)
    t = tiled_attention(Q, K, V, 1, 1, divisor=1.0)
    np.testing.assert_allclose(t.output, _naive(Q, K, V, np.ones((3, 3), bool), 1.0), atol=1e-10)


def test_bad_arguments():
    Q = np.zeros((3, 2))
    with pytest.raises(ValueError):
        tiled_attention(Q, Q, Q, 0, 1)
    with pytest.raises(ValueError):
        tiled_attention(Q, Q, Q, causal=True, allowed_fn=causal_allowed)
    with pytest.raises(ValueError):
        tiled_attention(Q, np.zeros((3, 3)), Q)


def test_tiled_peak_memory_far_below_direct_at_2048():
    n, d = 2048, 32
    direct = measure_direct_attention(n, d, seed=0)
    tiled = measure_tiled_attention(n, d, seed=0, block=128)
    # The direct run must hold at least one float64 n x n matrix (32 MiB).
    assert direct.peak_bytes >= n * n * 8
    # Tiled holds a few 128 x 128 tiles plus the [n, d] output: well under a tenth of one matrix.
    assert tiled.peak_bytes < n * n * 8 / 10
    assert tiled.peak_bytes * 20 < direct.peak_bytes


@pytest.mark.parametrize(("n", "block"), [(256, 32), (100, 16), (64, 64), (70, 32)])
@pytest.mark.parametrize("causal", [False, True])
def test_tile_grid_matches_the_tiled_algorithm(n: int, block: int, causal: bool) -> None:
    grid = tile_grid(n, n, block, block, causal)
    tiles = math.ceil(n / block)
    assert grid.shape == (tiles, tiles)
    # By definition: a tile is needed when at least one of its (query i, key j) pairs is allowed.
    for qi in range(tiles):
        for ki in range(tiles):
            rows = range(qi * block, min(n, (qi + 1) * block))
            cols = range(ki * block, min(n, (ki + 1) * block))
            assert grid[qi, ki] == any(not causal or j <= i for i in rows for j in cols)
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((n, 4)) for _ in range(3))
    run = tiled_attention(Q, K, V, block, block, causal=causal)
    assert int(grid.sum()) == run.tiles_computed and int((~grid).sum()) == run.tiles_skipped
    with pytest.raises(ValueError):
        tile_grid(0, 4, 4, 4)


def _loop_attention(Q, K, V, allowed):
    out = np.zeros((len(Q), V.shape[1]))
    for i in range(len(Q)):
        js = [j for j in range(len(K)) if allowed(i, j)]
        s = [float(Q[i] @ K[j]) / math.sqrt(Q.shape[1]) for j in js]
        e = [math.exp(v - max(s)) for v in s]
        for w, j in zip(e, js, strict=True):
            out[i] += w / sum(e) * V[j]
    return out


@pytest.mark.parametrize(
    "shapes",
    [((3,), (3, 2), (3, 2)), ((3, 2), (3,), (3, 2)), ((3, 2), (3, 2), (3,)), ((3, 2), (3, 3), (3, 2)),
     ((3, 2), (3, 2), (4, 2))],
)  # fmt: skip
def test_tiled_refuses_each_wrong_shape(shapes):
    from attention_core.tiled import tiled_attention

    with pytest.raises(ValueError):
        tiled_attention(*(np.zeros(s) for s in shapes))


def test_tiled_block_and_window_limits():
    from attention_core.tiled import tiled_attention

    Q = np.random.default_rng(7).normal(size=(5, 2))
    for bq, bk in ((0, 1), (1, 0)):
        with pytest.raises(ValueError):
            tiled_attention(Q, Q, Q, bq, bk)
    with pytest.raises(ValueError):
        tiled_attention(Q, Q, Q, 2, 2, window=0)
    with pytest.raises(ValueError):
        tiled_attention(Q[:4], Q, Q, 2, 2, window=2)  # a window needs as many queries as keys
    # window 1: every query sees only itself, so the output is V
    np.testing.assert_allclose(tiled_attention(Q, Q, Q, 1, 1, window=1).output, Q, atol=1e-15)
    # a window of 2.0 (a float) is the window of 2
    got = tiled_attention(Q, Q, Q, 2, 2, window=2.0).output
    np.testing.assert_allclose(got, _loop_attention(Q, Q, Q, lambda i, j: i - 2 < j <= i), atol=1e-13)


def test_tiled_defaults_are_64_blocks_no_mask_and_integers_become_floats():
    from attention_core.tiled import direct_attention, tiled_attention

    rng = np.random.default_rng(8)
    Q, K, V = rng.integers(-3, 4, (130, 2)), rng.integers(-3, 4, (130, 2)), rng.integers(-3, 4, (130, 3))
    t = tiled_attention(Q, K, V)
    assert (t.tiles_computed, t.tiles_skipped, t.max_tile_elements) == (9, 0, 64 * 64)
    expected = _loop_attention(Q.astype(float), K.astype(float), V.astype(float), lambda i, j: True)
    np.testing.assert_allclose(t.output, expected, atol=1e-12)
    np.testing.assert_allclose(direct_attention(Q, K, V), expected, atol=1e-12)
    with pytest.raises(ValueError):
        direct_attention(Q[:5], K, V, causal=True)


def test_tile_grid_defaults_and_limits():
    from attention_core.tiled import tile_grid

    g = tile_grid(5, 4, 2, 2)
    assert g.dtype == np.bool_ and g.shape == (3, 2) and g.all()  # no mask by default
    assert tile_grid(3, 3, 1, 1, causal=True).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    w = tile_grid(6, 6, 2, 2, window=2)
    assert w.dtype == np.bool_ and w.tolist() == [[1, 0, 0], [1, 1, 0], [0, 1, 1]]
    for bad in ((0, 3, 1, 1), (3, 0, 1, 1), (3, 3, 0, 1), (3, 3, 1, 0)):
        with pytest.raises(ValueError):
            tile_grid(*bad)


def test_tiled_reports_its_blocks_and_the_tiles_a_custom_mask_skips():
    from attention_core.tiled import tiled_attention

    rng = np.random.default_rng(12)
    Q, K, V = rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    t = tiled_attention(Q, K, V, 2, 3)
    assert (t.block_q, t.block_k) == (2, 3)

    def first_two_keys(q_idx, k_idx):
        return np.broadcast_to(k_idx[None, :] < 2, (len(q_idx), len(k_idx)))

    t = tiled_attention(Q, K, V, 2, 2, allowed_fn=first_two_keys)
    assert (t.tiles_computed, t.tiles_skipped) == (2, 2)  # key tile 1 is wholly masked for both query tiles
    np.testing.assert_allclose(t.output, _loop_attention(Q, K, V, lambda i, j: j < 2), atol=1e-13)


def test_tiled_keeps_a_row_far_below_another_rows_scores():
    """Each query row has its own running maximum: one row scoring ~1000 above another in the same
    tile must not push the other's exponentials to 0."""
    from attention_core.tiled import tiled_attention

    Q = np.array([[40.0, 0.0], [0.0, 0.01]])
    K = np.array([[40.0, 0.0], [39.0, 1.0], [0.0, 1.0]])  # row 0 scores up to 1600/√2 ≈ 1131
    V = np.array([[1.0], [2.0], [3.0]])
    expected = _loop_attention(Q, K, V, lambda i, j: True)
    np.testing.assert_allclose(tiled_attention(Q, K, V, 2, 3).output, expected, atol=1e-12)


def test_tiled_fully_masked_row_is_zero_without_warnings():
    import warnings

    from attention_core.tiled import tiled_attention

    Q = np.random.default_rng(13).normal(size=(3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 division behind the 0
        out = tiled_attention(
            Q, Q, Q, 3, 3, allowed_fn=lambda q, k: (q[:, None] > 0) & (k[None, :] >= 0)
        ).output
    assert out[0].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(out[1:], _loop_attention(Q, Q, Q, lambda i, j: True)[1:], atol=1e-13)


def test_boolean_queries_and_keys_are_numbers_not_logic():
    """0/1 inputs given as booleans: their scores are sums of products (2 here), not a logical or."""
    from attention_core.tiled import direct_attention, tiled_attention

    Q = np.array([[True, True], [True, False]])
    K = np.array([[True, True], [False, True]])
    V = np.array([[1.0, 0.0], [0.0, 1.0]])
    expected = _loop_attention(Q.astype(float), K.astype(float), V, lambda i, j: True)
    np.testing.assert_allclose(tiled_attention(Q, K, V, 2, 2).output, expected, atol=1e-13)
    np.testing.assert_allclose(direct_attention(Q, K, V), expected, atol=1e-13)
