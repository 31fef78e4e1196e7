"""Cost-at-scale lab: the n × n attention matrix's memory and FLOPs, a live measurement of the
NumPy core as n doubles, and tiled attention with an online softmax that never holds the matrix.

Thin page: widgets (``co_`` keys) -> cached core calls -> pure figure builders -> st.plotly_chart.
The live measurement runs only on a button press, is bounded by MAX_DIRECT_N, shows progress and
keeps its results in session_state. All text comes from the ``cost`` catalog.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.lab_cost import (
    DTYPE_BYTES,
    MAX_DIRECT_N,
    NOTES_SEQUENCE_LENGTHS,
    flops_table,
    measure_direct_attention,
    measure_tiled_attention,
    memory_table,
)
from attention_core.tiled import direct_attention, tiled_attention
from attention_ui import figures_cost
from attention_ui.state import translator

log = logging.getLogger(__name__)

KEEP = "session"
# The reference notes' FP16 one-head column, as printed there (data to compare against, not text).
NOTES_FIGURES = {2_048: "8 MB", 8_192: "128 MB", 32_768: "2 GB", 131_072: "32 GB", 1_000_000: "1.9 TB"}
CHART_NS = tuple(2**k for k in range(7, 21))  # 128 … 1,048,576
GPU_BYTES = 80 * 10**9  # a large accelerator's memory, as a yardstick on the memory chart
MEASURE_MIN_N = 128
MEASURE_CHOICES = tuple(n for n in (256, 512, 1024, 2048, 4096) if n <= MAX_DIRECT_N)
MEASURE_D = 64
TIME_REPEATS = 3  # best of 3 for the small sizes
REPEAT_UP_TO_N = 512
CHECK_NS = (64, 128, 256, 512, 1024, 2048)
BLOCKS = (16, 32, 64, 128, 256)
COUNT_RANGE = {"co_heads": (1, 256), "co_batch": (1, 1024), "co_layers": (1, 256)}
DK_RANGE = (1, 1024)
RESULTS = "co_results"  # list of measurement dicts, kept across reruns
RESULTS_META = "co_results_meta"

DEFAULTS = {
    "co_dtype": "fp16",
    "co_heads": 1,
    "co_batch": 1,
    "co_layers": 1,
    "co_dk": 64,
    "co_max_n": 2048,
    "co_block": 128,
    "co_check_n": 512,
    "co_check_block": 64,
    "co_causal": False,
    "co_tables": False,
}


@st.cache_data(max_entries=32, show_spinner=False)
def cached_memory(ns: tuple[int, ...], bytes_per_elem: int, heads: int, batch: int, layers: int):
    return memory_table(ns, bytes_per_elem, heads, batch, layers)


@st.cache_data(max_entries=32, show_spinner=False)
def cached_flops(ns: tuple[int, ...], d_k: int, heads: int):
    return flops_table(ns, d_k, None, heads)


@st.cache_data(max_entries=32, show_spinner=False)
def cached_check(n: int, block: int, causal: bool, seed: int = 0) -> dict:
    """Tiled vs direct on random Q, K, V (d = 64): the difference and the tiling's bookkeeping."""
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((n, MEASURE_D)) for _ in range(3))  # [n, d] each
    tiled = tiled_attention(Q, K, V, block, block, causal=causal)
    direct = direct_attention(Q, K, V, causal=causal)
    return {
        "max_abs_diff": float(np.max(np.abs(tiled.output - direct))),
        "tiles_computed": tiled.tiles_computed,
        "tiles_skipped": tiled.tiles_skipped,
        "max_tile_elements": tiled.max_tile_elements,
        "matrix_elements": n * n,
    }


def init_state() -> None:
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    st.session_state.setdefault(RESULTS, [])
    st.session_state.setdefault(RESULTS_META, None)


def chart(fig, key: str, alt: str) -> None:
    st.plotly_chart(fig, key=f"co_chart_{key}", alt=alt, width="stretch", config={"displaylogo": False})


def table(frame: pd.DataFrame, key: str) -> None:
    if st.session_state["co_tables"]:
        st.dataframe(frame, width="stretch", hide_index=True, key=f"co_table_{key}")


def section_notes_table(t) -> None:
    st.header(t("cost.sec_notes"), anchor="notes-table")
    st.markdown(t("cost.explain_notes"))
    mem, per, nbytes = t("cost.tex_memory"), t("cost.tex_bytes_per_element"), t("cost.tex_bytes")
    st.latex(rf"\text{{{mem}}} = n^2 \times \text{{{per}}} \qquad (\text{{FP16: }} 2\ \text{{{nbytes}}})")
    rows = cached_memory(NOTES_SEQUENCE_LENGTHS, DTYPE_BYTES["fp16"], 1, 1, 1)
    frame = pd.DataFrame(
        {
            "n": [r.n for r in rows],
            t("cost.col_elements"): [r.elements for r in rows],
            t("cost.col_bytes"): [r.bytes for r in rows],
            t("cost.col_decimal"): [f"{r.decimal_value:.3g} {r.decimal_unit}" for r in rows],
            t("cost.col_binary"): [f"{r.binary_value:.3g} {r.binary_unit}" for r in rows],
            t("cost.col_notes"): [NOTES_FIGURES.get(r.n, "—") for r in rows],
            t("cost.col_ratio"): [f"×{r.ratio_to_first:,.0f}" for r in rows],
        }
    )
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        key="co_table_notes",
        column_config={
            "n": st.column_config.NumberColumn(format="localized"),
            t("cost.col_elements"): st.column_config.NumberColumn(format="localized"),
            t("cost.col_bytes"): st.column_config.NumberColumn(format="localized"),
        },
    )
    last = rows[-1]
    st.info(
        t(
            "cost.units_note",
            decimal=f"{last.decimal_value:.2f} {last.decimal_unit}",
            binary=f"{last.binary_value:.2f} {last.binary_unit}",
        )
    )


def section_extended(t) -> None:
    st.header(t("cost.sec_extended"), anchor="extended")
    st.markdown(t("cost.explain_extended"))
    mem, batch, layers, nbytes = (t(f"cost.tex_{k}") for k in ("memory", "batch", "layers", "bytes"))
    st.latex(
        rf"\text{{{mem}}} = \text{{{batch}}} \times \text{{{layers}}} \times h \times n^2 \times \text{{{nbytes}}}"
    )
    c1, c2, c3, c4 = st.columns(4)
    c1.selectbox(
        t("cost.dtype"),
        tuple(DTYPE_BYTES),
        key="co_dtype",
        format_func=lambda d: t("cost.dtype_name", dtype=d.upper(), bytes=DTYPE_BYTES[d]),
        persist_state=KEEP,
    )
    for col, key in zip((c2, c3, c4), ("co_heads", "co_batch", "co_layers"), strict=True):
        col.number_input(t(f"cost.{key[3:]}"), *COUNT_RANGE[key], step=1, key=key, persist_state=KEEP)
    s = st.session_state
    dtype = s["co_dtype"] if s["co_dtype"] in DTYPE_BYTES else "fp16"
    heads, batch, layers = int(s["co_heads"]), int(s["co_batch"]), int(s["co_layers"])
    rows = cached_memory(NOTES_SEQUENCE_LENGTHS, DTYPE_BYTES[dtype], heads, batch, layers)
    frame = pd.DataFrame(
        {
            "n": [r.n for r in rows],
            t("cost.col_elements"): [r.elements for r in rows],
            t("cost.col_decimal"): [f"{r.decimal_value:.3g} {r.decimal_unit}" for r in rows],
            t("cost.col_binary"): [f"{r.binary_value:.3g} {r.binary_unit}" for r in rows],
            t("cost.col_gpus"): [f"{r.bytes / GPU_BYTES:,.2g}" for r in rows],
        }
    )
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        key="co_table_extended",
        column_config={
            "n": st.column_config.NumberColumn(format="localized"),
            t("cost.col_elements"): st.column_config.NumberColumn(format="localized"),
        },
    )
    st.caption(t("cost.gpus_note"))

    st.subheader(t("cost.sec_memory_chart"))
    series = {}
    for size in sorted(set(DTYPE_BYTES.values()), reverse=True):  # FP16 and BF16 share one line
        names = " / ".join(name.upper() for name, b in DTYPE_BYTES.items() if b == size)
        chart_rows = cached_memory(CHART_NS, size, heads, batch, layers)
        series[t("cost.dtype_name", dtype=names, bytes=size)] = [r.bytes for r in chart_rows]
    fig = figures_cost.loglog_figure(
        CHART_NS,
        series,
        x_title=t("cost.axis_n"),
        y_title=t("cost.axis_memory"),
        bytes_axis=True,
        reference={t("cost.gpu_line"): GPU_BYTES},
    )
    chart(fig, "memory", t("cost.alt_memory", heads=heads, batch=batch, layers=layers))
    table(pd.DataFrame({"n": CHART_NS, **series}), "memory")

    st.subheader(t("cost.sec_flops_chart"))
    st.number_input("d_k", *DK_RANGE, step=16, key="co_dk", help=t("cost.dk_help"), persist_state=KEEP)
    d_k = int(s["co_dk"])
    st.latex(r"\text{FLOPs} \approx h\,(2 n^2 d_k + 6 n^2 + 2 n^2 d_v)")
    flops = cached_flops(CHART_NS, d_k, heads)
    fseries = {
        t("cost.flops_scores"): [f.scores for f in flops],  # = A·V, since d_v = d_k here
        t("cost.flops_softmax"): [f.softmax for f in flops],
        t("cost.flops_total"): [f.total for f in flops],
    }
    fig = figures_cost.loglog_figure(
        CHART_NS, fseries, x_title=t("cost.axis_n"), y_title=t("cost.axis_flops")
    )
    chart(fig, "flops", t("cost.alt_flops", d_k=d_k, heads=heads))
    table(pd.DataFrame({"n": CHART_NS, **fseries}), "flops")
    ratio = flops[1].total / flops[0].total
    st.markdown(t("cost.flops_ratio", ratio=f"{ratio:.2f}"))


def measure_one(method: str, n: int, block: int):
    if method == "direct":
        return measure_direct_attention(n, MEASURE_D)
    return measure_tiled_attention(n, MEASURE_D, block=block)


def run_measurement(t, max_n: int, block: int) -> None:
    """Measure direct and tiled attention for n = 128, 256, …, max_n; progress as it goes."""
    max_n = int(min(max_n, MAX_DIRECT_N))
    ns = []
    n = MEASURE_MIN_N
    while n <= max_n:
        ns.append(n)
        n *= 2
    results: list[dict] = []
    measure_direct_attention(64, MEASURE_D)  # warm-up: the first BLAS call pays one-off set-up costs
    with st.status(t("cost.measure_running"), expanded=True) as status:
        bar = st.progress(0.0, text=t("cost.measure_progress", done=0, total=len(ns), n=ns[0]))
        try:
            for i, n in enumerate(ns):
                # Small sizes take milliseconds, so one run is mostly noise: keep the fastest of a few.
                repeats = TIME_REPEATS if n <= REPEAT_UP_TO_N else 1
                for method in ("direct", "tiled"):
                    runs = [measure_one(method, n, block) for _ in range(repeats)]
                    results.append(
                        {
                            "method": method,
                            "n": n,
                            "seconds": min(m.seconds for m in runs),
                            "peak_bytes": runs[0].peak_bytes,
                            "matrix_bytes": runs[0].matrix_bytes,
                        }
                    )
                bar.progress(
                    (i + 1) / len(ns), text=t("cost.measure_progress", done=i + 1, total=len(ns), n=n)
                )
        except Exception:  # keep what was measured; never a traceback
            log.exception("live measurement failed")
            status.update(label=t("cost.measure_failed"), state="error")
        else:
            status.update(label=t("cost.measure_done", count=len(ns)), state="complete", expanded=False)
    st.session_state[RESULTS] = results
    st.session_state[RESULTS_META] = {"max_n": max_n, "block": block, "d": MEASURE_D}


def measurement_frame(t, results: list[dict]) -> pd.DataFrame:
    """One row per n: direct and tiled time and peak, and the direct peak's step from the row above."""
    by = {(r["method"], r["n"]): r for r in results}
    ns = sorted({r["n"] for r in results})
    rows = []
    prev = None
    for n in ns:
        d, ti = by.get(("direct", n)), by.get(("tiled", n))
        step = d["peak_bytes"] / prev["peak_bytes"] if d and prev and prev["peak_bytes"] else None
        rows.append(
            {
                "n": n,
                t("cost.col_direct_peak"): figures_cost.format_bytes(d["peak_bytes"]) if d else "—",
                t("cost.col_step"): f"×{step:.2f}" if step else "—",
                t("cost.col_in_matrices"): f"{d['peak_bytes'] / d['matrix_bytes']:.1f}" if d else "—",
                t("cost.col_tiled_peak"): figures_cost.format_bytes(ti["peak_bytes"]) if ti else "—",
                t("cost.col_direct_time"): f"{d['seconds'] * 1000:.1f}" if d else "—",
                t("cost.col_tiled_time"): f"{ti['seconds'] * 1000:.1f}" if ti else "—",
            }
        )
        prev = d
    return pd.DataFrame(rows)


def section_measure(t) -> None:
    st.header(t("cost.sec_measure"), anchor="measure")
    st.markdown(t("cost.explain_measure", d=MEASURE_D, limit=f"{MAX_DIRECT_N:,}"))
    c1, c2 = st.columns([3, 1])
    c1.select_slider(
        t("cost.max_n"), MEASURE_CHOICES, key="co_max_n", help=t("cost.max_n_help"), persist_state=KEEP
    )
    c2.select_slider(t("cost.block"), BLOCKS, key="co_block", help=t("cost.block_help"), persist_state=KEEP)
    b1, b2 = st.columns([1, 1])
    if b1.button(t("cost.measure_button"), key="co_run", type="primary", icon=":material/timer:"):
        run_measurement(t, int(st.session_state["co_max_n"]), int(st.session_state["co_block"]))
    if st.session_state[RESULTS] and b2.button(t("cost.clear_button"), key="co_clear"):
        st.session_state[RESULTS] = []
        st.session_state[RESULTS_META] = None

    results = st.session_state[RESULTS]
    if not results:
        st.caption(t("cost.measure_hint"))
        return
    meta = st.session_state[RESULTS_META] or {}
    st.markdown(t("cost.measure_meta", max_n=f"{meta.get('max_n', 0):,}", block=meta.get("block", "?")))
    st.dataframe(measurement_frame(t, results), hide_index=True, width="stretch", key="co_table_measure")
    direct = [r for r in results if r["method"] == "direct"]
    tiled = [r for r in results if r["method"] == "tiled"]
    ns = sorted({r["n"] for r in results})
    by = {(r["method"], r["n"]): r for r in results}
    peak_series = {
        t("cost.series_direct"): [
            by[("direct", n)]["peak_bytes"] if ("direct", n) in by else None for n in ns
        ],
        t("cost.series_tiled"): [by[("tiled", n)]["peak_bytes"] if ("tiled", n) in by else None for n in ns],
        t("cost.series_matrix"): [n * n * 8 for n in ns],
    }
    fig = figures_cost.loglog_figure(
        ns,
        peak_series,
        x_title=t("cost.axis_n"),
        y_title=t("cost.axis_peak"),
        bytes_axis=True,
        height=360,
        x_ticks=ns,
    )
    chart(fig, "peak", t("cost.alt_peak", count=len(ns)))
    time_series = {
        t("cost.series_direct"): [by[("direct", n)]["seconds"] if ("direct", n) in by else None for n in ns],
        t("cost.series_tiled"): [by[("tiled", n)]["seconds"] if ("tiled", n) in by else None for n in ns],
    }
    fig = figures_cost.loglog_figure(
        ns,
        time_series,
        x_title=t("cost.axis_n"),
        y_title=t("cost.axis_seconds"),
        y_hover="%{y:.3g} s",
        height=320,
        x_ticks=ns,
    )
    chart(fig, "time", t("cost.alt_time", count=len(ns)))
    if len(direct) >= 2:
        steps = [
            b["peak_bytes"] / a["peak_bytes"]
            for a, b in zip(direct, direct[1:], strict=False)
            if a["peak_bytes"]
        ]
        last_tiled = tiled[-1] if tiled else None
        st.success(
            t(
                "cost.measure_lesson",
                step=f"{float(np.median(steps)):.2f}",
                n=f"{direct[-1]['n']:,}",
                direct=figures_cost.format_bytes(direct[-1]["peak_bytes"]),
                tiled=figures_cost.format_bytes(last_tiled["peak_bytes"]) if last_tiled else "—",
            )
        )
    st.warning(t("cost.time_noise"))


def section_tiled(t) -> None:
    st.header(t("cost.sec_tiled"), anchor="tiled")
    st.markdown(t("cost.explain_tiled"))
    st.latex(
        r"m' = \max(m, \max_j s_j),\quad \ell' = e^{m - m'}\,\ell + \sum_j e^{s_j - m'},\quad "
        r"a' = e^{m - m'}\,a + \sum_j e^{s_j - m'}\, v_j,\qquad "
        rf"\text{{{t('cost.tex_out')}}} = a / \ell"
    )
    c1, c2, c3 = st.columns([2, 2, 1])
    c1.select_slider("n", CHECK_NS, key="co_check_n", persist_state=KEEP)
    c2.select_slider(
        t("cost.block"), BLOCKS, key="co_check_block", help=t("cost.block_help"), persist_state=KEEP
    )
    c3.toggle(t("cost.causal"), key="co_causal", persist_state=KEEP)
    s = st.session_state
    n, block, causal = int(s["co_check_n"]), int(s["co_check_block"]), bool(s["co_causal"])
    try:
        check = cached_check(n, block, causal)
    except Exception:
        log.exception("tiled check failed")
        st.error(t("cost.err_unexpected"))
        return
    m1, m2, m3 = st.columns(3)
    m1.metric(t("cost.check_diff"), f"{check['max_abs_diff']:.2e}")
    m2.metric(
        t("cost.check_tiles"),
        f"{check['tiles_computed']} / {check['tiles_computed'] + check['tiles_skipped']}",
    )
    m3.metric(
        t("cost.check_tile_share"),
        f"{check['max_tile_elements']:,} / {check['matrix_elements']:,}",
    )
    if check["max_abs_diff"] <= 1e-10:
        st.success(t("cost.check_ok", diff=f"{check['max_abs_diff']:.2e}"))
    else:
        st.error(t("cost.check_bad", diff=f"{check['max_abs_diff']:.2e}"))
    fig = figures_cost.tile_grid_figure(
        n,
        block,
        causal,
        x_title=t("cost.axis_key_tile"),
        y_title=t("cost.axis_query_tile"),
        computed=t("cost.tile_computed"),
        skipped=t("cost.tile_skipped"),
    )
    grid = figures_cost.tile_grid(n, block, causal)
    tiles = grid.shape[0]
    left, _ = st.columns([1, 1])
    with left:
        chart(fig, "tiles", t("cost.alt_tiles", tiles=tiles, block=block, n=n))
    words = np.where(grid > 0, t("cost.tile_computed"), t("cost.tile_skipped"))
    labels = [str(i) for i in range(tiles)]
    table(pd.DataFrame(words, index=labels, columns=labels).reset_index(names="#"), "tiles")
    st.caption(t("cost.tiles_note_causal" if causal else "cost.tiles_note_full"))


def section_methods(t) -> None:
    st.header(t("cost.sec_methods"), anchor="methods")
    st.markdown(t("cost.explain_methods"))
    for name in ("flash", "gqa", "linear", "ring"):
        with st.expander(t(f"cost.method_{name}_title"), expanded=True):
            st.markdown(t(f"cost.method_{name}"))


def main() -> None:
    t = translator()
    init_state()
    st.title(t("cost.title"))
    st.markdown(t("cost.intro"))
    st.toggle(t("cost.show_tables"), key="co_tables", persist_state=KEEP)
    section_notes_table(t)
    section_extended(t)
    section_measure(t)
    section_tiled(t)
    section_methods(t)


main()
