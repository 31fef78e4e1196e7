"""Figures of the decoder page (SmolLM2-135M): arrays and plain-text labels in, ``go.Figure`` out.

No Streamlit here. Every label passed in is plain text (tokens from the learner's sentence, words
from the page's catalog) and is escaped here. Token axes place cells at integer positions with the
labels as tick text, so a label that repeats (``は 3/3`` twice) keeps its own row and column.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .base import (
    PLAIN_TEMPLATE,
    TICK_PAD_PX,
    TITLE_BAND_PX,
    TITLE_FONT_PX,
    AxisText,
    axis_margins,
    escape_label,
    fit_x_ticks,
    hover_labels,
    text_px,
    tick_positions,
    token_tick_labels,
    x_label_count,
    x_tick_text,
)
from .heatmaps import attention_heatmap

SELECTED_COLOR = "#d62728"  # the chosen head / token, as in the pretrained overview
OTHER_COLOR = "#4c78a8"
MHA_COLOR = "#9e9e9e"
GRID_SCALE = "Viridis"
# The three maps of a KV group share one row of the page: at 1366 × 768 each column is about this
# wide (1366 − 300 px sidebar − 2 × 80 px padding, three columns, 16 px gaps); a weight map's colour
# bar with its tick labels takes COLORBAR_PX of it.
GROUP_COLUMN_PX, COLORBAR_PX, GROUP_MIN_PLOT_PX = 290, 60, 60
NEXT_LABEL_MAX_CHARS = 26  # a next-token label in words ("猫 (completes)+は") before it is shortened

# The charts' English axis words (pages pass translated ones).
ROPE_AXES = AxisText("offset", "score")
NEXT_AXES = AxisText("probability", "next token")
CACHE_AXES = AxisText("tokens", "bytes")


def _ticks(labels: Sequence[str], plot_px: float) -> tuple[dict, float]:
    """A token x axis in a plot of about ``plot_px``: every token while the labels fit (turned, or
    Japanese written top to bottom), else every k-th; and how far below the plot the labels reach."""
    shown = tick_positions(len(labels), x_label_count(plot_px))
    text = token_tick_labels(labels, max_chars=8)
    shown_text = [text[i] for i in shown]
    fit = fit_x_ticks(shown_text, plot_px)
    axis = dict(
        tickmode="array", tickvals=shown, ticktext=x_tick_text(shown_text, plot_px), tickangle=fit.angle
    )
    return axis, fit.depth


def head_grid(
    grid: np.ndarray,
    selected: tuple[int, int],
    *,
    value_title: str,
    layer_title: str = "layer",
    head_title: str = "head",
    kv_title: str = "KV head",
    kv_head_of: Sequence[int] | None = None,
) -> go.Figure:
    """Layers × query heads of one summary number each (``grid [layers, heads]``), layer 0 on top.

    Trace 0 is the heatmap; trace 1 an invisible marker on every cell centre carrying
    ``customdata = [layer, head]`` (Plotly heatmaps report no points to a selection, markers do),
    so a click picks that head. ``selected`` is framed. Vertical lines separate the query heads
    that share one KV head (``kv_head_of``).
    """
    z = np.asarray(grid, dtype=float)
    n_layers, n_heads = z.shape
    kv = list(kv_head_of) if kv_head_of is not None else [0] * n_heads
    lt, ht, vt, kt = (escape_label(s) for s in (layer_title, head_title, value_title, kv_title))
    layers, heads = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    custom = np.stack([layers, heads, np.array(kv)[heads]], axis=-1).reshape(-1, 3)
    template = f"{lt} %{{customdata[0]}} · {ht} %{{customdata[1]}} ({kt} %{{customdata[2]}})<br>{vt}: %{{text}}<extra></extra>"
    values = z.reshape(-1)
    fig = go.Figure(
        data=[
            go.Heatmap(
                z=z.tolist(),
                x=list(range(n_heads)),
                y=list(range(n_layers)),
                colorscale=GRID_SCALE,
                colorbar=dict(title=dict(text=vt, side="right"), thickness=12),
                xgap=1,
                ygap=1,
                hoverinfo="skip",
                name="grid",
            ),
            go.Scatter(
                x=heads.reshape(-1).tolist(),
                y=layers.reshape(-1).tolist(),
                mode="markers",
                marker=dict(size=14, color="rgba(0,0,0,0)"),
                selected=dict(marker=dict(opacity=0)),
                unselected=dict(marker=dict(opacity=0)),
                customdata=custom.tolist(),
                text=[f"{v:.3f}" for v in values],
                hovertemplate=template,
                name="cells",
                showlegend=False,
            ),
        ]
    )
    layer, head = selected
    shapes = [
        dict(
            type="rect", x0=head - 0.5, x1=head + 0.5, y0=layer - 0.5, y1=layer + 0.5,
            line=dict(color=SELECTED_COLOR, width=3), fillcolor="rgba(0,0,0,0)",
        )
    ]  # fmt: skip
    shapes += [
        dict(
            type="line",
            x0=j - 0.5,
            x1=j - 0.5,
            yref="y domain",
            y0=0,
            y1=1,
            line=dict(color="white", width=4),
        )
        for j in range(1, n_heads)
        if kv[j] != kv[j - 1]
    ]
    fig.update_layout(
        template=PLAIN_TEMPLATE,
        shapes=shapes,
        height=int(120 + 18 * n_layers),
        margin=dict(l=60, r=10, t=30, b=50),
        hoverdistance=-1,
        clickmode="event+select",
        dragmode=False,
        xaxis=dict(title=dict(text=ht), tickmode="array", tickvals=list(range(n_heads)), side="top",
                   range=[-0.5, n_heads - 0.5], fixedrange=True, showgrid=False, zeroline=False),
        yaxis=dict(title=dict(text=lt), autorange="reversed", tickmode="array", dtick=1,
                   tickvals=list(range(0, n_layers, 2)), fixedrange=True, showgrid=False, zeroline=False),
    )  # fmt: skip
    return fig


def picked_head(point: dict, n_layers: int, n_heads: int) -> tuple[int, int] | None:
    """The (layer, head) of a clicked point of :func:`head_grid`, or None for anything else."""
    data = point.get("customdata") if isinstance(point, dict) else None
    if not isinstance(data, (list, tuple)) or len(data) < 2:
        return None
    try:
        layer, head = int(data[0]), int(data[1])
    except (TypeError, ValueError):
        return None
    return (layer, head) if 0 <= layer < n_layers and 0 <= head < n_heads else None


def group_plot_px(labels: Sequence[str], query_title: str) -> float:
    """The plot width a group map can count on: its column at 1366 px (:data:`GROUP_COLUMN_PX`) less
    the query labels' margin, the colour bar and the right margin."""
    margin, _ = axis_margins([], token_tick_labels(labels), 1.0, x_title=False, y_title=bool(query_title))
    return max(GROUP_MIN_PLOT_PX, GROUP_COLUMN_PX - margin["l"] - COLORBAR_PX - 10)


def group_weight_maps(
    weights: np.ndarray,
    heads: Sequence[int],
    labels: Sequence[str],
    allowed: np.ndarray,
    *,
    title: str = "query head {h}",
    query_title: str = "query",
    **axes,
) -> list[go.Figure]:
    """The causal weight maps of the query heads that share one KV head, one figure each.

    ``weights [h, n, n]`` of one layer; ``heads`` the query heads to draw; ``title`` is formatted
    with ``h=``. ``axes``: :func:`attention_heatmap`'s hover and key-axis title. The maps share one
    row of the page, so a long sentence's key labels are thinned to what fits upright in a third of
    a 1366-px page (every label shown can be read; hover names every key).
    """
    plot_px = group_plot_px(labels, query_title)
    return [
        attention_heatmap(
            weights[h],
            labels,
            kind="weights",
            allowed=allowed,
            title=title.format(h=h),
            query_title=query_title,
            plot_px=plot_px,
            **axes,
        )  # fmt: skip
        for h in heads
    ]


def gqa_diagram(
    n_heads: int,
    n_kv_heads: int,
    selected: int,
    *,
    query_name: str = "query head {h}",
    kv_name: str = "KV head {g}",
) -> go.Figure:
    """Which KV head each query head reads (``h // (n_heads / n_kv_heads)``): query heads on the top
    row, KV heads below, one line per query head; the selected head and its KV head in red.

    Trace 0: the lines (one trace, gaps between segments); trace 1: query heads; trace 2: KV heads.
    """
    group = n_heads // n_kv_heads
    qx = np.arange(n_heads, dtype=float)
    kvx = np.array([g * group + (group - 1) / 2 for g in range(n_kv_heads)])
    xs: list = []
    ys: list = []
    for h in range(n_heads):
        xs += [qx[h], kvx[h // group], None]
        ys += [1, 0, None]
    chosen_kv = selected // group
    fig = go.Figure(
        data=[
            go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="#b0b0b0", width=2), hoverinfo="skip",
                       showlegend=False, name="reads"),
            go.Scatter(
                x=qx.tolist(), y=[1] * n_heads, mode="markers+text", name="query",
                marker=dict(size=26, symbol="square",
                            color=[SELECTED_COLOR if h == selected else OTHER_COLOR for h in range(n_heads)]),
                text=[str(h) for h in range(n_heads)], textfont=dict(color="white"),
                hovertext=[escape_label(query_name.format(h=h)) for h in range(n_heads)],
                hoverinfo="text", showlegend=False,
            ),
            go.Scatter(
                x=kvx.tolist(), y=[0] * n_kv_heads, mode="markers+text", name="kv",
                marker=dict(size=34, symbol="diamond",
                            color=[SELECTED_COLOR if g == chosen_kv else "#54a24b" for g in range(n_kv_heads)]),
                text=[str(g) for g in range(n_kv_heads)], textfont=dict(color="white"),
                hovertext=[escape_label(kv_name.format(g=g)) for g in range(n_kv_heads)],
                hoverinfo="text", showlegend=False,
            ),
        ]
    )  # fmt: skip
    fig.update_layout(
        template=PLAIN_TEMPLATE,
        height=200,
        margin=dict(l=120, r=10, t=10, b=10),
        xaxis=dict(visible=False, range=[-0.7, n_heads - 0.3], fixedrange=True),
        yaxis=dict(
            tickmode="array", tickvals=[0, 1], range=[-0.4, 1.4], fixedrange=True, showgrid=False, zeroline=False,
            ticktext=[escape_label(kv_name.format(g="")).strip(), escape_label(query_name.format(h="")).strip()],
        ),
    )  # fmt: skip
    return fig


def rope_offset_figure(
    offsets: np.ndarray,
    starts: np.ndarray,
    scores: np.ndarray,
    *,
    actual: tuple[int, float] | None = None,
    axes: AxisText = ROPE_AXES,
    start_name: str = "key at position {s}",
    actual_name: str = "this pair in the sentence",
) -> go.Figure:
    """The raw score of one rotated (q, k) pair against the offset, one trace per key position.

    ``scores [starts, offsets]``. The traces lie on top of each other because the score depends
    only on the offset; markers of different sizes keep every trace visible. ``actual = (offset,
    score)`` marks the pair as it sits in the sentence (the last trace).
    """
    scores = np.asarray(scores, dtype=float)
    symbols = ("circle-open", "x-thin-open", "diamond-open", "square-open", "cross-thin-open")
    traces = [
        go.Scatter(
            x=np.asarray(offsets).tolist(), y=scores[a].tolist(), mode="lines+markers" if a == 0 else "markers",
            name=escape_label(start_name.format(s=int(s))),
            line=dict(width=1, color="#888888"),
            marker=dict(size=9 - 1.5 * (a % 4), symbol=symbols[a % len(symbols)]),
            hovertemplate="%{x}: %{y:.4f}<extra>%{fullData.name}</extra>",
        )
        for a, s in enumerate(starts)
    ]  # fmt: skip
    if actual is not None:
        traces.append(
            go.Scatter(
                x=[actual[0]], y=[actual[1]], mode="markers", name=escape_label(actual_name),
                marker=dict(size=14, color=SELECTED_COLOR, symbol="star"),
                hovertemplate="%{x}: %{y:.4f}<extra>%{fullData.name}</extra>",
            )
        )  # fmt: skip
    fig = go.Figure(data=traces)
    fig.update_layout(
        template=PLAIN_TEMPLATE,
        height=340,
        margin=dict(l=60, r=10, t=10, b=50),
        xaxis=axes.x_axis(zeroline=False),
        yaxis=axes.y_axis(),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def next_token_bars(
    labels: Sequence[str],
    probs: Sequence[float],
    *,
    chosen: int | None = None,
    axes: AxisText = NEXT_AXES,
    hovers: Sequence[str] | None = None,
) -> go.Figure:
    """Horizontal bars of the most probable next tokens, most probable on top; ``chosen`` (an index
    into ``labels``) in red. Labels are numbered (``1 ␣was``) so equal labels stay apart; ``hovers``
    (one per bar, default the labels) say each candidate in words. The left margin fits the labels."""
    names = [f"{i + 1} {escape_label(lab, NEXT_LABEL_MAX_CHARS)}" for i, lab in enumerate(labels)]
    words = [escape_label(h) for h in hovers] if hovers is not None else names
    p = [float(v) for v in probs]
    colors = [SELECTED_COLOR if i == chosen else OTHER_COLOR for i in range(len(p))]
    fig = go.Figure(
        go.Bar(
            x=p, y=list(range(len(p))), orientation="h", marker=dict(color=colors),
            text=[f"{v:.3f}" for v in p], textposition="outside", cliponaxis=False,
            customdata=words, hovertemplate="%{customdata}: %{x:.4f}<extra></extra>", name="p",
        )
    )  # fmt: skip
    margin, _ = axis_margins([], names, 300, x_title=False, y_title=bool(axes.y))
    fig.update_layout(
        template=PLAIN_TEMPLATE,
        height=int(80 + 24 * max(1, len(p))),
        margin=dict(l=max(130, margin["l"]), r=40, t=10, b=50),
        xaxis=axes.x_axis(range=[0, min(1.0, max(p, default=1.0) * 1.2 + 0.02)]),
        yaxis=axes.y_axis(autorange="reversed", tickmode="array", tickvals=list(range(len(p))), ticktext=names),
    )  # fmt: skip
    return fig


def cache_growth_figure(
    n_tokens: Sequence[int],
    gqa_bytes: Sequence[int],
    mha_bytes: Sequence[int],
    *,
    gqa_name: str = "KV cache (GQA)",
    mha_name: str = "with one K and V per query head",
    axes: AxisText = CACHE_AXES,
) -> go.Figure:
    """The KV cache's size against the number of tokens: as stored and as one K/V per query head
    would store it (dashed). Trace 0: stored; trace 1: the multi-head comparison."""
    fig = go.Figure(
        data=[
            go.Scatter(x=list(n_tokens), y=list(gqa_bytes), mode="lines+markers", name=escape_label(gqa_name),
                       line=dict(color=SELECTED_COLOR)),
            go.Scatter(x=list(n_tokens), y=list(mha_bytes), mode="lines", name=escape_label(mha_name),
                       line=dict(color=MHA_COLOR, dash="dash")),
        ]
    )  # fmt: skip
    fig.update_layout(
        template=PLAIN_TEMPLATE,
        height=300,
        margin=dict(l=70, r=10, t=10, b=50),
        xaxis=axes.x_axis(
            tickformat="d",
            dtick=max(1, math.ceil((max(n_tokens, default=1) - min(n_tokens, default=0)) / 10)),
        ),
        yaxis=axes.y_axis(rangemode="tozero"),
        legend=dict(orientation="h", y=-0.3),
    )
    return fig


GENERATED_MARGIN = dict(l=90, r=10, t=10, b=70)
GENERATED_PLOT_PX = 600  # a low estimate of the full-width chart's plot width at 1366 px (as heatmaps')


def generated_rows(
    rows: Sequence[np.ndarray],
    labels: Sequence[str],
    n_prompt: int,
    *,
    query_title: str = "new token",
    key_title: str = "cached token",
    value_title: str = "weight",
) -> go.Figure:
    """One row of weights per generated token against every cached token (``rows[s]`` has
    ``n_prompt + s + 1`` entries); cells a row cannot see yet are blank. ``labels``: all tokens,
    prompt then generated. A dotted line separates the prompt from the generated tokens."""
    n_all = len(labels)
    z = np.full((len(rows), n_all), np.nan)
    for s, row in enumerate(rows):
        r = np.asarray(row, dtype=float).reshape(-1)
        z[s, : r.size] = r
    gen = list(range(n_prompt, n_prompt + len(rows)))
    full = hover_labels(labels)
    custom = [[[full[n_prompt + s], full[j]] for j in range(n_all)] for s in range(len(rows))]
    q, k, v = (escape_label(x) for x in (query_title, key_title, value_title))
    fig = go.Figure(
        go.Heatmap(
            z=[[None if x != x else round(x, 4) for x in row] for row in z.tolist()],
            x=list(range(n_all)), y=gen, customdata=custom, colorscale="Blues", zmin=0.0, zmax=1.0,
            hoverongaps=False, xgap=1 if n_all <= 48 else 0, ygap=1,
            hovertemplate=f"{q}: %{{customdata[0]}}<br>{k}: %{{customdata[1]}}<br>{v}: %{{z:.4f}}<extra></extra>",
            colorbar=dict(thickness=12),
        )
    )  # fmt: skip
    ticks_x, depth = _ticks(labels, GENERATED_PLOT_PX)
    text_y = token_tick_labels(labels, max_chars=8)
    margin = dict(
        GENERATED_MARGIN, b=max(GENERATED_MARGIN["b"], math.ceil(depth) + TICK_PAD_PX + TITLE_BAND_PX)
    )
    # The query title runs up the y axis: the plot is at least as tall as it (with few generated rows
    # "generated token (query)" was cut to "generated token (q").
    plot_px = max(60 + 22 * max(1, len(rows)), math.ceil(text_px(q, TITLE_FONT_PX)) + 2 * TICK_PAD_PX)
    fig.update_layout(
        template=PLAIN_TEMPLATE,
        height=plot_px + margin["t"] + margin["b"],
        margin=margin,
        shapes=[dict(type="line", x0=n_prompt - 0.5, x1=n_prompt - 0.5, yref="y domain", y0=0, y1=1,
                     line=dict(color="#222222", width=2, dash="dot"))],
        xaxis=dict(title=dict(text=k), range=[-0.5, n_all - 0.5], showgrid=False, zeroline=False, **ticks_x),
        yaxis=dict(title=dict(text=q), autorange="reversed", tickmode="array", tickvals=gen,
                   ticktext=[text_y[i] for i in gen], showgrid=False, zeroline=False),
    )  # fmt: skip
    return fig


def mark_layers(fig: go.Figure, layers: Sequence[int], label: str) -> go.Figure:
    """A copy of a :func:`head_grid` figure with a dotted frame around each of ``layers`` (Gemma 3's
    global layers), each shape named ``"marked layer l"``; ``label`` is kept in ``layout.meta``
    (a text beside the grid collided with the colour bar on a phone; the page says what the frames
    mean)."""
    out = go.Figure(fig)
    n_heads = len(fig.data[0].z[0])
    for layer in layers:
        out.add_shape(type="rect", x0=-0.5, x1=n_heads - 0.5, y0=layer - 0.5, y1=layer + 0.5,
                      line=dict(color="#222222", width=2, dash="dot"), name=f"marked layer {layer}")  # fmt: skip
    out.update_layout(meta={"marked": escape_label(label)})
    return out


def lengths_figure(
    before: np.ndarray, after: np.ndarray, *, before_name: str, after_name: str, axes: AxisText
) -> go.Figure:
    """Vector lengths per token before and after QK-norm (``before [n]``, ``after [n]``): two
    lines, trace 0 before, trace 1 after."""
    x = list(range(len(before)))
    fig = go.Figure(
        data=[
            go.Scatter(
                x=x,
                y=np.asarray(before, float).tolist(),
                mode="lines+markers",
                name=escape_label(before_name),
            ),
            go.Scatter(
                x=x, y=np.asarray(after, float).tolist(), mode="lines+markers", name=escape_label(after_name)
            ),
        ]
    )
    fig.update_layout(template=PLAIN_TEMPLATE, height=280, margin=dict(l=60, r=10, t=10, b=50),
                      xaxis=axes.x_axis(), yaxis=axes.y_axis(),
                      legend=dict(orientation="h", y=1.12))  # fmt: skip
    return fig


def keys_read_figure(
    counts: Sequence[Sequence[int]], names: Sequence[str], window: int, *, axes: AxisText, window_name: str
) -> go.Figure:
    """Keys each query reads, one line per layer (``counts[k] [n]``), and the window as a dashed
    line (last trace)."""
    data = [go.Scatter(x=list(range(len(c))), y=list(map(int, c)), mode="lines", name=escape_label(nm))
            for c, nm in zip(counts, names, strict=True)]  # fmt: skip
    n = len(counts[0]) if counts else 0
    data.append(go.Scatter(x=[0, max(n - 1, 0)], y=[window, window], mode="lines", name=escape_label(window_name),
                           line=dict(dash="dash", color="#888888")))  # fmt: skip
    fig = go.Figure(data=data)
    fig.update_layout(template=PLAIN_TEMPLATE, height=300, margin=dict(l=60, r=10, t=10, b=50),
                      xaxis=axes.x_axis(), yaxis=axes.y_axis(),
                      legend=dict(orientation="h", y=1.12))  # fmt: skip
    return fig
