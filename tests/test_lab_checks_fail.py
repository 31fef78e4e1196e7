"""The checks the lab pages report as proof ("the residual identity holds", "cached decoding equals
the full pass", "the score depends on the offset only", …) fed deliberately broken inputs: each gap
must become large, so a check that returned 0 could not pass (issue 28).

Broken inputs are made two ways: a trace with one array changed (``dataclasses.replace``), or the
lab run with one of its steps swapped for a wrong one (``monkeypatch`` on the lab module).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attention_core.labs import block as b
from attention_core.labs import cost as c
from attention_core.labs import decoder_view as dv
from attention_core.labs import efficient as e
from attention_core.labs import inference as inf
from attention_core.labs import multihead as mh
from attention_core.labs import positions as pos

TOL = 1e-10

# --- block: residual_gap ---------------------------------------------------------------------------


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


# --- decoder: the RoPE offset curve's spread and the pair lengths ------------------------------------


def test_spread_of_rows_that_differ_is_their_largest_difference():
    scores = np.array([[1.0, 2.0, 3.0], [1.0, 2.5, 3.0], [0.7, 2.0, 3.0]])
    curve = dv.RopeOffsetCurve(np.arange(3), np.arange(3), scores, 1.0)
    assert curve.spread == pytest.approx(0.5)


def test_spread_compares_every_pair_of_rows_not_only_the_first():
    """Rows 1.4 and 0.6 around a first row of 1.0: each is 0.4 from the first, 0.8 from each other."""
    scores = np.array([[1.0, 2.0], [1.4, 2.0], [0.6, 2.0]])
    assert dv.RopeOffsetCurve(np.arange(2), np.arange(3), scores, 1.0).spread == pytest.approx(0.8)


def test_spread_of_an_absolute_position_code_is_large(monkeypatch):
    """Swap RoPE for a code that adds the position (not a rotation): the score then depends on where
    the pair sits, and the spread must show it."""
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=8), rng.normal(size=8)
    offsets, starts = np.arange(6), np.array([0, 3, 9])
    assert dv.rope_offset_curve(q, k, offsets, starts, 100.0).spread < TOL

    def added_position(x, positions, base, layout="interleaved"):
        return np.asarray(x) + 0.1 * np.asarray(positions, float)[:, None]

    monkeypatch.setattr(dv, "apply_rope", added_position)
    assert dv.rope_offset_curve(q, k, offsets, starts, 100.0).spread > 0.1


def test_pair_norm_change_of_a_stretch_is_large():
    x = np.array([[3.0, 4.0, 0.0, 1.0]])
    assert dv.max_pair_norm_change(x, x) == 0.0
    assert dv.max_pair_norm_change(x, 1.5 * x) == pytest.approx(2.5)  # the (3, 4) pair: 5 -> 7.5
    assert dv.max_pair_norm_change(x, x[:, [1, 0, 3, 2]]) == 0.0  # a swap inside pairs keeps lengths


# --- inference: cache_gap --------------------------------------------------------------------------


def test_cache_gap_of_a_cache_that_forgets_is_large(monkeypatch):
    """A cache that keeps only the last two tokens (a bug, not a window the page claims) must show."""
    s = inf.InferenceSettings("the quick brown fox jumps over the lazy dog")
    assert inf.inference_lab(s).cache_gap <= TOL
    real_append = inf.append_kv

    def forgetful(cache, K_new, V_new):
        full = real_append(cache, K_new, V_new)
        return type(full)(K=full.K[:, -2:], V=full.V[:, -2:])

    monkeypatch.setattr(inf, "append_kv", forgetful)
    # one query row per step (m = 1), so the short cache is accepted: only the gap can tell
    lab = inf.inference_lab(s)
    assert lab.cache_gap > 1e-3


def test_cache_gap_of_a_wrong_divisor_is_large(monkeypatch):
    s = inf.InferenceSettings("a b c d e")
    real = inf.decode_attention
    monkeypatch.setattr(inf, "decode_attention", lambda q, cache, divisor: real(q, cache, divisor * 2))
    assert inf.inference_lab(s).cache_gap > 1e-3


# --- efficient: the window check, its counts, the timing ratios, linear attention -----------------


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


# --- cost: the tiled check -------------------------------------------------------------------------


def test_tiled_check_of_a_maskless_tiling_is_large(monkeypatch):
    assert c.tiled_check(50, 16, True).max_abs_diff <= TOL
    real = c.tiled_attention
    monkeypatch.setattr(c, "tiled_attention", lambda Q, K, V, bq, bk, causal=False: real(Q, K, V, bq, bk))
    assert c.tiled_check(50, 16, True).max_abs_diff > 1e-3


# --- positions: the equivariance gap ----------------------------------------------------------------


def test_equivariance_gap_with_the_wrong_permutation_is_large():
    rng = np.random.default_rng(3)
    out = rng.normal(size=(5, 4))
    perm = np.array([3, 0, 4, 1, 2])
    shuffled_out = out[perm]
    assert pos.equivariance_gap(shuffled_out, out, perm) == 0.0
    wrong = np.arange(5)  # forgetting to permute
    expected = max(float(np.max(np.abs(out[perm][i] - out[i]))) for i in range(5))
    assert pos.equivariance_gap(shuffled_out, out, wrong) == pytest.approx(expected)
    assert expected > 0.1
    np.testing.assert_allclose(
        pos.row_gaps(shuffled_out, out, wrong), [np.max(np.abs(out[perm][i] - out[i])) for i in range(5)]
    )


# --- multi-head: split into heads vs separate products ---------------------------------------------


def test_split_check_of_a_wrong_head_cut_is_large(monkeypatch):
    rng = np.random.default_rng(4)
    X, W = rng.normal(size=(5, 8)), rng.normal(size=(8, 8))
    good = mh.split_vs_separate(X, W, 2)
    assert good.equal and good.max_abs_diff <= TOL
    # cutting the columns the other way round (column j to head j % h) is a different split
    monkeypatch.setattr(mh, "split_heads", lambda x, h: x.reshape(x.shape[0], -1, h).transpose(2, 0, 1))
    bad = mh.split_vs_separate(X, W, 2)
    assert not bad.equal and bad.max_abs_diff > 0.1
