"""Figure builders for the "Why √d_k" lab: arrays and translated labels in, ``go.Figure`` out.

Pure (no Streamlit), so every chart is tested as data. The d_k axis is logarithmic base 2 with
ticks at the measured d_k values; curves that are compared ("unscaled" vs "÷√d_k") always use the
same two colours, from the colour-vision-friendly Okabe–Ito palette.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_ui.figures.base import LEGEND_ABOVE, LOG_DECADES, AxisText, escape_label

RAW_COLOR = "#D55E00"  # vermilion: unscaled q·k
SCALED_COLOR = "#0072B2"  # blue: q·k / √d_k
THEORY_COLOR = "#555555"  # grey: what the maths predicts
ERROR_BAR_SE = 2.0  # error bars span ± this many standard errors (≈ 95 %)

# The charts' English axis words (pages pass translated ones).
VARIANCE_AXES = AxisText("d_k", "variance")
HISTOGRAM_AXES = AxisText("score", "density")
ROW_AXES = AxisText("key", "weight")


def _dk_axis(d_ks: Sequence[int], axes: AxisText) -> dict:
    return axes.x_axis(type="log", tickmode="array", tickvals=list(d_ks), ticktext=[str(d) for d in d_ks])


def _named(x: list, y: list, name: str, hover: str, **style) -> go.Scatter:
    """A trace named ``name`` (escaped) whose hover box shows ``hover`` with that name beside it,
    so a hovered point says which curve it is on."""
    label = escape_label(name)
    return go.Scatter(x=x, y=y, name=label, hovertemplate=f"{hover}<extra>{label}</extra>", **style)


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    # Title on top, then the legend (which may wrap to two lines in a narrow column), then the plot.
    fig.update_layout(
        title=dict(text=escape_label(title), y=0.98, yanchor="top", x=0.0, xanchor="left") if title else None,
        height=height,
        margin=dict(l=10, r=10, t=95 if title else 50, b=10),
        legend=LEGEND_ABOVE,
        plot_bgcolor="rgba(0,0,0,0)",
    )
    fig.update_xaxes(showgrid=True, gridcolor="#e5e5e5")
    fig.update_yaxes(showgrid=True, gridcolor="#e5e5e5")
    return fig


def variance_figure(
    d_ks: Sequence[int],
    measured: np.ndarray,
    standard_error: np.ndarray,
    expected: np.ndarray,
    *,
    measured_name: str,
    theory_name: str,
    axes: AxisText = VARIANCE_AXES,
    log_y: bool = True,
    color: str = RAW_COLOR,
    height: int = 360,
) -> go.Figure:
    """Measured variance per d_k (markers, ± ``ERROR_BAR_SE`` standard errors) beside the theory line.

    ``log_y=True`` for Var(q·k) (the line y = d_k is then straight), ``False`` for the scaled
    variance (a flat line at 1). Trace 0 is the theory line, trace 1 the measurements.
    """
    d_ks = [int(d) for d in d_ks]
    measured = np.asarray(measured, dtype=float)
    se = np.asarray(standard_error, dtype=float)
    expected = np.asarray(expected, dtype=float)
    if not (len(d_ks) == measured.size == se.size == expected.size):
        raise ValueError("one measured value, error and expectation per d_k is needed")
    fig = go.Figure()
    fig.add_trace(
        _named(
            d_ks,
            expected.tolist(),
            theory_name,
            "d_k = %{x}<br>%{y:.4g}",
            mode="lines",
            line=dict(color=THEORY_COLOR, dash="dash", width=2),
        )
    )
    fig.add_trace(
        _named(
            d_ks,
            measured.tolist(),
            measured_name,
            "d_k = %{x}<br>%{y:.4g} ± %{customdata[1]:.2g}<br>(%{customdata[0]:.4g})",
            mode="markers",
            marker=dict(color=color, size=9, symbol="circle"),
            error_y=dict(
                type="data", array=(ERROR_BAR_SE * se).tolist(), visible=True, color=color, thickness=1.5
            ),
            customdata=np.stack([expected, ERROR_BAR_SE * se], axis=1).tolist(),
        )
    )
    fig.update_layout(xaxis=_dk_axis(d_ks, axes))
    yaxis = axes.y_axis()
    if log_y:
        yaxis.update(LOG_DECADES)
    else:
        # Keep 1 in the middle so small deviations do not look dramatic.
        top = float(np.max(measured + ERROR_BAR_SE * se)) if measured.size else 1.0
        low = float(np.min(measured - ERROR_BAR_SE * se)) if measured.size else 1.0
        spread = max(0.25, abs(top - 1.0), abs(1.0 - low)) * 1.3
        yaxis["range"] = [1.0 - spread, 1.0 + spread]
    fig.update_layout(yaxis=yaxis)
    return _layout(fig, axes.title, height)


def dot_variance_figure(result, scaled: bool, *, measured_name: str, theory_name: str, **labels) -> go.Figure:
    """:func:`variance_figure` of a :class:`attention_core.labs.scaling.DotVariance`, unscaled (log y,
    the theory line y = d_k) or scaled (linear y around 1), each in its own colour."""
    if scaled:
        arrays = (result.scaled_variance, result.scaled_standard_error, result.expected_scaled)
    else:
        arrays = (result.raw_variance, result.raw_standard_error, result.expected_raw)
    return variance_figure(
        result.d_ks,
        *arrays,
        measured_name=measured_name,
        theory_name=theory_name,
        log_y=not scaled,
        color=SCALED_COLOR if scaled else RAW_COLOR,
        **labels,
    )


def _normal_pdf(x: np.ndarray, std: float) -> np.ndarray:
    return np.exp(-0.5 * (x / std) ** 2) / (std * math.sqrt(2.0 * math.pi))


def score_histogram(
    raw_scores: np.ndarray,
    scaled_scores: np.ndarray,
    d_k: int,
    *,
    raw_name: str,
    scaled_name: str,
    theory_name: str,
    axes: AxisText = HISTOGRAM_AXES,
    bins: int = 60,
    height: int = 380,
) -> go.Figure:
    """Two overlaid density histograms (unscaled and ÷√d_k scores) and their normal curves.

    Traces: 0 unscaled histogram, 1 scaled histogram, 2 N(0, d_k) curve, 3 N(0, 1) curve. Both
    histograms use the same bin width so their heights compare fairly.
    """
    raw = np.asarray(raw_scores, dtype=float).ravel()
    scaled = np.asarray(scaled_scores, dtype=float).ravel()
    if raw.size == 0 or scaled.size == 0:
        raise ValueError("scores are needed")
    lo = float(min(raw.min(), scaled.min()))
    hi = float(max(raw.max(), scaled.max()))
    width = (hi - lo) / bins if hi > lo else 1.0
    # The narrow (scaled) histogram needs finer bins to keep its shape: about 30 across ±3.
    scaled_width = min(width, 6.0 / 30)
    fig = go.Figure()
    for values, name, color, bin_width in (
        (raw, raw_name, RAW_COLOR, width),
        (scaled, scaled_name, SCALED_COLOR, scaled_width),
    ):
        fig.add_trace(
            go.Histogram(
                x=values.tolist(),
                name=escape_label(name),
                histnorm="probability density",
                xbins=dict(start=lo, end=hi + bin_width, size=bin_width),
                marker=dict(color=color, line=dict(width=0)),
                opacity=0.55,
            )
        )
    xs = np.linspace(lo, hi, 400)
    for std, dash, color in ((math.sqrt(d_k), "dash", RAW_COLOR), (1.0, "dot", SCALED_COLOR)):
        fig.add_trace(
            go.Scatter(
                x=xs.tolist(),
                y=_normal_pdf(xs, std).tolist(),
                mode="lines",
                name=escape_label(theory_name.format(var=f"{std * std:g}")),
                line=dict(color=color, dash=dash, width=2),
                hoverinfo="skip",
            )
        )
    fig.update_layout(
        barmode="overlay",
        xaxis=axes.x_axis(),
        yaxis=axes.y_axis(),
    )
    return _layout(fig, axes.title, height)


def versus_dk_figure(
    d_ks: Sequence[int],
    raw: np.ndarray,
    scaled: np.ndarray,
    *,
    raw_name: str,
    scaled_name: str,
    axes: AxisText,
    reference: float | None = None,
    reference_name: str = "",
    y_range: tuple[float, float] | None = None,
    height: int = 340,
) -> go.Figure:
    """One quantity (largest weight, entropy, Jacobian norm) against d_k, unscaled vs scaled.

    Traces: 0 unscaled, 1 scaled, 2 the optional horizontal reference (e.g. 1/n for "uniform").
    """
    d_ks = [int(d) for d in d_ks]
    raw = np.asarray(raw, dtype=float)
    scaled = np.asarray(scaled, dtype=float)
    if not (len(d_ks) == raw.size == scaled.size):
        raise ValueError("one value per d_k is needed")
    fig = go.Figure()
    for values, name, color, symbol in (
        (raw, raw_name, RAW_COLOR, "circle"),
        (scaled, scaled_name, SCALED_COLOR, "square"),
    ):
        fig.add_trace(
            _named(
                d_ks,
                values.tolist(),
                name,
                "d_k = %{x}<br>%{y:.4f}",
                mode="lines+markers",
                line=dict(color=color, width=2),
                marker=dict(color=color, size=8, symbol=symbol),
            )
        )
    if reference is not None:
        fig.add_trace(
            _named(
                [d_ks[0], d_ks[-1]],
                [reference, reference],
                reference_name,
                "%{y:.4f}",
                mode="lines",
                line=dict(color=THEORY_COLOR, dash="dot", width=1.5),
            )
        )
    yaxis = axes.y_axis()
    if y_range is not None:
        yaxis["range"] = list(y_range)
    fig.update_layout(xaxis=_dk_axis(d_ks, axes), yaxis=yaxis)
    return _layout(fig, axes.title, height)


def bar_text(weight: float) -> str:
    """3 decimals, or scientific notation below 0.001 so a tiny weight never reads as "0.000"."""
    if weight == 0.0:
        return "0"
    return f"{weight:.3f}" if weight >= 1e-3 else f"{weight:.1e}"


def weights_bar_figure(
    scores: Sequence[float],
    weights: np.ndarray,
    *,
    axes: AxisText = ROW_AXES,
    score_label: str = "s",
    height: int = 320,
) -> go.Figure:
    """Softmax weights of one row as bars on a fixed 0..1 axis; each bar labelled with its score."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size != len(scores):
        raise ValueError("one weight per score is needed")
    labels = [f"{j}: {escape_label(score_label)}={s:g}" for j, s in enumerate(scores)]
    best = int(np.argmax(w)) if w.size else -1
    colors = [RAW_COLOR if j == best else SCALED_COLOR for j in range(w.size)]
    fig = go.Figure(
        go.Bar(
            x=list(range(w.size)),
            y=w.tolist(),
            marker=dict(color=colors),
            text=[bar_text(v) for v in w],
            textposition="outside",
            customdata=labels,
            hovertemplate="%{customdata}<br>%{y:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        xaxis=axes.x_axis(tickmode="array", tickvals=list(range(w.size)), ticktext=labels),
        yaxis=axes.y_axis(range=[0.0, 1.12]),
        showlegend=False,
    )
    return _layout(fig, axes.title, height)
