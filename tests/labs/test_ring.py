"""Ring attention against references written here: plain loops over keys, the running max and
denominator recomputed from their definitions, closed forms of the counts, and deliberately broken
merges and schedules that the equality check must catch."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import tiled
from attention_core.labs import ring as r


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


def test_the_pages_overlap_formula_counts_4d_plus_6_flops_per_score():
    for d in (1, 16, 128):  # the cost lab's LaTeX writes b²(4d + 6)/F
        assert r.block_compute_flops(1, d) == 4 * d + 6
        assert r.block_compute_flops(10, d) == 100 * (4 * d + 6)


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
