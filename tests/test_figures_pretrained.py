"""The pretrained view's pure parts, as data: the 6×12 overview figure and the display-trace helpers.

Model-free: the attention tensors are hand-made (random or hand-written), so the expected panel
contents are the inputs themselves, indexed independently of the builder's loop; hidden-token
traces are checked against explicit row/column deletion with ``np.delete``.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from attention_core import AttentionParams, attend
from attention_core.models.minilm import (
    displayed_attentions,
    model_config,
    special_positions,
    without_positions,
)
from attention_ui.playground.pretrained_figures import (
    CELL_TARGETS_MAX_TOKENS,
    axis_name,
    heads_overview,
    panel_of_point,
    with_selection,
)


def random_weights(layers: int, heads: int, n: int, seed: int = 0) -> np.ndarray:
    """Row-stochastic ``[layers, heads, n, n]`` tensors, every panel different."""
    rng = np.random.default_rng(seed)
    a = rng.random((layers, heads, n, n))
    return a / a.sum(axis=-1, keepdims=True)


def panel_z(trace) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in row] for row in trace.z], dtype=float)


def domain(fig, index: int, axis: str) -> tuple[float, float]:
    return tuple(fig.layout[axis_name(index, axis)].domain)


# ----------------------------------------------------------------------------------------------
# heads_overview
# ----------------------------------------------------------------------------------------------


def test_a_click_anywhere_in_a_panel_names_that_panel():
    """Clickable overview: every panel has its own invisible points, on the same axes as its map, and
    the point's trace number gives back (layer, head); the hover moves to the points unchanged."""
    tokens = ["[CLS]", "a", "b", "[SEP]", "[PAD]"]
    A = random_weights(2, 3, 5)
    allowed = np.ones((5, 5), bool)
    allowed[:, 4] = False  # the [PAD] key is masked
    fig = heads_overview(A, tokens, allowed=allowed, clickable=True, click_hint="click me")
    heat, points = fig.data[:6], fig.data[6:]
    assert len(points) == 6 and all(p.type == "scatter" for p in points)
    assert fig.layout.hoverdistance == -1 and "select" in fig.layout.clickmode
    for layer in range(2):
        for head in range(3):
            curve = 6 + layer * 3 + head
            p = fig.data[curve]
            assert panel_of_point({"curve_number": curve, "x": p.x[0], "y": p.y[0]}, 2, 3) == (layer, head)
            assert (p.xaxis, p.yaxis) == (heat[layer * 3 + head].xaxis, heat[layer * 3 + head].yaxis)
            assert len(p.x) == 5 * 4  # every allowed cell, none in the masked column
            for x, y, value in zip(p.x, p.y, p.customdata, strict=True):
                row, col = int(y[1 : y.index(" ")]), int(x[1 : x.index(" ")])  # "#i token"
                assert value == pytest.approx(A[layer, head, row, col], abs=5e-5)
            assert f"layer {layer} · head {head}" in p.hovertemplate and "click me" in p.hovertemplate
    assert all(h.hoverinfo == "skip" for h in heat)
    for bad in ({"curve_number": 0}, {"curve_number": 12}, {}, {"curve_number": "x"}):
        assert panel_of_point(bad, 2, 3) is None  # a heatmap, past the end, malformed


def test_long_sentences_get_one_click_target_per_panel():
    n = CELL_TARGETS_MAX_TOKENS + 1
    fig = heads_overview(random_weights(1, 2, n), [f"t{i}" for i in range(n)], clickable=True)
    assert [len(p.x) for p in fig.data[2:]] == [1, 1]
    assert fig.data[2].hovertemplate.startswith("layer 0 · head 0")
    assert (
        len(heads_overview(random_weights(1, 2, n), [f"t{i}" for i in range(n)]).data) == 2
    )  # off by default


def test_overview_has_one_heatmap_per_layer_and_head_with_its_own_weights():
    tokens = ["[CLS]", "the", "cat", "sat", "[SEP]"]
    A = random_weights(6, 12, 5)
    fig = heads_overview(A, tokens)
    assert len(fig.data) == 72
    assert all(tr.type == "heatmap" for tr in fig.data)
    for layer in range(6):
        for head in range(12):
            tr = fig.data[layer * 12 + head]
            np.testing.assert_allclose(panel_z(tr), A[layer, head], atol=5e-5)  # rounded to 4 decimals
            assert tr.coloraxis == "coloraxis"
            assert tr.texttemplate is None and tr.text is None  # no per-cell text
            assert f"layer {layer} · head {head}" in tr.hovertemplate


def test_overview_places_layers_in_rows_top_down_and_heads_in_columns():
    fig = heads_overview(random_weights(6, 12, 3), ["a", "b", "c"])
    for layer in range(6):
        for head in range(12):
            i = layer * 12 + head
            tr = fig.data[i]
            x_ref, y_ref = tr.xaxis, tr.yaxis
            assert x_ref == ("x" if i == 0 else f"x{i + 1}") and y_ref == ("y" if i == 0 else f"y{i + 1}")
            x0, x1 = domain(fig, i, "x")
            y0, y1 = domain(fig, i, "y")
            assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
            if head:  # right of the previous head, same row
                px0, px1 = domain(fig, i - 1, "x")
                assert x0 > px1
                assert domain(fig, i - 1, "y") == (y0, y1)
            if layer:  # below the previous layer, same column
                qy0, qy1 = domain(fig, i - 12, "y")
                assert y1 < qy0
                assert domain(fig, i - 12, "x") == (x0, x1)
            assert fig.layout[axis_name(i, "y")].autorange == "reversed"  # first query on top


def test_overview_shares_one_fixed_0_to_1_colour_scale():
    fig = heads_overview(random_weights(2, 3, 4), list("abcd"))
    assert fig.layout.coloraxis.cmin == 0.0 and fig.layout.coloraxis.cmax == 1.0


def test_overview_hover_names_tokens_even_when_a_word_repeats():
    tokens = ["[CLS]", "the", "cat", "the", "<b>", "[SEP]"]
    fig = heads_overview(random_weights(1, 2, 6), tokens)
    tr = fig.data[0]
    # unique, escaped labels: the two "the" keep their own rows, "<b>" is text, not markup
    assert list(tr.x) == ["#0 [CLS]", "#1 the", "#2 cat", "#3 the", "#4 &lt;b&gt;", "#5 [SEP]"]
    assert list(tr.y) == list(tr.x)
    assert len(set(tr.x)) == 6
    assert "%{y}" in tr.hovertemplate and "%{x}" in tr.hovertemplate


def test_overview_leaves_masked_cells_blank():
    n = 5
    allowed = np.ones((n, n), dtype=bool)
    allowed[:, 3:] = False  # two [PAD] keys
    A = random_weights(2, 2, n)
    fig = heads_overview(A, ["[CLS]", "a", "[SEP]", "[PAD]", "[PAD]"], allowed=allowed)
    for tr in fig.data:
        z = panel_z(tr)
        assert np.isnan(z[:, 3:]).all()
        assert np.isfinite(z[:, :3]).all()
        assert tr.hoverongaps is False
    assert fig.layout.plot_bgcolor == "rgba(0,0,0,0)"  # blank, not a colour of the scale


def test_overview_frames_the_selected_panel_only():
    fig = heads_overview(random_weights(6, 12, 3), ["a", "b", "c"], selected=(2, 7))
    assert len(fig.layout.shapes) == 1
    shape = fig.layout.shapes[0]
    x0, x1 = domain(fig, 2 * 12 + 7, "x")
    y0, y1 = domain(fig, 2 * 12 + 7, "y")
    assert shape.x0 < x0 < x1 < shape.x1 and shape.y0 < y0 < y1 < shape.y1
    # no other panel's centre lies inside the frame
    for i in range(72):
        if i == 2 * 12 + 7:
            continue
        cx, cy = sum(domain(fig, i, "x")) / 2, sum(domain(fig, i, "y")) / 2
        assert not (shape.x0 < cx < shape.x1 and shape.y0 < cy < shape.y1)
    assert not heads_overview(random_weights(6, 12, 3), ["a", "b", "c"], selected=(9, 9)).layout.shapes


def test_overview_titles_name_every_layer_and_head():
    fig = heads_overview(random_weights(6, 12, 2), ["a", "b"], layer_title="層 {layer}", head_title="H{head}")
    texts = [a.text for a in fig.layout.annotations]
    assert texts[:12] == [f"H{h}" for h in range(12)]
    assert texts[12:] == [f"層 {layer}" for layer in range(6)]


def test_overview_serialises_and_is_fast_enough_for_every_rerun():
    A = random_weights(6, 12, 18)
    start = time.perf_counter()
    fig = heads_overview(A, [f"t{i}" for i in range(18)], allowed=np.ones((18, 18), bool))
    spec = json.loads(fig.to_json())
    elapsed = time.perf_counter() - start
    assert len(spec["data"]) == 72
    assert elapsed < 5.0, f"72-panel overview took {elapsed:.2f} s"


@pytest.mark.parametrize("bad", [np.zeros((6, 12, 3)), np.zeros((1, 1, 3, 4))])
def test_overview_rejects_wrong_shapes(bad):
    with pytest.raises(ValueError):
        heads_overview(bad, ["a", "b", "c"])


def test_overview_rejects_a_token_count_that_does_not_match():
    with pytest.raises(ValueError):
        heads_overview(random_weights(1, 1, 3), ["a", "b"])


# ----------------------------------------------------------------------------------------------
# Display-trace helpers
# ----------------------------------------------------------------------------------------------


def small_trace(tokens, n_pad=0, heads=2, d_model=4, seed=1):
    rng = np.random.default_rng(seed)
    n = len(tokens)
    d = d_model // heads
    params = AttentionParams(
        W_Q=rng.normal(size=(heads, d_model, d)),
        W_K=rng.normal(size=(heads, d_model, d)),
        W_V=rng.normal(size=(heads, d_model, d)),
        W_O=rng.normal(size=(heads * d, d_model)),
    )
    keep = np.array([1] * (n - n_pad) + [0] * n_pad, dtype=bool)
    allowed = np.broadcast_to(keep[None, :], (n, n))
    return attend(
        rng.normal(size=(n, d_model)), params, allowed, math.sqrt(d), tokens=tuple(tokens), n_pad=n_pad
    )


def test_special_positions_finds_cls_and_sep_only():
    assert special_positions(["[CLS]", "cls", "[SEP]", "[PAD]", "[UNK]"]) == [0, 2]


def test_without_positions_deletes_rows_and_columns_and_keeps_the_numbers():
    tokens = ("[CLS]", "the", "cat", "[SEP]", "[PAD]", "[PAD]")
    tr = small_trace(tokens, n_pad=2)
    cut = without_positions(tr, [0, 3])
    drop = [0, 3]
    assert cut.tokens == ("the", "cat", "[PAD]", "[PAD]")
    assert cut.n_pad == 2
    np.testing.assert_array_equal(cut.X, np.delete(tr.X, drop, axis=0))
    for name in ("Q", "K", "V", "head_outputs"):
        np.testing.assert_array_equal(getattr(cut, name), np.delete(getattr(tr, name), drop, axis=1))
    for name in ("scores_raw", "scores_scaled", "scores_masked", "weights"):
        expected = np.delete(np.delete(getattr(tr, name), drop, axis=1), drop, axis=2)
        np.testing.assert_array_equal(getattr(cut, name), expected)
    np.testing.assert_array_equal(cut.mask, np.delete(np.delete(tr.mask, drop, 0), drop, 1))
    np.testing.assert_array_equal(cut.concat, np.delete(tr.concat, drop, axis=0))
    np.testing.assert_array_equal(cut.output, np.delete(tr.output, drop, axis=0))
    # the displayed rows no longer sum to 1: the weight [CLS] and [SEP] received is missing
    real_rows = cut.weights[:, :2].sum(axis=-1)
    missing = tr.weights[:, [1, 2]][:, :, [0, 3]].sum(axis=-1)
    np.testing.assert_allclose(real_rows, 1.0 - missing, atol=1e-12)
    assert not cut.weights.flags.writeable


def test_without_positions_with_nothing_to_drop_is_the_same_trace():
    tr = small_trace(("a", "b"))
    assert without_positions(tr, []) is tr
    with pytest.raises(ValueError):
        without_positions(tr, [0, 1])


def test_model_config_is_the_models_shape_with_padding_mask_and_sqrt_scale():
    tr = small_trace(("a", "b", "[PAD]"), n_pad=1, heads=2, d_model=4)
    cfg = model_config(tr, pad=1)
    assert (cfg.d_model, cfg.heads, cfg.head_dim_k, cfg.head_dim_v) == (4, 2, 2, 2)
    assert cfg.mask == "padding" and cfg.pad == 1
    assert cfg.divisor == pytest.approx(math.sqrt(2)) == pytest.approx(tr.divisor)


class _Result:
    """The two things displayed_attentions reads from a PretrainedResult."""

    def __init__(self, traces):
        self.layers = tuple(traces)
        self.tokens = traces[0].tokens

    @property
    def attentions(self):
        return np.stack([t.weights for t in self.layers])


def test_displayed_attentions_hides_specials_in_every_layer():
    tokens = ("[CLS]", "a", "b", "[SEP]", "[PAD]")
    result = _Result([small_trace(tokens, n_pad=1, seed=s) for s in (1, 2, 3)])
    A, labels, allowed = displayed_attentions(result, hide_special=True)
    assert labels == ("a", "b", "[PAD]")
    assert A.shape == (3, 2, 3, 3)
    for layer in range(3):
        full = result.layers[layer].weights
        np.testing.assert_array_equal(A[layer], full[:, [1, 2, 4]][:, :, [1, 2, 4]])
    np.testing.assert_array_equal(allowed[:, 2], [False] * 3)  # the [PAD] key stays masked
    A_all, labels_all, _ = displayed_attentions(result, hide_special=False)
    assert labels_all == tokens and A_all.shape == (3, 2, 5, 5)


def test_with_selection_moves_the_frame_on_a_copy_and_leaves_the_original_alone():
    A = random_weights(6, 12, 3)
    base = heads_overview(A, ["a", "b", "c"])
    moved = with_selection(base, (4, 1))
    assert not base.layout.shapes
    direct = heads_overview(A, ["a", "b", "c"], selected=(4, 1))
    (shape,) = moved.layout.shapes
    assert shape.to_plotly_json() == direct.layout.shapes[0].to_plotly_json()
    assert len(moved.data) == 72
    np.testing.assert_allclose(panel_z(moved.data[49]), A[4, 1], atol=5e-5)
    assert not with_selection(base, None).layout.shapes
