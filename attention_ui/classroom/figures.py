"""The projector's histogram of a poll's answers: counts per choice, no names."""

from __future__ import annotations

import plotly.graph_objects as go

from attention_ui.figures.base import PLAIN_TEMPLATE, escape_label

RIGHT, OTHER, HIDDEN = "#1a7f37", "#4c78a8", "#9aa0ac"
LABEL_MAX = 28
# Read from the back of a room: the class panel is projected at 1920×1080 or 1366×768, where the
# template's 12-px ticks came out 11-12 px (issue 42 point 7), well under the heatmaps' 18 px on a slide.
PROJECTOR_TICK_PX, PROJECTOR_TITLE_PX = 20, 24
HEIGHT = 420


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
            textfont=dict(size=PROJECTOR_TICK_PX),
            hoverinfo="skip",
            cliponaxis=False,
        )  # fmt: skip
    )
    top = max([*counts, 1])
    fig.update_layout(
        template=PLAIN_TEMPLATE, title=dict(text=title, font=dict(size=PROJECTOR_TITLE_PX)), height=HEIGHT,
        margin=dict(l=70, r=10, t=60, b=40), showlegend=False,
        yaxis=dict(title=dict(text=count_title, font=dict(size=PROJECTOR_TICK_PX)), range=[0, top * 1.25],
                   dtick=max(1, round(top / 5)), tickfont=dict(size=PROJECTOR_TICK_PX)),
        # long labels are tilted on a narrow panel: the margin follows them (4 bars: a cheap re-layout)
        xaxis=dict(type="category", tickfont=dict(size=PROJECTOR_TICK_PX), automargin=True),
    )  # fmt: skip
    return fig
