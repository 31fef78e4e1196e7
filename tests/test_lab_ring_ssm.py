"""Ring attention and the state-space recurrences against references written here: plain loops over
keys, the running max and denominator recomputed from their definitions, closed forms of the counts,
and deliberately broken merges and schedules that the equality check must catch."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import tiled
from attention_core.labs import ring as r
from attention_core.labs import ssm


def naive_attention(Q, K, V, causal):
    """softmax(q_i·k_j/√d) v_j with loops over the keys, by hand."""
    n, d = Q.shape
    out = np.zeros((n, V.shape[1]))
    for i in range(n):
        js = [j for j in range(n) if not (causal and j > i)]
        s = [sum(Q[i, c] * K[j, c] for c in range(d)) / math.sqrt(d) for j in js]
        m = max(s)
        e = [math.exp(x - m) for x in s]
        for x, j in zip(e, js, strict=True):
            out[i] += x / sum(e) * V[j]
    return out


def qkv(n, d, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, d)) for _ in range(3))


@pytest.mark.parametrize(
    ("n", "P", "causal"), [(16, 2, False), (23, 5, True), (40, 16, True), (37, 7, False)]
)
def test_ring_equals_loop_attention(n, P, causal):
    Q, K, V = qkv(n, 3, seed=n)
    ring = r.ring_attention(Q, K, V, P, causal)
    assert np.max(np.abs(ring.output - naive_attention(Q, K, V, causal))) <= 1e-12


def test_ring_lab_difference_is_rounding_only():
    for causal in (False, True):
        lab = r.ring_lab(256, 16, 8, causal, row=100)
        assert lab.max_abs_diff <= 1e-12
        assert lab.blocks_computed == (36 if causal else 64)


def test_schedule_one_hop_per_step_every_block_once():
    for P in (2, 5, 16):
        s = r.ring_schedule(P)
        for p in range(P):
            assert sorted(s[p]) == list(range(P))  # every block once per device
            for t in range(P):
                assert s[p, t] == (p - t) % P
                if t + 1 < P:  # what device p held, device p + 1 holds one step later
                    assert s[(p + 1) % P, t + 1] == s[p, t]
        assert s[:, 0].tolist() == list(range(P))  # each device starts with its own block


def test_a_broken_schedule_breaks_the_equality():
    Q, K, V = qkv(32, 4)
    bad = r.ring_schedule(4).copy()
    bad[1, 2] = bad[1, 1]  # device 1 folds one block twice and never sees another
    ring = r.ring_attention(Q, K, V, 4, schedule=bad)
    assert np.max(np.abs(ring.output - naive_attention(Q, K, V, False))) > 1e-3
    good = r.ring_attention(Q, K, V, 4)
    assert np.max(np.abs(good.output - naive_attention(Q, K, V, False))) <= 1e-12


def test_a_broken_merge_breaks_the_equality(monkeypatch):
    def no_rescale(m, denom, acc, s, v):  # forgets exp(m − m′) on the old sums
        m_new = np.maximum(m, s.max(axis=1))
        p = np.exp(s - m_new[:, None])
        return m_new, denom + p.sum(axis=1), acc + p @ v

    monkeypatch.setattr(r, "online_softmax_merge", no_rescale)
    lab = r.ring_lab(64, 8, 4, False, row=0)
    assert lab.max_abs_diff > 1e-3


def test_ring_uses_the_tiled_merge():
    assert r.online_softmax_merge is tiled.online_softmax_merge


def test_followed_row_running_max_and_denominator():
    n, P, row = 30, 5, 17
    Q, K, V = qkv(n, 4, seed=3)
    for causal in (False, True):
        ring = r.ring_attention(Q, K, V, P, causal, row)
        seen: list[int] = []
        for t in range(P):
            a, b = ring.bounds[ring.schedule[ring.row_device, t]]
            seen += [j for j in range(a, b) if not (causal and j > row)]
            s = [float(Q[row] @ K[j]) / 2.0 for j in seen]
            if s:
                assert ring.row_max[t] == pytest.approx(max(s), abs=1e-12)
                assert ring.row_denom[t] == pytest.approx(sum(math.exp(x - max(s)) for x in s), rel=1e-12)
            else:
                assert ring.row_max[t] == -np.inf and ring.row_denom[t] == 0
        assert ring.row_device == 2


def test_causal_skips_wholly_future_blocks_and_loads_unevenly():
    P = 6
    ring = r.ring_attention(*qkv(36, 2), P, causal=True)
    for p in range(P):
        for t in range(P):
            assert ring.computed[p, t] == (ring.schedule[p, t] <= p)
    assert ring.blocks_per_device.tolist() == list(range(1, P + 1))
    assert r.ring_attention(*qkv(36, 2), P).computed.all()


def test_block_bounds_and_limits():
    assert r.block_bounds(10, 3) == ((0, 3), (3, 6), (6, 10))
    for bad in ((3, 4), (100, 1), (100, 17)):
        with pytest.raises(ValueError):
            r.block_bounds(*bad)


def test_orderings_hold_every_token_once_and_count_pairs():
    n, P = 48, 4
    for ordering in r.ORDERINGS:
        tokens = np.concatenate(r.device_tokens(n, P, ordering))
        assert sorted(tokens.tolist()) == list(range(n))
        pairs = r.causal_pairs_per_device(n, P, ordering)
        assert pairs.sum() == n * (n + 1) // 2
    loop = [sum(i + 1 for i in range(n) if i * P // n == p) for p in range(P)]
    assert r.causal_pairs_per_device(n, P, "contiguous").tolist() == loop
    zig = r.causal_pairs_per_device(n, P, "zigzag")
    assert zig.max() == zig.min()  # 2P chunks of equal size: exactly balanced
    assert r.causal_pairs_per_device(n, P, "striped").tolist() == [
        sum(i + 1 for i in range(p, n, P)) for p in range(P)
    ]


def test_ring_costs_by_hand():
    c = r.ring_costs(n=1024, d=64, P=4, bytes_per_element=2, bandwidth=1e9, flop_rate=1e12)
    b = 256
    assert c.block == b
    assert c.memory == {
        "q": b * 64,
        "kv_now": 2 * b * 64,
        "kv_next": 2 * b * 64,
        "state": b * 64 + 2 * b,
        "scores": b * b,
    }
    assert c.device_bytes == 2 * (6 * b * 64 + 2 * b + b * b)
    assert c.full_matrix_bytes == 1024 * 1024 * 2
    assert c.send_bytes_per_device == 2 * b * 64 * 2
    assert c.send_bytes_per_step == 4 * c.send_bytes_per_device
    assert c.send_bytes_total == 3 * c.send_bytes_per_step
    flops = 2 * b * b * 64 + 2 * b * b * 64  # QKᵀ and weights·V
    assert flops < c.block_flops < flops * 1.1  # plus the softmax
    assert c.compute_seconds == pytest.approx(c.block_flops / 1e12)
    assert c.transfer_seconds == pytest.approx(c.send_bytes_per_device / 1e9)


@pytest.mark.parametrize(("bw", "rate"), [(1e9, 1e12), (100e9, 200e12), (5e9, 1e11), (1e12, 1e9)])
def test_min_block_to_hide_is_the_first_block_that_hides(bw, rate):
    c = r.ring_costs(4096, 64, 4, 2, bw, rate)
    first = next(b for b in range(1, 10**6) if 2 * b * 64 * 2 / bw <= r.block_compute_flops(b, 64) / rate)
    assert c.min_block_to_hide == first
    assert c.hides == (c.block >= first)


# --- state-space recurrences ------------------------------------------------------------------


def loop_weights(a, b, c):
    """W_ts = Σ_k c_k b_k Π_{r=s+1..t} a_{r,k} with explicit products."""
    n, N = a.shape
    W = np.zeros((n, n))
    for t in range(n):
        for s in range(t + 1):
            W[t, s] = sum(c[k] * b[k] * math.prod(a[q, k] for q in range(s + 1, t + 1)) for k in range(N))
    return W


def test_implied_weights_equal_loops_and_the_scan():
    rng = np.random.default_rng(5)
    n, N = 9, 3
    a, b, c, x = (
        rng.uniform(0.2, 0.95, (n, N)),
        rng.standard_normal(N),
        rng.standard_normal(N),
        rng.standard_normal(n),
    )
    W = ssm.ssm_implied_weights(a, b, c)
    assert np.max(np.abs(W - loop_weights(a, b, c))) <= 1e-12
    assert np.max(np.abs(ssm.diagonal_ssm_scan(x, a, b, c).y - W @ x)) <= 1e-12
    impulse = ssm.diagonal_ssm_scan(np.eye(n)[2], a, b, c).y  # x = δ at s = 2: column 2 of W
    assert np.allclose(impulse, W[:, 2], atol=1e-12)


def test_fixed_decay_is_a_convolution_selective_is_not():
    lab = ssm.ssm_lab("the cat sat on the mat because it was warm", d_model=16, seed=1)
    assert lab.toeplitz_gaps["ssm_fixed"] <= 1e-12
    assert lab.toeplitz_gaps["ssm_selective"] > 1e-3
    lam = np.arange(1, lab.N + 1)
    a = np.exp(-lab.delta * lam)
    W = lab.weights["ssm_fixed"]
    rng = np.random.default_rng([1, 29])
    rng.standard_normal(16), rng.standard_normal(16)
    b, c = rng.standard_normal(lab.N) / math.sqrt(lab.N), rng.standard_normal(lab.N)
    for lag in range(4):
        assert W[lag + 3, 3] == pytest.approx(float(np.sum(c * b * a**lag)), abs=1e-12)
    for name, diff in lab.recurrence_diffs.items():
        assert diff <= 1e-12, name
    assert np.allclose(lab.row_sums["attention"], 1) and np.allclose(lab.row_sums["linear"], 1)
    assert np.all(np.triu(lab.weights["ssm_selective"], 1) == 0)


def test_selective_steps_depend_on_the_token_and_meet_the_fixed_one_at_zero():
    X = np.zeros((3, 4))
    assert np.allclose(ssm.selective_steps(X, np.ones(4), 0.7), 0.7)
    assert ssm.softplus(np.array([800.0]))[0] == 800.0


def test_state_sizes_by_hand():
    s = ssm.state_sizes(16, 4, ns=(10, 1000))
    assert s.attention == (320, 32000) and s.linear == (272, 272) and s.ssm == (64, 64)
    with pytest.raises(ValueError):
        ssm.ssm_lab("a b", N=0)


def test_the_pages_overlap_formula_counts_4d_plus_6_flops_per_score():
    for d in (1, 16, 128):  # the cost lab's LaTeX writes b²(4d + 6)/F
        assert r.block_compute_flops(1, d) == 4 * d + 6
        assert r.block_compute_flops(10, d) == 100 * (4 * d + 6)


def test_implied_weights_stay_finite_for_fast_decay():
    a = np.full((40, 2), np.exp(-80.0))  # the fastest decay the page allows: Δ = 2, λ = 16 … and beyond
    W = ssm.ssm_implied_weights(a, np.ones(2), np.ones(2))
    assert np.all(np.isfinite(W)) and np.allclose(np.diag(W), 2.0) and np.all(np.triu(W, 1) == 0)
    lab = ssm.ssm_lab(" ".join(["word"] * 16), N=16, delta=5.0)
    assert max(lab.recurrence_diffs.values()) <= 1e-12
