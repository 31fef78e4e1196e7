"""The positions and inference labs' figure builders, read through fig.data / fig.layout: values in
the right traces, hostile labels escaped, the learned line's gap past L, the arrows' geometry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.labs import inference as li
from attention_core.labs import positions as lp
from attention_ui.figures.base import AxisText
from attention_ui.inference import figures as fi
from attention_ui.positions import figures as fp

HOSTILE = "<img src=x onerror=alert(1)>"
NAMES = {"sinusoidal": "sin", "learned": "table", "rope": "RoPE"}


def test_row_gap_figure_keeps_exact_values_and_escapes_tokens():
    fig = fp.row_gap_figure(
        ["a", HOSTILE], {"off": [0.0, 3e-16], "on": [0.5, 0.25]}, axes=AxisText("t", "gap")
    )
    assert [tr.name for tr in fig.data] == ["off", "on"]
    assert list(fig.data[0].customdata) == [0.0, 3e-16]  # hover shows the exact value
    assert fig.data[0].y[0] == pytest.approx(1e-17)  # a zero is drawn at the floor of the log axis
    assert list(fig.data[1].y) == [0.5, 0.25]
    assert fig.layout.yaxis.type == "log"
    assert "<img" not in " ".join(fig.layout.xaxis.ticktext)


def test_scheme_lines_leave_a_gap_where_the_table_ends_and_mark_L():
    lab = lp.positions_lab(lp.PositionsSettings("a b c", d_model=8, seen=10))
    fig = fp.scheme_lines_figure(
        lab.extrapolation_positions,
        lab.extrapolation,
        NAMES,
        axes=AxisText("p", "s"),
        seen=10,
        seen_label="L",
    )
    by_name = {tr.name: tr for tr in fig.data}
    learned = by_name["table"].y
    assert all(v is not None for v in learned[:10]) and all(v is None for v in learned[10:])
    assert by_name["RoPE"].y[25] == pytest.approx(lab.extrapolation["rope"][25])
    assert fig.layout.shapes[0].x0 == 9.5  # the line between position L-1 and L
    assert fig.layout.annotations[0].text == "L"


def test_rope_arrow_figure_draws_one_arrow_per_position_of_equal_length():
    path = np.array([[math.cos(k * 0.5) * 2, math.sin(k * 0.5) * 2] for k in range(9)])
    fig = fp.rope_arrow_figure(path, list(range(9)), position_label="p = {p}")
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    assert len(arrows) == 9
    assert all(a.ax == 0 and a.ay == 0 for a in arrows)  # every arrow starts at the origin
    assert [round(math.hypot(a.x, a.y), 12) for a in arrows] == [2.0] * 9
    labels = [tr.text[0] for tr in fig.data[1:]]
    assert labels[3] == "p = 3"
    assert fig.layout.xaxis.scaleanchor == "y"  # a circle looks like a circle


def test_flops_figure_is_log_log_with_exact_counts():
    curve = li.flops_curve([1, 2, 4, 8], 16, 4, 2)
    fig = fi.flops_figure(
        curve.ns, {"cache": curve.cached, "again": curve.recompute}, axes=AxisText("n", "F")
    )
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert list(fig.data[0].y) == list(curve.cached) and list(fig.data[1].y) == list(curve.recompute)


def test_cache_bars_highlight_the_chosen_g():
    sizes = [li.kv_cache_bytes(30, 100, g, 64, 2) for g in (1, 3, 9)]
    fig = fi.cache_bars_figure((1, 3, 9), sizes, 3, axes=AxisText("g", "B"))
    bar = fig.data[0]
    assert list(bar.x) == ["1", "3", "9"] and list(bar.y) == sizes
    assert bar.marker.color[1] == fi.CURRENT_COLOR and bar.marker.color[0] == fi.BAR_COLOR
    assert sizes[2] == 6_912_000  # 2·30·100·9·64·2 by hand
    assert bar.text[2] == "6.59 MiB"  # 6,912,000 / 2²⁰ = 6.5918…


def test_grouped_heads_titles_name_the_kv_head():
    lab = li.inference_lab(li.InferenceSettings("a b " + HOSTILE, d_model=8, heads=4, kv_heads=2))
    fig = fi.grouped_heads_figure(
        lab.weights, lab.tokens, lab.kv_head_of, title="q{h} -> KV {kv}", allowed=lab.causal_allowed
    )
    titles = [a.text for a in fig.layout.annotations[:4]]
    assert titles == ["q0 -&gt; KV 0", "q1 -&gt; KV 0", "q2 -&gt; KV 1", "q3 -&gt; KV 1"]
    assert titles and fig.layout.annotations[0].font.color != fig.layout.annotations[2].font.color
    heat = [tr for tr in fig.data if tr.name == "values"]
    assert len(heat) == 4


def test_prefix_change_bars():
    fig = fi.prefix_change_figure(
        ["a", "b"], {"causal": [0.0, 0.0], "bidi": [0.3, 0.1]}, axes=AxisText("t", "c")
    )
    assert list(fig.data[0].y) == [0.0, 0.0] and list(fig.data[1].y) == [0.3, 0.1]
    assert fig.layout.barmode == "group"


def test_the_rotation_plane_and_the_stage_bars_say_what_their_axes_are() -> None:
    from attention_ui.block import figures as fbl
    from attention_ui.positions import figures as fps

    path = np.array([[1.0, 0.0], [0.54, 0.84]])
    fig = fps.rope_arrow_figure(path, [0, 1], position_label="p = {p}", axes=AxisText("c 4", "c 5"))
    assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == ("c 4", "c 5")
    bars = fbl.stage_figure(["x (入力)", "y"], [1.0, 2.0], [True, False], axes=AxisText("RMS", "stage"))
    assert (bars.layout.xaxis.title.text, bars.layout.yaxis.title.text) == ("RMS", "stage")
    assert all(trace.orientation == "h" for trace in bars.data)  # the stage names read across, not turned
