"""Cost-at-scale lab: memory and FLOPs of the n × n matrix, a live measurement as n doubles (on request,
bounded by MAX_DIRECT_N), tiled attention with an online softmax; the window, linear and ring sections
live in ``attention_ui.cost.efficient_view``/``ring_view``. Widgets (``cost_``) -> ``labs.cost`` -> figures.
"""

from __future__ import annotations

import streamlit as st

from attention_core.labs import cost as lab_cost
from attention_core.labs.cost import DTYPE_BYTES, MAX_DIRECT_N, NOTES_SEQUENCE_LENGTHS, SWEEP_D, format_bytes
from attention_ui import kit, practice
from attention_ui.cost import efficient_view as cost_efficient
from attention_ui.cost import ring_view as cost_ring
from attention_ui.cost.settings import BLOCKS, CHECK_NS, COUNT_RANGE, DK_RANGE, MEASURE_CHOICES, PAGE, TABLE
from attention_ui.figures import cost as figures_cost
from attention_ui.figures.base import AxisText

# The reference notes' FP16 one-head column, as printed there (data to compare against, not text).
NOTES_FIGURES = {2_048: "8 MB", 8_192: "128 MB", 32_768: "2 GB", 131_072: "32 GB", 1_000_000: "1.9 TB"}
CHART_NS = tuple(2**k for k in range(7, 21))  # 128 … 1,048,576
GPU_BYTES = 80 * 10**9  # a large accelerator's memory, as a yardstick on the memory chart
# one block's update of the running max, denominator and weighted sum (kit.latex: wraps on a phone)
ONLINE_SOFTMAX = (r"m' = \max(m, \max_j s_j),", r"\ell' = e^{m - m'}\,\ell + \sum_j e^{s_j - m'},",
                  r"a' = e^{m - m'}\,a + \sum_j e^{s_j - m'}\, v_j,")  # fmt: skip
key = TABLE.key
RESULTS, RESULTS_META = key("results"), key("results_meta")  # the live sweep, kept across reruns

cached_memory = kit.cached(lab_cost.memory_table)
cached_flops = kit.cached(lab_cost.flops_table)
cached_check = kit.cached(lab_cost.tiled_check)


def section_notes_table(t) -> None:
    st.header(t("cost.sec_notes"), anchor="notes-table")
    st.markdown(t("cost.explain_notes"))
    mem, per, nbytes = t("cost.tex_memory"), t("cost.tex_bytes_per_element"), t("cost.tex_bytes")
    st.latex(rf"\text{{{mem}}} = n^2 \times \text{{{per}}} \qquad (\text{{FP16: }} 2\ \text{{{nbytes}}})")
    rows = cached_memory(NOTES_SEQUENCE_LENGTHS, DTYPE_BYTES["fp16"], 1, 1, 1)
    columns = {
        "n": [r.n for r in rows],
        t("cost.col_elements"): [r.elements for r in rows],
        t("cost.col_bytes"): [r.bytes for r in rows],
        **figures_cost.unit_columns(t, rows),
        t("cost.col_notes"): [NOTES_FIGURES.get(r.n, "—") for r in rows],
        t("cost.col_ratio"): [f"×{r.ratio_to_first:,.0f}" for r in rows],
    }
    PAGE.table(columns, "notes", always=True, hide_index=True, localized=list(columns)[:3])
    last = rows[-1]
    decimal, binary = (
        f"{last.decimal_value:.2f} {last.decimal_unit}",
        f"{last.binary_value:.2f} {last.binary_unit}",
    )
    st.info(t("cost.units_note", decimal=decimal, binary=binary))


def section_extended(t) -> None:
    st.header(t("cost.sec_extended"), anchor="extended")
    st.markdown(t("cost.explain_extended"))
    mem, batch, layers, nbytes = (t(f"cost.tex_{k}") for k in ("memory", "batch", "layers", "bytes"))
    st.latex(
        rf"\text{{{mem}}} = \text{{{batch}}} \times \text{{{layers}}} \times h \times n^2 \times \text{{{nbytes}}}"
    )
    c1, *counts = st.columns(4)
    dtype_name = {d: t("cost.dtype_name", dtype=d.upper(), bytes=b) for d, b in DTYPE_BYTES.items()}
    PAGE.widget(t, "selectbox", "dtype", tuple(DTYPE_BYTES), format_func=dtype_name.get, where=c1)
    for column, name in zip(counts, COUNT_RANGE, strict=True):
        PAGE.widget(t, "number_input", name, *COUNT_RANGE[name], step=1, where=column)
    s = st.session_state
    dtype = s[key("dtype")] if s[key("dtype")] in DTYPE_BYTES else "fp16"
    heads, batch, layers = (int(s[key(name)]) for name in COUNT_RANGE)
    rows = cached_memory(NOTES_SEQUENCE_LENGTHS, DTYPE_BYTES[dtype], heads, batch, layers)
    columns = {"n": [r.n for r in rows], t("cost.col_elements"): [r.elements for r in rows]}
    columns |= figures_cost.unit_columns(t, rows) | {
        t("cost.col_gpus"): [f"{r.bytes / GPU_BYTES:,.2g}" for r in rows]
    }
    PAGE.table(columns, "extended", always=True, hide_index=True, localized=list(columns)[:2])
    st.caption(t("cost.gpus_note"))

    st.subheader(t("cost.sec_memory_chart"), anchor="memory-chart")
    series = {}
    for size, dtypes in lab_cost.dtypes_by_size().items():  # FP16 and BF16 share one line
        name = t("cost.dtype_name", dtype=" / ".join(d.upper() for d in dtypes), bytes=size)
        series[name] = [r.bytes for r in cached_memory(CHART_NS, size, heads, batch, layers)]
    gpu = {t("cost.gpu_line"): GPU_BYTES}
    axes = AxisText(t("cost.axis_n"), t("cost.axis_memory"))
    fig = figures_cost.loglog_figure(CHART_NS, series, axes=axes, bytes_axis=True, reference=gpu)
    PAGE.chart(fig, "memory", t("cost.alt_memory", heads=heads, batch=batch, layers=layers))
    PAGE.table({"n": CHART_NS, **series}, "memory", hide_index=True)

    st.subheader(t("cost.sec_flops_chart"), anchor="flops-chart")
    PAGE.widget(t, "number_input", "dk", *DK_RANGE, step=16, label="d_k", help=t("cost.dk_help"))
    d_k = int(s[key("dk")])
    st.latex(r"\text{FLOPs} \approx h\,(2 n^2 d_k + 6 n^2 + 2 n^2 d_v)")
    flops = cached_flops(CHART_NS, d_k, None, heads)
    fseries = {
        t("cost.flops_scores"): [f.scores for f in flops],  # = A·V, since d_v = d_k here
        t("cost.flops_softmax"): [f.softmax for f in flops],
        t("cost.flops_total"): [f.total for f in flops],
    }
    fig = figures_cost.loglog_figure(CHART_NS, fseries, axes=AxisText(t("cost.axis_n"), t("cost.axis_flops")))
    PAGE.chart(fig, "flops", t("cost.alt_flops", d_k=d_k, heads=heads))
    PAGE.table({"n": CHART_NS, **fseries}, "flops", hide_index=True)
    st.markdown(t("cost.flops_ratio", ratio=f"{flops[1].total / flops[0].total:.2f}"))


def run_measurement(t, max_n: int, block: int) -> None:
    """The live sweep, n = 128, 256, … max_n, with progress; what was measured is kept."""
    sizes = lab_cost.sweep_sizes(max_n)
    st.session_state[RESULTS] = cost_efficient.timed(t, lab_cost.measure_sweep(max_n, block), sizes)
    st.session_state[RESULTS_META] = {"max_n": min(max_n, MAX_DIRECT_N), "block": block, "d": SWEEP_D}


def section_measure(t) -> None:
    st.header(t("cost.sec_measure"), anchor="measure")
    st.markdown(t("cost.explain_measure", d=SWEEP_D, limit=f"{MAX_DIRECT_N:,}"))
    c1, c2 = st.columns([3, 1])
    PAGE.widget(t, "select_slider", "max_n", MEASURE_CHOICES, helped=True, where=c1)
    PAGE.widget(t, "select_slider", "block", BLOCKS, helped=True, where=c2)
    b1, b2 = st.columns([1, 1])
    if b1.button(t("cost.measure_button"), key=key("run"), type="primary", icon=":material/timer:"):
        run_measurement(t, int(PAGE.value("max_n")), int(PAGE.value("block")))
    if st.session_state[RESULTS] and b2.button(t("cost.clear_button"), key=key("clear")):
        st.session_state[RESULTS], st.session_state[RESULTS_META] = [], None
    points = st.session_state[RESULTS]
    if not points:
        st.caption(t("cost.measure_hint"))
        return
    meta, summary = st.session_state[RESULTS_META] or {}, lab_cost.summarise_sweep(points)
    st.markdown(t("cost.measure_meta", max_n=f"{meta.get('max_n', 0):,}", block=meta.get("block", "?")))
    ns = [p.n for p in points]
    table = {
        "n": ns,
        t("cost.col_direct_peak"): [format_bytes(p.direct.peak_bytes) for p in points],
        t("cost.col_step"): [f"×{x:.2f}" if x else "—" for x in summary.steps],
        t("cost.col_in_matrices"): [f"{p.direct.peak_bytes / p.direct.matrix_bytes:.1f}" for p in points],
        t("cost.col_tiled_peak"): [format_bytes(p.tiled.peak_bytes) for p in points],
        t("cost.col_direct_time"): [f"{p.direct.seconds * 1000:.1f}" for p in points],
        t("cost.col_tiled_time"): [f"{p.tiled.seconds * 1000:.1f}" for p in points],
    }
    PAGE.table(table, "measure", always=True, hide_index=True)
    peaks = {
        t("cost.series_direct"): [p.direct.peak_bytes for p in points],
        t("cost.series_tiled"): [p.tiled.peak_bytes for p in points],
        t("cost.series_matrix"): [p.direct.matrix_bytes for p in points],
    }
    axes = AxisText(t("cost.axis_n"), t("cost.axis_peak"))
    fig = figures_cost.loglog_figure(ns, peaks, axes=axes, bytes_axis=True, height=360, x_ticks=ns)
    PAGE.chart(fig, "peak", t("cost.alt_peak", count=len(ns)))
    times = {
        t("cost.series_direct"): [p.direct.seconds for p in points],
        t("cost.series_tiled"): [p.tiled.seconds for p in points],
    }
    axes = AxisText(t("cost.axis_n"), t("cost.axis_seconds"))
    fig = figures_cost.loglog_figure(ns, times, axes=axes, y_hover="%{y:.3g} s", height=320, x_ticks=ns)
    PAGE.chart(fig, "time", t("cost.alt_time", count=len(ns)))
    if summary.median_step is not None:
        last, step = points[-1], f"{summary.median_step:.2f}"
        direct, tiled = format_bytes(last.direct.peak_bytes), format_bytes(last.tiled.peak_bytes)
        st.success(t("cost.measure_lesson", step=step, n=f"{last.n:,}", direct=direct, tiled=tiled))
    st.warning(t("cost.time_noise"))


def section_tiled(t) -> None:
    out = rf"\text{{{t('cost.tex_out')}}} = a / \ell"
    kit.opening(t("cost.sec_tiled"), t("cost.explain_tiled"), (*ONLINE_SOFTMAX, out), anchor="tiled")
    c1, c2, c3 = st.columns([2, 2, 1])
    PAGE.widget(t, "select_slider", "check_n", CHECK_NS, label="n", where=c1)
    PAGE.widget(t, "select_slider", "check_block", BLOCKS, text="block", helped=True, where=c2)
    PAGE.widget(t, "toggle", "causal", where=c3)
    s = st.session_state
    n, block, causal = int(s[key("check_n")]), int(s[key("check_block")]), bool(s[key("causal")])
    with PAGE.guard(t, "tiled check") as run:
        check = cached_check(n, block, causal)
    if run.failed:
        return
    diff = f"{check.max_abs_diff:.2e}"
    m1, m2, m3 = st.columns(3)
    m1.metric(t("cost.check_diff"), diff)
    m2.metric(t("cost.check_tiles"), f"{check.tiles_computed} / {check.tiles_computed + check.tiles_skipped}")
    m3.metric(t("cost.check_tile_share"), f"{check.max_tile_elements:,} / {check.matrix_elements:,}")
    cost_efficient.report_check(t, check.max_abs_diff, "cost.check_ok")
    tiles = len(check.grid)
    alt = t("cost.alt_tiles", tiles=tiles, block=block, n=n)
    words = cost_efficient.tile_grid_chart(t, PAGE, check, n, block, "cost.tile_skipped", "tiles", alt)
    grid_words = {str(k): [words[bool(row[k])] for row in check.grid] for k in range(tiles)}
    PAGE.table({"#": [str(i) for i in range(tiles)], **grid_words}, "tiles", hide_index=True)
    st.caption(t("cost.tiles_note_causal" if causal else "cost.tiles_note_full"))


def section_methods(t) -> None:
    st.header(t("cost.sec_methods"), anchor="methods")
    st.markdown(t("cost.explain_methods"))
    for name in ("flash", "gqa", "linear", "ring"):
        with st.expander(t(f"cost.method_{name}_title"), expanded=True):
            st.markdown(t(f"cost.method_{name}"))
    cost_efficient.section_exact(t, PAGE)


@PAGE.slides
def main() -> None:
    t = PAGE.start()
    PAGE.title(t)
    PAGE.tables_toggle(t)
    if not practice.predict_view.cost_lab(t):  # practice mode: predict before the tables and charts
        return
    for section in (section_notes_table, section_extended, section_measure, section_tiled):
        PAGE.section(section, t)
    for section in (cost_efficient.section_window, cost_efficient.section_linear):
        PAGE.section(section, t, PAGE)
    PAGE.section(section_methods, t)
    PAGE.section(cost_ring.section_ring, t, PAGE)


main()
