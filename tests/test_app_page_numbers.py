"""Every number the block, inference and cost pages show is read back from the page and compared
with the core (or with hand formulas), and a broken check shows as an error, not a success (issue 28).

One page run each (tables switched on, so the numbers behind the charts are there too).
"""

from __future__ import annotations

import math

import pytest

from attention_core.labs import block as lab_block
from attention_core.labs import efficient as lab_efficient
from attention_core.labs import inference as lab_inference
from attention_core.labs.cost import attention_flops, format_bytes
from attention_ui.i18n import translate
from tests.apptest_pages import no_exception, open_page


def tr(key: str, **values) -> str:
    return translate("en", key, **values)


def frame(at, column_key: str):
    name = tr(column_key)
    return next(df.value for df in at.dataframe if name in df.value.columns)


def metric(at, label: str) -> str:
    return [m.value for m in at.metric if m.label == label][-1]


def all_text(at) -> str:
    parts = [m.value for m in at.markdown] + [s.value for s in at.success] + [e.value for e in at.error]
    return "\n".join(parts + [i.value for i in at.info] + [c.value for c in at.caption])


# --- block ------------------------------------------------------------------------------------------


def test_block_page_numbers():
    text = "the cat sat on the mat"
    at = open_page("app_pages/block.py", block_text=text, block_tables=True, block_depth=3)
    s = at.session_state
    cfg = lab_block.BlockConfig(
        d_model=int(s["block_d_model"]), heads=int(s["block_heads"]), norm=s["block_norm"], placement=s["block_placement"],
        ffn=s["block_ffn"], mask=s["block_mask"], seed=int(s["block_seed"]),
    )  # fmt: skip
    trace = lab_block.block_lab(text, cfg)
    stats = lab_block.stage_stats(trace)
    stages = frame(at, "block.col_stage")
    assert len(stages) == len(stats) == 7
    for row, st in zip(stages.itertuples(index=False), stats, strict=True):
        assert row[1] == f"{st.shape[0]} × {st.shape[1]}"
        assert float(row[2]) == pytest.approx(st.mean_rms, abs=5e-4)
        assert float(row[3]) == pytest.approx(st.max_abs_row_mean, rel=5e-3, abs=1e-300)
    gap = lab_block.residual_gap(trace)
    assert gap <= 1e-10
    assert any(f"{gap:.2e}" in ok.value for ok in at.success)
    norms = frame(at, "block.col_ln_mean")
    c = lab_block.norm_comparison(trace.x)
    assert list(norms[tr("block.col_token")]) == text.split()
    for col, values, tol in (
        ("block.col_ln_mean", c.layer_mean, 1e-14),
        ("block.col_ln_rms", c.layer_rms, 5e-5),
        ("block.col_rms_mean", c.rms_mean, 5e-4),
        ("block.col_rms_rms", c.rms_rms, 5e-5),
    ):
        assert [float(v) for v in norms[tr(col)]] == pytest.approx(list(values), abs=tol), col
    depth = frame(at, "block.axis_layer")
    run = lab_block.depth_run(text, cfg, 3)
    assert list(depth[tr("block.axis_layer")]) == [0, 1, 2, 3]
    assert list(depth[tr("block.placement_pre")]) == pytest.approx(list(run.pre_rms), rel=1e-12)
    assert list(depth[tr("block.placement_post")]) == pytest.approx(list(run.post_rms), rel=1e-12)
    assert f"{run.pre_rms[-1]:.2f}" in all_text(at) and f"{run.post_rms[-1]:.2f}" in all_text(at)
    # the FLOPs table against the closed forms, written out here
    d, h, mult = int(s["block_flops_d"]), int(s["block_flops_h"]), int(s["block_ff_mult"])
    kind = s["block_ffn"]
    flops = frame(at, "block.flops_n2")
    c_ffn = 6 if kind == "swiglu" else 4
    for n, proj, ffn, lin, n2 in flops[
        [
            "n",
            tr("block.flops_projections"),
            tr("block.flops_ffn"),
            tr("block.flops_linear"),
            tr("block.flops_n2"),
        ]
    ].itertuples(index=False):
        assert proj == 8 * n * d * d and ffn == c_ffn * n * d * mult * d and lin == proj + ffn
        assert n2 == 4 * n * n * d + 6 * h * n * n
    n_star = (8 * d * d + c_ffn * d * mult * d) / (4 * d + 6 * h)
    assert f"{n_star:,.0f}" in all_text(at)


def test_block_page_reports_a_broken_residual_as_an_error(monkeypatch):
    """If the sum did not hold, the page must say so instead of printing its success sentence."""
    monkeypatch.setattr(lab_block, "residual_gap", lambda trace: 0.125)
    at = open_page("app_pages/block.py", block_text="a broken residual check")
    assert tr("block.residual_broken", diff="1.25e-01") in [e.value for e in at.error]
    assert not any("Pre-LN" in s.value for s in at.success)


# --- inference --------------------------------------------------------------------------------------


def test_inference_page_numbers():
    text = "the cat sat on the mat"
    at = open_page("app_pages/inference.py", inference_text=text, inference_tables=True)
    no_exception(at)
    s = at.session_state
    d, h, g, seed = (
        int(s["inference_d_model"]),
        int(s["inference_heads"]),
        int(s["inference_kv_heads"]),
        int(s["inference_seed"]),
    )
    lab = lab_inference.inference_lab(lab_inference.InferenceSettings(text, d, h, g, seed))
    n, d_k = len(lab.tokens), d // h
    assert metric(at, tr("inference.cache_gap")) == f"{lab.cache_gap:.3g}" and lab.cache_gap < 1e-10
    assert tr("inference.cache_equal", n=n, h=h, diff=f"{lab.cache_gap:.3g}") in [x.value for x in at.success]
    steps = frame(at, "inference.col_cache_len")
    assert list(steps[tr("inference.col_step")]) == list(range(n))
    assert list(steps[tr("inference.col_token")]) == text.split()
    assert list(steps[tr("inference.col_cache_len")]) == list(range(1, n + 1))
    assert list(steps[tr("inference.col_new_row")]) == [1] * n
    flops = frame(at, "inference.series_recompute")
    for n_ctx, cached, recompute in zip(
        flops.index,
        flops[tr("inference.series_cached")],
        flops[tr("inference.series_recompute")],
        strict=True,
    ):
        proj = 2 * d * (h + 2 * g) * d_k
        assert cached == proj + 4 * h * n_ctx * d_k
        assert recompute == n_ctx * proj + 4 * h * n_ctx * n_ctx * d_k
    # the calculator: 2 · layers · n · g · d_k · bytes, for the preset the page starts with
    from attention_core.labs.inference import DTYPE_BYTES, PRESETS  # noqa: PLC0415 (the page's preset table)

    shape, n_calc = PRESETS[int(s["inference_preset"])], int(s["inference_calc_n"])
    per, g_calc = DTYPE_BYTES[s["inference_dtype"]], int(s["inference_calc_kv"])
    size = 2 * shape.layers * n_calc * g_calc * shape.head_dim * per
    mha = 2 * shape.layers * n_calc * shape.heads * shape.head_dim * per
    assert metric(at, tr("inference.size_metric", g=g_calc)) == format_bytes(size)
    assert metric(at, tr("inference.mha_metric", h=shape.heads)) == format_bytes(mha)
    assert metric(at, tr("inference.saved_metric")) == format_bytes(mha - size)
    assert f"{g_calc / shape.heads:.3g}" in all_text(at)
    causal, bidi = f"{lab.max_change_causal:.3g}", f"{lab.max_change_bidirectional:.3g}"
    assert metric(at, tr("inference.change_causal")) == causal == "0"
    assert metric(at, tr("inference.change_bidirectional")) == bidi and lab.max_change_bidirectional > 1e-3
    changes = frame(at, "inference.series_bidirectional")
    assert list(changes.index) == text.split()[:-1]
    assert list(changes[tr("inference.series_causal")]) == [0.0] * (n - 1)
    assert list(changes[tr("inference.series_bidirectional")]) == pytest.approx(
        list(lab.change_bidirectional)
    )


def test_inference_page_reports_a_broken_cache_as_an_error(monkeypatch):
    real = lab_inference.append_kv

    def forgetful(cache, K_new, V_new):  # keeps the last two tokens only
        full = real(cache, K_new, V_new)
        return type(full)(K=full.K[:, -2:], V=full.V[:, -2:])

    monkeypatch.setattr(lab_inference, "append_kv", forgetful)
    at = open_page("app_pages/inference.py", inference_text="a cache that forgets its first keys")
    gap = float(metric(at, tr("inference.cache_gap")))
    assert gap > 1e-3
    assert tr("inference.cache_differs", diff=f"{gap:.3g}") in [e.value for e in at.error]
    assert not at.success or all("cache" not in x.value.lower() for x in at.success)


# --- cost: sliding window, linear attention, exact or not ------------------------------------------


def test_cost_page_window_and_linear_numbers():
    text = "one two three four five six"
    at = open_page("app_pages/cost.py", cost_win_n=256, cost_window=32, cost_win_block=64, cost_text=text)
    no_exception(at)
    n, w, block = 256, 32, 64
    chk = lab_efficient.window_check(n, w, block)
    assert metric(at, tr("cost.win_diff")) == f"{chk.max_abs_diff:.2e}" and chk.max_abs_diff <= 1e-10
    assert metric(at, tr("cost.win_model_diff")) == f"{chk.diff_to_causal:.2e}"
    tiles = 4 * 4

    def needs(q, k):  # some query of tile q sees some key of tile k: i − w < j ≤ i
        return any(
            i - w < j <= i
            for i in range(q * block, (q + 1) * block)
            for j in range(k * block, (k + 1) * block)
        )

    computed = sum(1 for q in range(4) for k in range(4) if needs(q, k))
    assert metric(at, tr("cost.check_tiles")) == f"{computed} / {tiles}"
    formed = sum(block * block for q in range(4) for k in range(4) if chk.grid[q, k])  # 256 = 4 · 64
    assert metric(at, tr("cost.win_scores")) == f"{formed / (n * n):.1%}"
    needed = sum(min(i + 1, w) for i in range(n))
    assert tr("cost.win_counts", needed=f"{needed:,}", formed=f"{formed:,}", full=f"{n * n:,}") in all_text(
        at
    )
    lin = lab_efficient.linear_lab(text)
    assert metric(at, tr("cost.lin_diff")) == f"{lin.recurrence_vs_quadratic:.2e}"
    assert metric(at, tr("cost.lin_state")) == f"{lin.d_k} × {lin.d_k}"
    assert metric(at, tr("cost.lin_weight_diff")) == f"{lin.weight_diff:.3f}"
    tops = tr("cost.lin_sharpness", soft=f"{lin.softmax_top.mean():.3f}", lin=f"{lin.linear_top.mean():.3f}")
    assert tops in all_text(at)
    from attention_ui.cost.efficient_view import LINEAR_D as d  # noqa: PLC0415

    cross = next(
        m for m in range(1, 10**6) if m * (4 * d * d + 3 * d + d) < attention_flops(m, d, d).total
    )  # the first n where the recurrence is cheaper, by counting up
    per_score = attention_flops(1, d, d).total  # causal softmax: only the m(m + 1)/2 allowed scores
    cross_causal = next(
        m for m in range(1, 10**6) if m * (4 * d * d + 3 * d + d) < m * (m + 1) // 2 * per_score
    )
    assert tr("cost.lin_crossover", d=d, n=f"{cross:,}", n_causal=f"{cross_causal:,}") in all_text(at)
    from attention_ui.cost.efficient_view import EXACT_N, EXACT_WINDOW  # noqa: PLC0415

    exact = frame(at, "cost.col_exact_diff")
    rows = lab_efficient.exactness(EXACT_N, EXACT_WINDOW)
    assert list(exact[tr("cost.col_exact_diff")]) == [f"{r.max_abs_diff:.2e}" for r in rows]
    assert [float(v) <= 1e-10 for v in exact[tr("cost.col_exact_diff")]] == [True, False, False]
    assert math.isfinite(float(exact[tr("cost.col_exact_diff")].iloc[2]))
