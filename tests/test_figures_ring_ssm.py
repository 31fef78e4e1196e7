"""Figure builders of the ring attention and state-space sections, tested as data."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.labs import ring
from attention_ui.cost import ring_figures as fr
from attention_ui.figures.base import AxisText
from attention_ui.lookalikes import ssm_figures as fs


def test_schedule_figure_colours_folded_blocks_and_numbers_cells() -> None:
    r = ring.ring_attention(*np.random.default_rng(0).standard_normal((3, 12, 2)), 3, causal=True)
    words = dict(block_word="block", computed_word="in", skipped_word="<skip>")
    fig = fr.schedule_figure(r.schedule, r.computed, axes=AxisText("step", "device"), **words)
    heat = fig.data[0]
    assert np.array(heat.z).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert np.array(heat.text).tolist() == [[0, 2, 1], [1, 0, 2], [2, 1, 0]]
    assert heat.customdata[0][1][1] == "&lt;skip&gt;"  # escaped
    assert fig.layout.yaxis.autorange == "reversed"
    big = fr.schedule_figure(np.zeros((16, 16), int), np.ones((16, 16), bool), axes=AxisText("", ""), **words)
    assert big.data[0].text is None  # too many cells for numbers
    with pytest.raises(ValueError):
        fr.schedule_figure(np.zeros((2, 3)), np.zeros((2, 3)), axes=AxisText("", ""), **words)


def test_running_state_figure_two_panels_and_neg_inf_left_out() -> None:
    fig = fr.running_state_figure(
        [-np.inf, 1.0, 2.0],
        [0.0, 1.0, 1.5],
        [2, 1, 0],
        x_title="t",
        max_title="m",
        denom_title="l",
        block_word="b",
    )
    assert len(fig.data) == 2
    assert list(fig.data[0].y) == [None, 1.0, 2.0]
    assert list(fig.data[1].customdata) == [2, 1, 0]
    with pytest.raises(ValueError):
        fr.running_state_figure(
            [1.0], [1.0, 2.0], [0], x_title="", max_title="", denom_title="", block_word=""
        )


def test_load_figure_one_bar_group_per_series() -> None:
    fig = fr.load_figure({"a": [1, 2], "b & c": [3, 4]}, axes=AxisText("device", "pairs"))
    assert [tr.name for tr in fig.data] == ["a", "b &amp; c"]
    assert list(fig.data[1].y) == [3.0, 4.0] and fig.layout.barmode == "group"


def test_past_weights_and_steps_figures() -> None:
    fig = fs.past_weights_figure(
        ["a", "<b>"], {"att": [0.5, 0.5], "ssm": [-0.1, 0.3]}, axes=AxisText("s", "w")
    )
    assert list(fig.data[0].x) == ["0: a", "1: &lt;b&gt;"]
    assert list(fig.data[1].y) == [-0.1, 0.3]
    assert fig.layout.shapes[0].y0 == 0  # the zero line
    with pytest.raises(ValueError):
        fs.past_weights_figure(["a"], {"x": [1.0, 2.0]}, axes=AxisText("", ""))
    steps = fs.steps_figure(["a", "b"], [0.2, 0.9], 0.5, axes=AxisText("token", "Δ"), fixed_label="fixed")
    assert list(steps.data[0].y) == [0.2, 0.9] and steps.layout.shapes[0].y0 == 0.5
