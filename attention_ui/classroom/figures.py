"""The projector's histogram of a poll's answers: counts per choice, no names."""

from __future__ import annotations

import plotly.graph_objects as go

from attention_ui.figures.base import PLAIN_TEMPLATE, escape_label

RIGHT, OTHER, HIDDEN = "#1a7f37", "#4c78a8", "#9aa0ac"
LABEL_MAX = 28


def answers_histogram(labels, counts, correct: int | None, *, title: str, count_title: str) -> go.Figure:
    """One bar per choice (in the poll's order); the right one green once revealed (``correct``)."""
    colours = [RIGHT if i == correct else (OTHER if correct is None else HIDDEN) for i in range(len(counts))]
    names = [f"{chr(65 + i)}. {escape_label(lab, LABEL_MAX)}" for i, lab in enumerate(labels)]
    fig = go.Figure(
        go.Bar(
            x=names,
            y=list(counts),
            marker_color=colours,
            text=list(counts),
            textposition="outside",
            hoverinfo="skip",
            cliponaxis=False,
        )  # fmt: skip
    )
    top = max([*counts, 1])
    fig.update_layout(
        template=PLAIN_TEMPLATE, title=title, height=320, margin=dict(l=40, r=10, t=50, b=60),
        yaxis=dict(title=count_title, range=[0, top * 1.25], dtick=max(1, round(top / 5))),
        xaxis=dict(type="category"), showlegend=False,
    )  # fmt: skip
    return fig
