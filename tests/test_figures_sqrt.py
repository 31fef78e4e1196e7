"""The "Why √d_k" figure builders and score parser, tested as data (no Streamlit, no browser)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_ui.figures.base import AxisText
from attention_ui.scaling import figures as fsq

D_KS = (1, 4, 16, 64)


def test_variance_figure_puts_theory_and_measurements_on_log_axes() -> None:
    measured = np.array([1.1, 3.8, 16.5, 60.0])
    se = np.array([0.02, 0.1, 0.4, 1.5])
    fig = fsq.variance_figure(
        D_KS, measured, se, np.array(D_KS, float), measured_name="measured", theory_name="theory: d_k"
    )
    theory, points = fig.data
    assert list(theory.x) == list(D_KS) and list(theory.y) == [1.0, 4.0, 16.0, 64.0]
    assert list(points.y) == [1.1, 3.8, 16.5, 60.0]
    # Error bars: ±2 standard errors, one per point.
    assert list(points.error_y.array) == pytest.approx([0.04, 0.2, 0.8, 3.0])
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert list(fig.layout.xaxis.tickvals) == list(D_KS)
    assert list(fig.layout.xaxis.ticktext) == ["1", "4", "16", "64"]


def test_scaled_variance_figure_is_linear_and_centred_on_one() -> None:
    fig = fsq.variance_figure(
        D_KS,
        np.array([0.9, 1.05, 1.0, 1.02]),
        np.full(4, 0.05),
        np.ones(4),
        measured_name="m",
        theory_name="t",
        log_y=False,
    )
    assert fig.layout.yaxis.type != "log"
    lo, hi = fig.layout.yaxis.range
    assert lo < 0.8 and hi > 1.15  # every error bar (0.9 − 0.1 … 1.05 + 0.1) fits
    assert (lo + hi) / 2 == pytest.approx(1.0)


def test_variance_figure_escapes_labels_and_checks_lengths() -> None:
    fig = fsq.variance_figure(
        D_KS, np.ones(4), np.ones(4), np.ones(4), measured_name="<b>m</b>", theory_name="a & b"
    )
    assert fig.data[1].name == "&lt;b&gt;m&lt;/b&gt;"
    assert fig.data[0].name == "a &amp; b"
    with pytest.raises(ValueError):
        fsq.variance_figure(D_KS, np.ones(3), np.ones(4), np.ones(4), measured_name="m", theory_name="t")


def test_score_histogram_overlays_two_densities_and_their_normal_curves() -> None:
    rng = np.random.default_rng(1)
    raw = rng.normal(0, 8, size=(500, 4))
    fig = fsq.score_histogram(
        raw, raw / 8, 64, raw_name="raw", scaled_name="scaled", theory_name="normal, variance {var}"
    )
    assert [tr.type for tr in fig.data] == ["histogram", "histogram", "scatter", "scatter"]
    assert all(tr.histnorm == "probability density" for tr in fig.data[:2])
    assert len(fig.data[0].x) == 2000 and len(fig.data[1].x) == 2000
    assert fig.layout.barmode == "overlay"
    assert [tr.name for tr in fig.data[2:]] == ["normal, variance 64", "normal, variance 1"]
    # The N(0, 1) curve peaks at 1/√(2π) next to 0 and the N(0, 64) one 8 times lower.
    for tr, std in ((fig.data[2], 8.0), (fig.data[3], 1.0)):
        x, y = np.array(tr.x), np.array(tr.y)
        assert y.max() == pytest.approx(1 / (std * math.sqrt(2 * math.pi)), rel=1e-3)
        assert abs(x[np.argmax(y)]) < (x[1] - x[0])


def test_versus_dk_figure_has_both_curves_and_the_reference() -> None:
    fig = fsq.versus_dk_figure(
        D_KS,
        np.array([0.2, 0.4, 0.7, 0.9]),
        np.array([0.2, 0.22, 0.23, 0.24]),
        raw_name="raw",
        scaled_name="scaled",
        axes=AxisText("d_k", "max"),
        reference=1 / 16,
        reference_name="uniform",
        y_range=(0.0, 1.05),
    )
    assert len(fig.data) == 3
    assert list(fig.data[0].y) == [0.2, 0.4, 0.7, 0.9]
    assert list(fig.data[1].y) == [0.2, 0.22, 0.23, 0.24]
    assert list(fig.data[2].y) == [0.0625, 0.0625] and list(fig.data[2].x) == [1, 64]
    assert list(fig.layout.yaxis.range) == [0.0, 1.05]
    assert fig.layout.xaxis.type == "log"
    no_ref = fsq.versus_dk_figure(
        D_KS, np.ones(4), np.ones(4), raw_name="r", scaled_name="s", axes=AxisText("d_k", "y")
    )
    assert len(no_ref.data) == 2


def test_weights_bar_figure_labels_each_bar_and_never_prints_a_tiny_weight_as_zero() -> None:
    w = np.array([0.98, 0.0199, 2.5e-4, 0.0])
    fig = fsq.weights_bar_figure([8, 4, -1, -800], w)
    bar = fig.data[0]
    assert list(bar.y) == pytest.approx(list(w))
    assert list(bar.text) == ["0.980", "0.020", "2.5e-04", "0"]
    assert list(fig.layout.xaxis.ticktext) == ["0: s=8", "1: s=4", "2: s=-1", "3: s=-800"]
    assert list(fig.layout.yaxis.range) == [0.0, 1.12]
    with pytest.raises(ValueError):
        fsq.weights_bar_figure([1, 2], np.array([1.0]))


def test_dot_variance_figure_picks_the_arrays_axis_and_colour_of_each_kind() -> None:
    from attention_core.labs.scaling import dot_variance_experiment

    res = dot_variance_experiment((1, 4, 16), samples=200, seed=0)
    raw = fsq.dot_variance_figure(res, False, measured_name="m", theory_name="d_k")
    scaled = fsq.dot_variance_figure(res, True, measured_name="m", theory_name="1")
    assert list(raw.data[0].y) == [1.0, 4.0, 16.0] and list(scaled.data[0].y) == [1.0, 1.0, 1.0]
    assert (
        list(raw.data[1].y) == res.raw_variance.tolist()
        and list(scaled.data[1].y) == res.scaled_variance.tolist()
    )
    assert raw.layout.yaxis.type == "log" and scaled.layout.yaxis.type != "log"
    assert raw.data[1].marker.color == fsq.RAW_COLOR and scaled.data[1].marker.color == fsq.SCALED_COLOR
