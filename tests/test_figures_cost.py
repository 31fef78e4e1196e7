"""Figure builders of the cost lab, tested as data (fig.data / fig.layout)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.tiled import tiled_attention
from attention_ui.figures.cost import byte_ticks, format_bytes, loglog_figure, tile_grid, tile_grid_figure


@pytest.mark.parametrize(
    ("num", "binary", "text"),
    [(8_388_608, True, "8 MiB"), (8_388_608, False, "8.39 MB"), (2 * 10**12, True, "1.82 TiB"),
     (2 * 10**12, False, "2 TB"), (512, True, "512 B"), (1536, True, "1.5 KiB")],
)  # fmt: skip
def test_format_bytes(num: int, binary: bool, text: str) -> None:
    assert format_bytes(num, binary) == text


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
        x_title="n",
        y_title="bytes",
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


@pytest.mark.parametrize(("n", "block"), [(256, 32), (100, 16), (64, 64), (70, 32)])
@pytest.mark.parametrize("causal", [False, True])
def test_tile_grid_matches_the_tiled_algorithm(n: int, block: int, causal: bool) -> None:
    grid = tile_grid(n, block, causal)
    tiles = math.ceil(n / block)
    assert grid.shape == (tiles, tiles)
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((n, 4)) for _ in range(3))
    run = tiled_attention(Q, K, V, block, block, causal=causal)
    assert int(grid.sum()) == run.tiles_computed
    assert int((grid == 0).sum()) == run.tiles_skipped
    if causal:
        assert int(grid.sum()) == tiles * (tiles + 1) // 2  # on or below the diagonal


def test_tile_grid_figure() -> None:
    fig = tile_grid_figure(256, 64, True, computed="<yes>", skipped="no")
    heat = fig.data[0]
    assert np.array(heat.z).tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    assert heat.customdata[0][1][2] == "no" and heat.customdata[0][0][2] == "&lt;yes&gt;"
    assert heat.customdata[1][2][:2] == ["64–127", "128–191"]
    assert fig.layout.yaxis.autorange == "reversed"
    with pytest.raises(ValueError):
        tile_grid(0, 4, False)
