"""Figure builders of the look-alikes lab, tested as data (traces, coordinates, escaped text)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.labs.lookalikes import rnn_steps_illustration
from attention_ui.lookalikes.figures import (
    ATTENTION_COLOR,
    IDLE_COLOR,
    RNN_COLOR,
    CostText,
    PathText,
    cost_figure,
    path_figure,
)


def trace(fig, name):
    found = [t for t in fig.data if t.name == name]
    assert len(found) == 1, [t.name for t in fig.data]
    return found[0]


def test_path_highlights_exactly_the_links_between_i_and_j() -> None:
    ill = rnn_steps_illustration(10, 7, 3)
    fig = path_figure(10, 7, 3, ill.rnn_hidden_states, ill.attention_path_length)
    path = trace(fig, "rnn_path")
    assert list(path.x) == [3, 4, 5, 6, 7]  # 4 links between 5 hidden states
    nodes = trace(fig, "rnn_nodes")
    assert [c == RNN_COLOR for c in nodes.marker.color] == [3 <= k <= 7 for k in range(10)]
    att_nodes = trace(fig, "attention_nodes")
    assert [c for c in att_nodes.marker.color].count(ATTENTION_COLOR) == 2
    assert att_nodes.marker.color[0] == IDLE_COLOR
    arc = trace(fig, "attention_arc")
    assert arc.x[0] == pytest.approx(7) and arc.x[-1] == pytest.approx(3)
    assert arc.y[0] == pytest.approx(0) and arc.y[-1] == pytest.approx(0) and max(arc.y) > 0.3
    # all 9 recurrent links are drawn (grey), separated by None gaps
    links = trace(fig, "rnn_links")
    assert sum(v is None for v in links.x) == 9


def test_path_same_position_has_no_arc_and_counts_are_in_the_labels() -> None:
    fig = path_figure(5, 2, 2, (2,), 0, PathText(rnn_steps="{steps} hops", attention_steps="{steps} jumps"))
    assert "attention_arc" not in [t.name for t in fig.data]
    texts = [a.text for a in fig.layout.annotations]
    assert any("0 hops" in s for s in texts) and any("0 jumps" in s for s in texts)


def test_path_escapes_labels_and_rejects_bad_positions() -> None:
    fig = path_figure(3, 0, 2, (0, 1, 2), 1, PathText(rnn="<b>RNN</b> & co"))
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert "&lt;b&gt;RNN&lt;/b&gt; &amp; co" in texts
    with pytest.raises(ValueError):
        path_figure(3, 0, 3, (0,), 1)


def test_cost_curves_cross_at_n_equals_d() -> None:
    d = 64
    ns = np.array([8.0, 16, 32, 64, 128, 256])
    att, rnn = ns**2 * d, ns * d**2
    fig = cost_figure(ns, att, rnn, d, 16, CostText(crossing="n = d"))
    a, r, chosen = fig.data
    assert list(a.y) == list(att) and list(r.y) == list(rnn)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    # the vertical line marks n = d, where the two curves meet
    (line,) = fig.layout.shapes
    assert line.x0 == d == line.x1
    k = list(ns).index(d)
    assert a.y[k] == r.y[k]
    # the chosen n = 16 is marked on both curves; there attention is the smaller one (n < d)
    assert list(chosen.x) == [16, 16] and chosen.y[0] == 16**2 * d < chosen.y[1] == 16 * d**2


def test_cost_figure_rejects_mismatched_arrays() -> None:
    with pytest.raises(ValueError):
        cost_figure(np.arange(1, 4), np.arange(1, 3), np.arange(1, 4), 2, 1)
