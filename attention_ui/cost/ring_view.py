"""The cost lab's ring attention section (issue 29): P simulated devices, the schedule, one query row's
running state, causal skipping and load, and the per-device costs with the overlap condition.

Called by ``app_pages/cost.py`` with its page kit (``cost_ring_`` keys); text: the ``ring`` catalog.
Widgets -> ``attention_core.labs.ring`` (cached) -> ``attention_ui.cost.ring_figures`` -> the page kit.
"""

from __future__ import annotations

import streamlit as st

from attention_core.labs import ring as lab_ring
from attention_core.labs.cost import DTYPE_BYTES, format_bytes
from attention_ui import kit
from attention_ui.cost import ring_figures as figures_ring
from attention_ui.cost.settings import BANDWIDTH_RANGE, COST_D_RANGE, COST_N_RANGE, RATE_RANGE, RING_NS
from attention_ui.figures import cost as figures_cost
from attention_ui.figures.base import AxisText

RING_D = 16
TIME_NS = tuple(2**k for k in range(10, 25))  # 1,024 … 16,777,216
TOLERANCE = 1e-12

cached_ring = kit.cached(lab_ring.ring_lab)


def widget(t, page: kit.Page, kind: str, name: str, *args, where=st, **kwargs):
    """The page's setting ``ring_<name>`` (lower case) as a widget labelled ``ring.<name>`` with the
    tooltip ``ring.<name>_help``."""
    return page.widget(
        t,
        kind,
        f"ring_{name.lower()}",
        *args,
        label=t(f"ring.{name}"),
        help=t(f"ring.{name}_help"),
        where=where,
        **kwargs,
    )


def section_ring(t, page: kit.Page) -> None:
    kit.opening(
        t("ring.title"),
        t("ring.intro"),
        r"\text{" + t("ring.tex_block") + r"}(p, t) = (p - t) \bmod P",
        anchor="ring-attention",
    )
    c1, c2, c3, c4 = st.columns([2, 2, 1, 1])
    widget(t, page, "slider", "P", *lab_ring.P_RANGE, where=c1)
    widget(t, page, "select_slider", "n", RING_NS, where=c2)
    s, key = st.session_state, page.key
    n, P = int(s[key("ring_n")]), int(s[key("ring_p")])
    if not 0 <= int(s[key("ring_row")]) < n:  # a smaller n: follow its last row
        s[key("ring_row")] = n - 1
    widget(t, page, "number_input", "row", 0, n - 1, step=1, where=c3)
    widget(t, page, "toggle", "causal", where=c4)
    causal, row = bool(s[key("ring_causal")]), int(s[key("ring_row")])
    with page.guard(t, "ring attention") as run:
        lab = cached_ring(n, RING_D, P, causal, row)
    if run.failed:
        return
    ring, diff = lab.ring, f"{lab.max_abs_diff:.2e}"
    m = st.columns(4)
    m[0].metric(t("ring.metric_diff"), diff)
    m[1].metric(t("ring.metric_blocks"), f"{lab.blocks_computed} / {lab.blocks_total}")
    m[2].metric(t("ring.metric_steps"), P)
    m[3].metric(
        t("ring.metric_busiest"), f"{int(ring.blocks_per_device.max())} / {int(ring.blocks_per_device.min())}"
    )
    if lab.max_abs_diff <= TOLERANCE:
        st.success(t("ring.ok", diff=diff, n=n, P=P, d=RING_D))
    else:
        st.error(t("ring.bad", diff=diff))
    left, right = st.columns(2)
    with left:
        st.subheader(t("ring.schedule_title"), anchor="ring-schedule")
        words = dict(
            computed_word=t("ring.folded"), skipped_word=t("ring.skipped"), block_word=t("ring.block")
        )
        fig = figures_ring.schedule_figure(
            ring.schedule, ring.computed, axes=AxisText(t("ring.axis_step"), t("ring.axis_device")), **words
        )
        page.chart(fig, "ring_schedule", t("ring.alt_schedule", P=P, folded=lab.blocks_computed))
        st.caption(t("ring.schedule_note"))
    with right:
        st.subheader(t("ring.row_title", row=row), anchor="ring-row")
        blocks = [int(b) for b in ring.schedule[ring.row_device]]
        fig = figures_ring.running_state_figure(
            ring.row_max,
            ring.row_denom,
            blocks,
            x_title=t("ring.axis_step"),
            max_title=t("ring.axis_max"),
            denom_title=t("ring.axis_denom"),
            block_word=t("ring.block"),
        )
        page.chart(fig, "ring_row", t("ring.alt_row", row=row, device=ring.row_device, P=P))
        st.caption(t("ring.row_note", row=row, device=ring.row_device))
    page.table(
        {
            t("ring.axis_step"): list(range(P)),
            t("ring.block"): blocks,
            "m": [f"{v:.6g}" for v in ring.row_max],
            "ℓ": [f"{v:.6g}" for v in ring.row_denom],
        },
        "ring_row",
        hide_index=True,
    )
    section_load(t, page, lab)
    section_costs(t, page, P)


def section_load(t, page: kit.Page, lab) -> None:
    P, n = lab.P, lab.n
    st.subheader(t("ring.load_title"), anchor="ring-load")
    removed = lab.blocks_total - lab.blocks_computed
    if lab.causal:
        st.markdown(
            t(
                "ring.load_causal",
                removed=removed,
                total=lab.blocks_total,
                share=f"{removed / lab.blocks_total:.0%}",
                P=P,
            )
        )
    else:
        st.markdown(t("ring.load_full", total=lab.blocks_total))
    blocks = {t("ring.series_folded"): list(lab.ring.blocks_per_device)}
    fig = figures_ring.load_figure(
        blocks, axes=AxisText(t("ring.axis_device"), t("ring.axis_blocks")), height=260
    )
    page.chart(fig, "ring_load", t("ring.alt_load", P=P))
    pairs = {
        t(f"ring.order_{o}"): lab_ring.causal_pairs_per_device(n, P, o)
        for o in lab_ring.ORDERINGS
        if n >= 2 * P or o != "zigzag"
    }
    spread = {name: f"{v.max() / v.min():.2f}" for name, v in pairs.items()}
    fig = figures_ring.load_figure(
        {k: list(v) for k, v in pairs.items()},
        axes=AxisText(t("ring.axis_device"), t("ring.axis_pairs")),
        height=300,
    )
    page.chart(fig, "ring_orders", t("ring.alt_orders", n=n, P=P))
    st.markdown(t("ring.orders_note", n=n, P=P, spread=", ".join(f"{k} ×{v}" for k, v in spread.items())))


def section_costs(t, page: kit.Page, P: int) -> None:
    st.subheader(t("ring.cost_title"), anchor="ring-costs")
    st.markdown(t("ring.cost_intro", P=P))
    c = st.columns(5)
    widget(t, page, "number_input", "cost_n", *COST_N_RANGE, step=1024, where=c[0])
    widget(t, page, "number_input", "cost_d", *COST_D_RANGE, step=16, where=c[1])
    names = {d: t("cost.dtype_name", dtype=d.upper(), bytes=b) for d, b in DTYPE_BYTES.items()}
    widget(t, page, "selectbox", "dtype", tuple(DTYPE_BYTES), format_func=names.get, where=c[2])
    widget(t, page, "number_input", "bw", *BANDWIDTH_RANGE, step=10.0, where=c[3])
    widget(t, page, "number_input", "rate", *RATE_RANGE, step=10.0, where=c[4])
    s, key = st.session_state, page.key
    n, d = int(s[key("ring_cost_n")]), int(s[key("ring_cost_d")])
    beta = DTYPE_BYTES.get(s[key("ring_dtype")], 2)
    bw, rate = float(s[key("ring_bw")]) * 1e9, float(s[key("ring_rate")]) * 1e12
    if n < P:
        st.error(t("ring.err_n", P=P))
        return
    with page.guard(t, "ring costs") as run:
        cost = lab_ring.ring_costs(n, d, P, beta, bw, rate)
    if run.failed:
        return
    parts = ("q", "kv_now", "kv_next", "state", "scores")
    table = {
        t("ring.col_part"): [t(f"ring.part_{p}") for p in parts]
        + [t("ring.part_total"), t("ring.part_full")],
        t("ring.col_elements"): [cost.memory[p] for p in parts]
        + [cost.device_bytes // beta, cost.full_matrix_bytes // beta],
        t("ring.col_bytes"): [format_bytes(cost.memory[p] * beta) for p in parts]
        + [format_bytes(cost.device_bytes), format_bytes(cost.full_matrix_bytes)],
    }
    page.table(table, "ring_memory", always=True, hide_index=True, localized=[t("ring.col_elements")])
    st.markdown(
        t(
            "ring.memory_note",
            b=f"{cost.block:,}",
            device=format_bytes(cost.device_bytes),
            full=format_bytes(cost.full_matrix_bytes),
            ratio=f"{cost.full_matrix_bytes / cost.device_bytes:,.0f}",
        )
    )
    m = st.columns(4)
    m[0].metric(t("ring.metric_send_step"), format_bytes(cost.send_bytes_per_step))
    m[1].metric(t("ring.metric_send_total"), format_bytes(cost.send_bytes_total))
    m[2].metric(t("ring.metric_compute"), f"{cost.compute_seconds * 1e3:.3g} ms")
    m[3].metric(t("ring.metric_transfer"), f"{cost.transfer_seconds * 1e3:.3g} ms")
    st.markdown(t("ring.send_note", per=format_bytes(cost.send_bytes_per_device), P=P, steps=cost.send_steps))
    st.latex(
        r"\underbrace{\frac{2\,b\,d\,\beta}{B}}_{\text{" + t("ring.tex_transfer") + r"}} \le "
        r"\underbrace{\frac{b^2 (4d + 6)}{F}}_{\text{" + t("ring.tex_compute") + r"}} "
        r"\iff b \ge \frac{2\,d\,\beta\,F}{B\,(4d + 6)},\qquad b = \lceil n / P \rceil"
    )
    words = dict(
        b=f"{cost.block:,}", min_b=f"{cost.min_block_to_hide:,}", min_n=f"{cost.min_block_to_hide * P:,}"
    )
    if cost.hides:
        st.success(t("ring.hides", **words))
    else:
        st.warning(t("ring.exposed", **words))
    times = [lab_ring.ring_costs(x, d, P, beta, bw, rate) for x in TIME_NS if x >= P]
    series = {
        t("ring.metric_compute"): [c.compute_seconds for c in times],
        t("ring.metric_transfer"): [c.transfer_seconds for c in times],
    }
    xs = [c.n for c in times]
    fig = figures_cost.loglog_figure(
        xs, series, axes=AxisText(t("cost.axis_n"), t("ring.axis_seconds")), y_hover="%{y:.3g} s", height=340
    )
    page.chart(fig, "ring_times", t("ring.alt_times", P=P, d=d))
    st.caption(t("ring.cost_caveat"))
