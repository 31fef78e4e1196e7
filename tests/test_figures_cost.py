"""Figure builders of the cost lab, tested as data (fig.data / fig.layout)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.labs.cost import format_bytes
from attention_core.tiled import tile_grid
from attention_ui.figures.base import AxisText
from attention_ui.figures.cost import byte_ticks, loglog_figure, tile_grid_figure


def test_byte_ticks_cover_the_range_with_whole_units() -> None:
    vals, text = byte_ticks(3 * 2**20, 5 * 2**50)  # 3 MiB … 5 PiB: wide range, ×32 steps
    assert 2**20 * 32 in vals and 2**30 in vals and 2**40 in vals
    assert text[vals.index(2**30)] == "1 GiB"
    assert all(3 * 2**20 / 2 <= v <= 5 * 2**50 * 2 for v in vals)
    assert 4 * 2**30 not in vals
    vals, text = byte_ticks(3 * 2**20, 5 * 2**40)  # 3 MiB … 5 TiB: ×4 steps
    assert [t for t in text if t.endswith("GiB")] == ["1 GiB", "4 GiB", "16 GiB", "64 GiB", "256 GiB"]
    vals, text = byte_ticks(600 * 2**10, 160 * 2**20)  # under one unit's span: ×2 steps
    assert [t for t in text if t.endswith("MiB")] == [f"{2**k} MiB" for k in range(9)]
    with pytest.raises(ValueError):
        byte_ticks(0, 10)


def test_loglog_figure_lines_axes_and_reference() -> None:
    x = [128, 256, 512]
    fig = loglog_figure(
        x,
        {"<direct>": [1e6, 4e6, 1.6e7], "tiled": [5e5, None, 7e5]},
        axes=AxisText("n", "bytes"),
        bytes_axis=True,
        reference={"80 GB": 8e10},
        x_ticks=x,
    )
    assert [tr.name for tr in fig.data] == ["&lt;direct&gt;", "tiled"]
    assert list(fig.data[1].y) == [5e5, None, 7e5]  # a missing value leaves a gap
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert list(fig.layout.xaxis.ticktext) == ["128", "256", "512"]
    assert "1 MiB" in fig.layout.yaxis.ticktext
    assert fig.layout.shapes[0].y0 == 8e10
    # Annotations on a log axis are placed in log10 units.
    assert fig.layout.annotations[0].y == pytest.approx(math.log10(8e10))
    assert fig.data[0].customdata[0] == format_bytes(1e6)
    with pytest.raises(ValueError):
        loglog_figure(x, {"a": [1, 2]})
    with pytest.raises(ValueError):
        loglog_figure(x, {})


def test_tile_grid_figure() -> None:
    fig = tile_grid_figure(tile_grid(256, 256, 64, 64, causal=True), 256, 64, computed="<yes>", skipped="no")
    heat = fig.data[0]
    assert np.array(heat.z).tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    assert heat.customdata[0][1][2] == "no" and heat.customdata[0][0][2] == "&lt;yes&gt;"
    assert heat.customdata[1][2][:2] == ["64–127", "128–191"]
    assert fig.layout.yaxis.autorange == "reversed"
