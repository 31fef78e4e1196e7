"""The code check's one chart: where the learner's array differs from the core's, as a heatmap."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_ui.figures.heatmaps import matrix_heatmap


def gap_figure(
    gap: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    row_title: str,
    col_title: str,
) -> go.Figure:
    """|learner − core| per entry (0 where they agree). An infinite gap (a NaN, or an infinity where
    the core has a number) is drawn as twice the largest finite gap, so it stands out. No title: the
    page writes it above the chart, where it wraps on a phone."""
    gap = np.asarray(gap, dtype=float)
    finite = gap[np.isfinite(gap)]
    top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    shown = np.where(np.isfinite(gap), gap, 2 * top)
    return matrix_heatmap(
        shown,
        row_labels,
        col_labels,
        kind="signed",
        row_title=row_title,
        col_title=col_title,
        row_hover=row_title,
        col_hover=col_title,
    )
