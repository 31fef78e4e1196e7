"""Streamlit panels for the cell explainer (arithmetic in :mod:`attention_core.explain`).

A click on a score/weight map selects its query row and key column; a click on the head-output
map selects a query row. The selection lives in two selectboxes (``pg_cell_q``, ``pg_cell_k``),
which are also the keyboard way to choose a cell.

Each panel opens on demand: a toggle (``pg_explain_cell``, ``pg_explain_row``) that a click on a
map switches on. Closed, a panel is one heading, one hint and the toggle, so a settings change
does not redraw two tables, a bar chart and six formulas nobody asked for (about a quarter of the
page's drawing time at the default sentence, bench/page_latency.py).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.explain import explain_cell, explain_row
from attention_ui import assets, kit
from attention_ui.playground import figures as playground_figures
from attention_ui.playground import grads_view
from attention_ui.playground.settings import TABLE
from attention_ui.playground.steps_view import CELL_CHARTS, CHART_PREFIX, PLOTLY_CONFIG, View

Q_KEY, K_KEY, R_KEY = TABLE.key("cell_q"), TABLE.key("cell_k"), TABLE.key("row_q")
CELL_OPEN, ROW_OPEN = TABLE.key("explain_cell"), TABLE.key("explain_row")
CLICKS = TABLE.key("cell_clicks")  # how many map clicks opened a panel (a one-shot "scroll there" signal)
SCROLL_TO = TABLE.key("cell_scroll_to")  # the panel to bring into view after a click: "cell", "row" or None

# Constant JavaScript (only the click count and a fixed panel name are filled in): bring the panel a
# click opened into view and move keyboard focus there, so the click is not answered ~2,400 px away.
_SCROLL_JS = assets.script("explain_scroll.js")


def scroll_script(panel: str, clicks: int) -> str:
    """The scroll-and-focus script for ``panel`` (``cell`` or ``row``) after click number ``clicks``."""
    if panel not in ("cell", "row"):
        raise ValueError(panel)
    return _SCROLL_JS.replace("__CLICK__", str(int(clicks))).replace("__PANEL__", panel)


def chosen_cell(state) -> tuple[int, int] | None:
    """The cell the open cell explainer shows, to frame on the maps (None while it is closed).

    Read before the selectboxes are drawn (the export menu reads it), a choice can still be the
    browser's label of a cell of the previous sentence ("2 · sat"): Streamlit turns it back into an
    index only when the selectbox is drawn. Such a choice is no cell yet: None, as when closed."""
    if not state.get(CELL_OPEN):
        return None
    q, k = state.get(Q_KEY, 0), state.get(K_KEY, 0)
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (q, k)):
        return None
    return q, k


CELL_CHART_KEYS = tuple(CHART_PREFIX + name for name in CELL_CHARTS)


def clamp_cell(state, n: int) -> None:
    """Keep the chosen cell inside an n×n map (the sentence may have become shorter)."""
    for key in (Q_KEY, K_KEY, R_KEY):
        value = state.get(key, 0)
        if not isinstance(value, int) or not 0 <= value < n:
            state[key] = 0


def make_on_cell(n: int, d_v: int):
    """The callback a clickable chart calls with its key: copy the clicked cell into the selectboxes."""

    def on_cell(chart_key: str) -> None:
        event = st.session_state.get(chart_key)
        try:
            points = event["selection"]["points"]
        except (KeyError, TypeError):
            return
        if not points:
            return
        cols = n if chart_key in CELL_CHART_KEYS else d_v
        cell = playground_figures.cell_from_point(points[0], n, cols)
        if cell is None:
            return
        s = st.session_state
        s[Q_KEY] = s[R_KEY] = cell[0]
        if chart_key in CELL_CHART_KEYS:
            s[K_KEY] = cell[1]
            s[CELL_OPEN] = True
            s[SCROLL_TO] = "cell"
        else:
            s[ROW_OPEN] = True
            s[SCROLL_TO] = "row"
        s[CLICKS] = int(s.get(CLICKS, 0)) + 1

    return on_cell


def _fmt(x: float) -> str:
    if np.isneginf(x):
        return r"-\infty"
    if np.isnan(x):
        return r"\text{—}"
    return f"{x:.4g}"


def cell_lines(t, a) -> list[tuple[str, str]]:
    """The cell explainer's steps for :class:`attention_core.explain.CellArithmetic` ``a``: (label,
    LaTeX) pairs, numbers only (the page and the offline lesson, :mod:`attention_ui.takehome`)."""
    i, j = a.i, a.j
    lines = [
        (
            t("playground.cell_step_sum"),
            rf"S_{{{i},{j}}} = \sum_d q_{{{i},d}}\,k_{{{j},d}} = {_fmt(a.raw)}",
        ),
        (
            t("playground.cell_step_divide"),
            rf"S'_{{{i},{j}}} = {_fmt(a.raw)} \div {_fmt(a.divisor)} = {_fmt(a.scaled)}",
        ),
        (
            t("playground.cell_step_mask_allowed" if a.allowed else "playground.cell_step_mask_masked"),
            rf"S''_{{{i},{j}}} = {_fmt(a.scaled)} + ({_fmt(a.mask_term)}) = {_fmt(a.masked)}",
        ),
    ]
    if a.fully_masked:
        lines.append((t("playground.cell_step_fully_masked"), rf"A_{{{i},{j}}} = 0"))
    else:
        lines += [
            (
                t("playground.cell_step_exp", m=f"{a.row_max:.4g}"),
                rf"e^{{S''_{{{i},{j}}} - m}} = e^{{{_fmt(a.masked - a.row_max)}}} = {_fmt(a.exp_term)}",
            ),
            (
                t("playground.cell_step_norm"),
                rf"Z_{{{i}}} = \sum_{{j'}} e^{{S''_{{{i},j'}} - m}} = {_fmt(a.normaliser)}",
            ),
            (
                t("playground.cell_step_weight"),
                rf"A_{{{i},{j}}} = {_fmt(a.exp_term)} \div {_fmt(a.normaliser)} = {_fmt(a.weight)}",
            ),
        ]
    return lines


def _token_choice(view: View, key: str, label: str) -> None:
    tokens = view.trace.tokens
    st.selectbox(
        label,
        list(range(view.trace.n)),
        key=key,
        format_func=lambda i: f"{i} · {tokens[i]}",  # selectbox options are plain text, never Markdown
    )


def _opened(t, name: str, key: str) -> bool:
    """A panel's heading, its hint and its open/closed toggle (off by default; a click on a map opens
    it, see :func:`make_on_cell`); whether it is open. ``name`` is ``cell`` or ``row``. After a click
    the panel is scrolled into view once."""
    st.subheader(t(f"playground.{name}_title"), anchor=f"explain-{name}")  # own id (ja titles share one)
    st.caption(t(f"playground.{name}_help"))
    opened = st.toggle(t(f"playground.{name}_open"), key=key)
    if opened and st.session_state.get(SCROLL_TO) == name:
        st.session_state[SCROLL_TO] = None
        st.html(scroll_script(name, st.session_state.get(CLICKS, 0)), unsafe_allow_javascript=True)
    return opened


def cell_panel(view: View) -> None:
    """After the softmax step: the chosen cell's arithmetic, term by term (on demand)."""
    with st.container(key=TABLE.key("cell_panel")):
        _cell_panel(view)


def row_panel(view: View) -> None:
    """After the head-output step: query i's output as the weighted sum of the value rows (on demand)."""
    with st.container(key=TABLE.key("row_panel")):
        _row_panel(view)


def _cell_panel(view: View) -> None:
    t, tr = view.t, view.trace
    if not _opened(t, "cell", CELL_OPEN):
        return
    c1, c2 = st.columns(2)
    with c1:
        _token_choice(view, Q_KEY, t("playground.cell_query"))
    with c2:
        _token_choice(view, K_KEY, t("playground.cell_key"))
    i, j = int(st.session_state[Q_KEY]), int(st.session_state[K_KEY])
    a = explain_cell(tr, view.head, i, j)
    import pandas as pd  # only once a panel is opened: the closed page needs no pandas

    terms = pd.DataFrame(
        {
            t("playground.cell_col_q", i=i): a.q,
            t("playground.cell_col_k", j=j): a.k,
            t("playground.cell_col_product"): a.products,
        },
        index=[f"d{d}" for d in range(len(a.q))],
    )
    with st.container(key=TABLE.key("cell_explanation")):
        st.markdown(t("playground.cell_products", i=i, j=j, d_k=len(a.q)))
        st.dataframe(terms, height=kit.table_height(len(terms)))
        lines = cell_lines(t, a)
        for label, formula in lines:
            st.markdown(f"- {label}: ${formula}$")
        st.caption(t("playground.cell_check", value=f"{float(tr.weights[view.head, i, j]):.6g}"))
        grads_view.cell_panel(view, i, j)  # the gradient past the softmax, while step 12 is on


def _row_panel(view: View) -> None:
    t, tr = view.t, view.trace
    if not _opened(t, "row", ROW_OPEN):
        return
    _token_choice(view, R_KEY, t("playground.cell_query"))
    i = int(st.session_state[R_KEY])
    r = explain_row(tr, view.head, i)
    fig = playground_figures.row_output_figure(
        r.weights,
        r.output,
        tr.tokens,
        weights_title=t("playground.row_weights", i=i),
        output_title=t("playground.row_output", i=i),
    )
    kit.chart(
        fig,
        TABLE.key("chart", "row_output"),
        t("playground.alt_row_output", i=i, n=tr.n, d=len(r.output)),
        theme=None,  # base.PLAIN_TEMPLATE, like the step charts
        config=PLOTLY_CONFIG,
    )
    labels = [f"{j} {tok}" for j, tok in enumerate(tr.tokens)]
    import pandas as pd  # see cell_panel

    frame = pd.DataFrame(
        r.contributions, index=labels, columns=[f"d{k}" for k in range(r.contributions.shape[1])]
    )
    frame.insert(0, t("playground.row_col_weight"), r.weights)
    frame.loc[t("playground.row_sum")] = [r.weights.sum(), *r.output]
    st.markdown(t("playground.row_table", i=i))
    st.dataframe(frame, height=kit.table_height(len(frame)))
