"""Floor app for bench/page_latency.py: the playground's charts with nothing but the drawing.

It shows the same number of heatmaps as the playground, of the same shapes, in the same layout (three columns for
Q/K/V, square n×n maps for small n, one small-multiples figure for all heads) and the same colour
scales and heights as the playground, but from arrays precomputed once per (n, d_model, heads):
no core call, no hover labels, no masks, no text. Whatever the playground takes beyond this is
our own overhead. A "Seed" number input (sidebar) picks one of 16 precomputed sets, so a change
sends new figures exactly like the playground's seed control does.

    streamlit run bench/floor_app.py   then open  /?n=128&d_model=16&heads=2   (&masked=1: with mask maps;
&all_heads=1: a large all-heads figure too)
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

SETS = 16

st.set_page_config(page_title="floor", layout="wide")


def qp(name: str, default: int) -> int:
    try:
        return int(st.query_params.get(name, default))
    except ValueError:
        return default


n, d_model, heads = qp("n", 6), qp("d_model", 16), qp("heads", 2)
# Like the playground: without a mask (its default) it draws no mask map and no masked-score map
# (an all-zero map, and a copy of the scaled scores); ?masked=1 draws both, as with a causal mask.
masked = qp("masked", 0) == 1
# Like the playground (steps_view.all_heads_on_request): with more cells than two heads at 128 tokens
# the all-heads figure is drawn only on request (?all_heads=1).
all_heads = heads * n * n <= 2 * 128 * 128 or qp("all_heads", 0) == 1
d_k = max(1, d_model // heads)


@st.cache_resource(max_entries=4)
def precomputed(n: int, d_model: int, heads: int, d_k: int) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    out = []
    for _ in range(SETS):
        w = rng.random((heads, n, n))
        w /= w.sum(axis=2, keepdims=True)
        out.append(
            dict(
                X=rng.standard_normal((n, d_model)),
                Q=rng.standard_normal((n, d_k)),
                K=rng.standard_normal((n, d_k)),
                V=rng.standard_normal((n, d_k)),
                raw=rng.standard_normal((n, n)) * 3,
                scaled=rng.standard_normal((n, n)),
                mask=np.zeros((n, n)),
                masked=rng.standard_normal((n, n)),
                weights=w,
                head_out=rng.standard_normal((n, d_k)),
                concat=rng.standard_normal((n, heads * d_k)),
                output=rng.standard_normal((n, d_model)),
            )
        )
    return out


def heat(z: np.ndarray, kind: str = "signed") -> go.Figure:
    rows = z.shape[0]
    if kind == "weights":
        scale = dict(colorscale="Viridis", zmin=0.0, zmax=1.0)
    elif kind == "mask":
        scale = dict(colorscale=[[0.0, "#f0f4fa"], [1.0, "#f0f4fa"]], zmin=0.0, zmax=1.0, showscale=False)
    else:
        b = float(np.abs(z).max()) or 1.0
        scale = dict(colorscale="RdBu_r", zmid=0.0, zmin=-b, zmax=b)
    fig = go.Figure(go.Heatmap(z=z, **scale))
    fig.update_layout(
        height=int(min(720, max(220, 90 + 30 * rows))),
        yaxis=dict(autorange="reversed"),
        margin=dict(l=10, r=10, t=10, b=10),
    )
    return fig


def small_multiples(w: np.ndarray) -> go.Figure:
    h, m, _ = w.shape
    cols = min(h, 4)
    rows = math.ceil(h / cols)
    fig = make_subplots(rows=rows, cols=cols)
    for k in range(h):
        r, c = divmod(k, cols)
        fig.add_trace(go.Heatmap(z=w[k], coloraxis="coloraxis"), row=r + 1, col=c + 1)
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(
        coloraxis=dict(colorscale="Viridis", cmin=0.0, cmax=1.0),
        height=int(min(1600, rows * max(220, min(360, 60 + 22 * m)) + 40)),
        margin=dict(l=10, r=10, t=40, b=10),
    )
    return fig


def chart(fig: go.Figure, key: str, square: bool = False) -> None:
    width = ("stretch" if n > 16 else 200 + 55 * n) if square else "stretch"
    st.plotly_chart(fig, key=key, width=width, config={"displaylogo": False})


seed = st.sidebar.number_input("Seed", 0, 10_000, 0, step=1, key="floor_seed")
a = precomputed(n, d_model, heads, d_k)[int(seed) % SETS]
st.title(f"floor n={n} d_model={d_model} heads={heads}")
chart(heat(a["X"]), "x")
for col, name in zip(st.columns(3), ("Q", "K", "V"), strict=True):
    with col:
        chart(heat(a[name]), name)
chart(heat(a["raw"]), "raw", square=True)
chart(heat(a["scaled"]), "scaled", square=True)
if masked:
    chart(heat(a["mask"], "mask"), "mask", square=True)
    chart(heat(a["masked"]), "masked", square=True)
chart(heat(a["weights"][0], "weights"), "weights", square=True)
chart(heat(a["head_out"]), "head_out")
if all_heads:
    chart(small_multiples(a["weights"]), "all_heads")
chart(heat(a["concat"]), "concat")
chart(heat(a["output"]), "output")
