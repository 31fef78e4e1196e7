"""The "Masks" figure builders, tested as data (no Streamlit, no browser)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.labs.masks import ROUNDING_LEVEL
from attention_ui.masks import figures as fmk

TOKENS = ["the", "cat", "sat", "on"]


def test_sci_keeps_exact_zero_apart_from_tiny_numbers() -> None:
    assert fmk.sci(0.0) == "0"
    assert fmk.sci(0.0, "0 exactly") == "0 exactly"
    assert fmk.sci(4.4e-16) == "4.4e-16"
    assert fmk.sci(0.13) == "1.3e-01"
    assert fmk.sci(-0.0) == "0"


def test_panels_figure_one_panel_per_matrix_with_its_own_mask() -> None:
    causal = np.tril(np.ones((4, 4), dtype=bool))
    full = np.ones((4, 4), dtype=bool)
    w = np.full((4, 4), 0.25)
    fig = fmk.panels_figure(
        [w, w, w], ["a", "b", "<c>"], TOKENS, kind="weights", allowed=[causal, full, causal]
    )
    values = [tr for tr in fig.data if tr.name == "values"]
    overlays = [tr for tr in fig.data if tr.name == "masked"]
    assert len(values) == 3 and len(overlays) == 2  # the full mask has nothing to grey out
    # Weight panels share one 0..1 colour axis.
    assert all(tr.coloraxis == "coloraxis" for tr in values)
    assert fig.layout.coloraxis.cmin == 0.0 and fig.layout.coloraxis.cmax == 1.0
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["a", "b", "&lt;c&gt;"]
    # The overlay marks exactly the 6 cells above the diagonal.
    overlay = np.array([[v is not None for v in row] for row in overlays[0].z])
    assert overlay.sum() == 6 and not overlay[np.tril_indices(4)].any()
    # Rows keep their token labels, row 0 on top.
    assert list(fig.layout.yaxis.ticktext) == TOKENS and fig.layout.yaxis.autorange == "reversed"


def test_mask_panels_grey_out_exactly_the_masked_cells() -> None:
    causal = np.tril(np.ones((4, 4), dtype=bool))
    fig = fmk.mask_panels_figure([causal, np.ones((4, 4), dtype=bool)], ["causal", "none"], TOKENS)
    values = [tr for tr in fig.data if tr.name == "values"]
    overlays = [tr for tr in fig.data if tr.name == "masked"]
    assert len(values) == 2 and len(overlays) == 1  # "none" masks nothing
    assert all(v is None or v == 0 for tr in values for row in tr.z for v in row)  # the light "0" of M
    overlay = np.array([[v is not None for v in row] for row in overlays[0].z])
    assert np.array_equal(overlay, ~causal)


def test_panels_figure_checks_its_inputs() -> None:
    with pytest.raises(ValueError):
        fmk.panels_figure([np.zeros((4, 4))], ["a", "b"], TOKENS)
    with pytest.raises(ValueError):
        fmk.panels_figure([np.zeros((3, 3))], ["a"], TOKENS)
    with pytest.raises(ValueError):
        fmk.panels_figure([np.zeros((4, 4))] * 2, ["a", "b"], TOKENS, allowed=[np.ones((4, 4), bool)])


def test_leakage_bars_draw_exact_zeros_as_markers_and_the_rest_as_bars() -> None:
    moved = {
        "correct": np.array([0.0, 0.0, 0.0, 0.7]),
        "zero_values": np.array([0.03, 0.1, 0.13, 0.7]),
        "renormalise": np.array([0.0, 3.3e-16, 4.4e-16, 0.7]),
    }
    names = {"correct": "right", "zero_values": "zero V", "renormalise": "renorm"}
    fig = fmk.leakage_bars(moved, names, TOKENS, position=3, zero_label="0 exactly")
    by = {(tr.meta, tr.type): tr for tr in fig.data}
    # Only positions before 3 are shown.
    assert list(by[("zero_values", "bar")].x) == ["#0 the", "#1 cat", "#2 sat"]
    assert list(by[("zero_values", "bar")].y) == [0.03, 0.1, 0.13]
    assert list(by[("zero_values", "bar")].text) == ["3.0e-02", "1.0e-01", "1.3e-01"]
    # The correct method: no bar height at all, three "0 exactly" markers.
    assert list(by[("correct", "bar")].y) == [None, None, None]
    assert list(by[("correct", "scatter")].text) == ["0 exactly"] * 3
    assert by[("correct", "bar")].showlegend is False and by[("zero_values", "bar")].showlegend is True
    assert ("zero_values", "scatter") not in by
    # Renormalise: one exact zero (marker) and two rounding-level bars, in scientific notation.
    assert list(by[("renormalise", "scatter")].x) == ["#0 the"]
    assert list(by[("renormalise", "bar")].text) == ["", "3.3e-16", "4.4e-16"]
    # Log axis from the floor, so 1e-16 is visibly above an exact zero.
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.yaxis.range[0] == pytest.approx(math.log10(fmk.LOG_FLOOR))
    assert fig.layout.shapes[0].y0 == ROUNDING_LEVEL
    with pytest.raises(ValueError):
        fmk.leakage_bars(moved, names, TOKENS, position=0)


def test_leakage_heatmap_separates_exact_zero_cells() -> None:
    moved = np.array(
        [
            [0.5, 0.2, 0.1, 0.3],
            [0.0, 0.4, 0.2, 0.1],
            [0.0, 0.0, 0.3, 0.1],
            [1e-16, 0.0, 0.0, 0.2],
        ]
    )
    fig = fmk.leakage_heatmap(moved, TOKENS, zero_label="0")
    colours, zeros = fig.data[:2]  # (a third trace carries the white numbers on dark cells)
    z = np.array([[np.nan if v is None else v for v in row] for row in colours.z])
    assert z[0, 0] == pytest.approx(math.log10(0.5))
    assert z[3, 0] == pytest.approx(-16.0)
    assert np.isnan(z[1, 0])  # an exact zero is not on the colour scale …
    zero_cells = np.array([[v is not None for v in row] for row in zeros.z])
    assert zero_cells.sum() == 5  # … it is a cell of the separate "exact zero" trace
    assert zeros.text[1][0] == "0" and zeros.text[3][0] == ""
    # the number is printed once, black on a light cell or (here, dark Inferno) white in the third trace
    printed = [tr.text[3][0] for tr in fig.data if tr.name != "exact zero"]
    assert sorted(printed) == ["", "1.0e-16"] and fig.data[2].textfont.color == "#ffffff"
    assert colours.zmin == -18.0 and colours.zmax == 1.0
    assert fig.layout.yaxis.autorange == "reversed"
    with pytest.raises(ValueError):
        fmk.leakage_heatmap(np.zeros((3, 3)), TOKENS)
