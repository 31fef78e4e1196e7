"""The cost lab's sections on efficient attention (issue 14, part 3): the sliding window as a saving of
work (checked on request-free sizes, timed on request) and linear attention on the learner's
sentence, plus the table of which methods compute the same thing.

Called by ``app_pages/cost.py`` with its page kit (``cost_`` keys, ``cost`` catalog). Widgets ->
``attention_core.labs.efficient`` (cached) -> ``attention_ui.figures`` -> the page kit.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import streamlit as st

from attention_core.labs import efficient as lab_efficient
from attention_ui import kit
from attention_ui.cost.settings import TABLE, WINDOW_BLOCKS, WINDOW_NS, WINDOWS
from attention_ui.figures import cost as figures_cost
from attention_ui.figures import heatmaps
from attention_ui.figures.base import AxisText

WINDOW_RESULTS = TABLE.key("window_results")  # the window timing's WindowTimings, kept across reruns
TIMING_BLOCK = 128
LINEAR_D = 64  # d_k = d_v of the FLOPs comparison
FLOPS_NS = tuple(2**k for k in range(7, 17))  # 128 … 65,536
EXACT_N, EXACT_WINDOW = 256, 32

cached_window = kit.cached(lab_efficient.window_check)
cached_linear = kit.cached(lab_efficient.linear_lab)
cached_exactness = st.cache_resource(max_entries=4, show_spinner=False)(lab_efficient.exactness)


EXACT_TOL = 1e-10  # the largest |difference| a check calls equal (float64 rounding here is ~1e-15)


def report_check(t, gap: float, ok_key: str, **values: object) -> None:
    """A check's verdict: ``ok_key`` (given ``diff`` and ``values``) while ``gap`` is within
    :data:`EXACT_TOL`, else ``cost.check_bad`` (a gap the learner must not take for rounding)."""
    diff = f"{gap:.2e}"
    if gap <= EXACT_TOL:
        st.success(t(ok_key, diff=diff, **values))
    else:
        st.error(t("cost.check_bad", diff=diff))


def tile_grid_chart(
    t, page: kit.Page, check, n: int, block: int, skipped_key: str, name: str, alt: str
) -> dict:
    """A check's tile grid (formed or skipped, ``skipped_key`` naming the skipped ones) in the left
    half of the page; returns the two words by whether a tile was formed (``{True: …, False: …}``).
    The tiled check and the window check draw theirs with it."""
    words = {True: t("cost.tile_computed"), False: t(skipped_key)}
    labels = dict(computed=words[True], skipped=words[False])
    labels.update(axes=AxisText(t("cost.axis_key_tile"), t("cost.axis_query_tile")))
    with st.columns([1, 1])[0]:
        fig = figures_cost.tile_grid_figure(check.grid, n, block, **labels)
        page.chart(fig, name, alt)
    return words


def timed(t, points: Iterator, ns: Sequence[int]) -> list:
    """A timing over the sizes ``ns`` (``points``: a generator that measures one n at a time) behind the
    cost lab's progress bar; what was measured, up to a failure if one n fails. The page's sweep and
    the window timing run through it."""

    def step(done: int, point) -> str:
        return t("cost.measure_progress", done=done, total=len(ns), n=point.n if point else ns[0])

    running, finished, failed = (
        t("cost.measure_running"),
        t("cost.measure_done", count=len(ns)),
        t("cost.measure_failed"),
    )
    return kit.progress(points, len(ns), running=running, step=step, done=finished, failed=failed)


def run_window_timing(t, window: int) -> None:
    """The window timing, n = 256 … 4,096, with progress; what was measured is kept."""
    ns = lab_efficient.WINDOW_SWEEP_NS
    st.session_state[WINDOW_RESULTS] = timed(t, lab_efficient.window_timing(ns, window, TIMING_BLOCK), ns)


def window_timing_results(t, page: kit.Page) -> None:
    points = st.session_state[WINDOW_RESULTS]
    if not points:
        st.caption(t("cost.win_time_hint"))
        return
    first = points[0]
    st.markdown(t("cost.win_time_meta", w=first.window, block=first.block, d=lab_efficient.WINDOW_D))
    ns = [p.n for p in points]
    table = {
        "n": ns,
        t("cost.col_full_direct"): [f"{p.full_direct * 1000:.1f}" for p in points],
        t("cost.col_full_tiled"): [f"{p.full_tiled * 1000:.1f}" for p in points],
        t("cost.col_window_tiled"): [f"{p.window_tiled * 1000:.1f}" for p in points],
        t("cost.col_ratio_tiled"): [f"×{p.ratio_tiled:.2f}" for p in points],
        t("cost.col_ratio_direct"): [f"×{p.ratio_direct:.2f}" for p in points],
        t("cost.col_tiles"): [f"{p.tiles_window} / {p.tiles_full}" for p in points],
    }
    page.table(table, "window_time", always=True, hide_index=True)
    times = {
        t("cost.col_full_direct"): [p.full_direct for p in points],
        t("cost.col_full_tiled"): [p.full_tiled for p in points],
        t("cost.col_window_tiled"): [p.window_tiled for p in points],
    }
    axes = AxisText(t("cost.axis_n"), t("cost.axis_seconds"))
    fig = figures_cost.loglog_figure(ns, times, axes=axes, y_hover="%{y:.3g} s", height=340, x_ticks=ns)
    page.chart(fig, "window_time", t("cost.alt_window_time", count=len(ns)))
    last = points[-1]
    st.success(t("cost.win_time_lesson", n=f"{last.n:,}", ratio=f"{last.ratio_tiled:.1f}"))
    st.warning(t("cost.win_time_noise"))


def section_window(t, page: kit.Page) -> None:
    kit.opening(
        t("cost.sec_window"),
        t("cost.explain_window"),
        r"\mathcal{A}_i = \{\, j : i - w < j \le i \,\}",
        anchor="sliding-window",
    )
    c1, c2, c3 = st.columns(3)
    page.widget(t, "select_slider", "win_n", WINDOW_NS, label="n", where=c1)
    page.widget(t, "select_slider", "window", WINDOWS, helped=True, where=c2)
    page.widget(t, "select_slider", "win_block", WINDOW_BLOCKS, text="block", helped=True, where=c3)
    s = st.session_state
    n, window, block = int(s[page.key("win_n")]), int(s[page.key("window")]), int(s[page.key("win_block")])
    with page.guard(t, "window check") as run:
        check = cached_window(n, window, block)
    if run.failed:
        return
    diff, model = f"{check.max_abs_diff:.2e}", f"{check.diff_to_causal:.2e}"
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(t("cost.win_diff"), diff)
    m2.metric(t("cost.win_model_diff"), model)
    m3.metric(t("cost.check_tiles"), f"{check.tiles_computed} / {check.tiles_total}")
    m4.metric(t("cost.win_scores"), f"{check.scores_formed / (n * n):.1%}")
    report_check(t, check.max_abs_diff, "cost.win_ok")
    st.markdown(
        t(
            "cost.win_counts",
            needed=f"{check.scores_needed:,}",
            formed=f"{check.scores_formed:,}",
            full=f"{n * n:,}",
        )
    )
    st.markdown(t("cost.win_model", diff=model, w=window) if n > window else t("cost.win_same", w=window))
    alt = t("cost.alt_window_tiles", tiles=len(check.grid), block=block, n=n, w=window)
    tile_grid_chart(t, page, check, n, block, "cost.tile_skipped_window", "window_tiles", alt)
    st.subheader(t("cost.sec_window_time"), anchor="window-time")
    st.markdown(
        t("cost.explain_window_time", block=TIMING_BLOCK, top=f"{lab_efficient.WINDOW_SWEEP_NS[-1]:,}")
    )
    b1, b2 = st.columns([1, 1])
    if b1.button(t("cost.win_time_button"), key=page.key("win_run"), icon=":material/timer:"):
        run_window_timing(t, window)
    if st.session_state[WINDOW_RESULTS] and b2.button(t("cost.clear_button"), key=page.key("win_clear")):
        st.session_state[WINDOW_RESULTS] = ()
    window_timing_results(t, page)
    st.info(t("cost.win_longformer"))


def section_linear(t, page: kit.Page) -> None:
    kit.opening(
        t("cost.sec_linear"),
        t("cost.explain_linear"),
        (
            r"\phi(x) = \mathrm{elu}(x) + 1,",
            r"S_i = S_{i-1} + \phi(k_i)\, v_i^\top,",
            r"z_i = z_{i-1} + \phi(k_i),",
            r"o_i = \frac{\phi(q_i)^\top S_i}{\phi(q_i)^\top z_i}",
        ),
        anchor="linear-attention",
    )
    page.widget(t, "text_area", "text", height=70, helped=True)
    page.sentence_origin(t, page.key("text"))
    text = page.value("text") or ""
    if not text.strip():
        st.error(t("cost.err_empty"))
        return
    with page.guard(t, "linear attention") as run:
        lab = cached_linear(text)
    if run.failed:
        return
    page.warn_truncated(t, lab.tokenization)
    diff = f"{lab.recurrence_vs_quadratic:.2e}"
    m1, m2, m3 = st.columns(3)
    m1.metric(t("cost.lin_diff"), diff)
    m2.metric(t("cost.lin_state"), f"{lab.state_shape[0]} × {lab.state_shape[1]}")
    m3.metric(t("cost.lin_weight_diff"), f"{lab.weight_diff:.3f}")
    report_check(t, lab.recurrence_vs_quadratic, "cost.lin_ok", n=len(lab.tokens), d=lab.d_k)
    hover, n = page.hover(t), len(lab.tokens)
    axes = dict(hover=hover, query_title=t("cost.axis_query"), key_title=t("cost.axis_key"))
    maps = {
        "softmax_weights": lab.softmax_weights,
        "linear_weights": lab.linear_weights,
    }
    for column, (name, weights) in zip(st.columns(2), maps.items(), strict=True):
        column.markdown(f"**{t('cost.' + name)}**")
        with column:
            fig = heatmaps.attention_heatmap(weights, lab.tokens, kind="weights", **axes)
            page.chart(fig, name, t(f"cost.alt_{name}", n=n))
    rows = list(range(n))
    if page.value("lin_row") not in rows:  # a new sentence: show its last query
        st.session_state[page.key("lin_row")] = n - 1
    page.widget(t, "selectbox", "lin_row", rows, format_func=lambda i: f"{i}: {lab.tokens[i]}", helped=True)
    row = int(page.value("lin_row"))
    keys = lab.tokens[: row + 1]
    series = {
        t("cost.softmax_weights"): list(lab.softmax_weights[row, : row + 1]),
        t("cost.linear_weights"): list(lab.linear_weights[row, : row + 1]),
    }
    fig = figures_cost.weight_rows_figure(
        keys, series, axes=AxisText(t("cost.axis_key"), t("cost.axis_weight"))
    )
    page.chart(fig, "linear_row", t("cost.alt_linear_row", row=row))
    top = dict(soft=f"{lab.softmax_top.mean():.3f}", lin=f"{lab.linear_top.mean():.3f}")
    st.markdown(t("cost.lin_sharpness", **top))
    st.subheader(t("cost.sec_linear_flops"), anchor="linear-flops")
    ns = FLOPS_NS
    d = LINEAR_D
    series = {
        t("cost.flops_softmax_attention"): [lab_efficient.softmax_attention_flops(x, d, d) for x in ns],
        t("cost.flops_causal_softmax"): [lab_efficient.causal_softmax_attention_flops(x, d, d) for x in ns],
        t("cost.flops_linear_attention"): [lab_efficient.linear_attention_flops(x, d, d) for x in ns],
    }
    fig = figures_cost.loglog_figure(ns, series, axes=AxisText(t("cost.axis_n"), t("cost.axis_flops")))
    page.chart(fig, "linear_flops", t("cost.alt_linear_flops", d=d))
    cross = lab_efficient.linear_crossover_n(d, d, d)
    cross_causal = lab_efficient.linear_crossover_n(d, d, d, causal=True)
    st.markdown(t("cost.lin_crossover", d=d, n=f"{cross:,}", n_causal=f"{cross_causal:,}"))


def section_exact(t, page: kit.Page) -> None:
    st.subheader(t("cost.sec_exact"), anchor="exact")
    n, window = EXACT_N, EXACT_WINDOW
    rows = cached_exactness(n, window)
    st.markdown(t("cost.explain_exact", n=n, w=window))
    table = {
        t("cost.col_method"): [t(f"cost.exact_{r.method}") for r in rows],
        t("cost.col_exact_diff"): [f"{r.max_abs_diff:.2e}" for r in rows],
        t("cost.col_same_model"): [
            t("cost.yes") if r.max_abs_diff <= EXACT_TOL else t("cost.no") for r in rows
        ],
    }
    page.table(table, "exact", always=True, hide_index=True)
    st.markdown(t("cost.exact_summary"))
