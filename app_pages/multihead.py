"""Multi-head lab: every head on the learner's sentence, d_k = d_model / h, Concat · W^O, and the
proof by numbers that more heads cost no extra parameters or matmul FLOPs.

Widgets (``multihead_`` keys, attention_ui/multihead/settings.py) -> cached calls into ``attention_core.labs.multihead`` (``multihead_lab``,
``head_sweep``) -> builders in ``attention_ui.figures`` -> the page kit. All text comes from the
``multihead`` catalog.
"""

from __future__ import annotations

import streamlit as st

from attention_core.labs import multihead as lab_multihead
from attention_core.labs.multihead import valid_head_counts
from attention_ui import kit, tables
from attention_ui.figures import heatmaps
from attention_ui.figures.base import AxisText
from attention_ui.multihead import figures as figures_multihead
from attention_ui.multihead import lesson as mh_lesson
from attention_ui.multihead.settings import (
    COST_D_MODEL_RANGE,
    COST_N_RANGE,
    D_MODEL_RANGE,
    MAX_SHOWN_HEADS,
    PAGE,
    TABLE,
)
from attention_ui.program import code_view
from attention_ui.takehome import buttons

# W^O and the output share a row: half the page each, so their labels ("d10", "h2·3") stand upright
HALF_PLOT_PX = 260
key = TABLE.key

cached_lab = kit.cached(lab_multihead.multihead_lab)
cached_sweep = kit.cached(lab_multihead.head_sweep)


def fit_heads(d_model: int) -> list[int]:
    """The head counts to offer; keeps the chosen h valid after d_model changed (the largest valid
    h not above it)."""
    choices = [h for h in valid_head_counts(d_model) if h <= MAX_SHOWN_HEADS]
    current = st.session_state.get(key("heads"), 1)
    if current not in choices:
        st.session_state[key("heads")] = max([h for h in choices if h <= current] or [choices[0]])
    return choices


def controls(t) -> None:
    """The sentence and the layer's settings, in the sidebar like the playground's and every lab's."""
    st.header(t("multihead.settings"))
    PAGE.widget(t, "text_area", "text", height=80, helped=True)
    PAGE.widget(t, "number_input", "d_model", *D_MODEL_RANGE, step=1, label="d_model", helped=True)
    d_model = int(PAGE.value("d_model"))
    choices = fit_heads(d_model)
    if len(choices) > 1:
        PAGE.widget(t, "select_slider", "heads", choices, helped=True)
    else:
        st.session_state[key("heads")] = choices[0]
        st.markdown(t("multihead.one_head_only", d_model=d_model))
    PAGE.seed_input(t)
    PAGE.tables_toggle(t)


def load_lab(t):
    """The cached lab for the sentence, or None after saying why there is none."""
    s = st.session_state

    def compute(text: str):
        return cached_lab(text, *(int(s[key(name)]) for name in ("d_model", "heads", "seed")))

    return PAGE.sentence_lab(t, key("text"), "multi-head trace", compute, lambda lab: lab.trace.tokenization)


def section_heads(t, lab, hover) -> None:
    trace = lab.trace
    kit.opening(t("multihead.sec_heads"), t("multihead.explain_heads"), mh_lesson.FORMULA, anchor="heads")
    fig = mh_lesson.heads_figure(t, trace, hover)
    PAGE.chart(fig, "heads", t("multihead.alt_heads", heads=trace.heads, n=trace.n))
    if PAGE.tables_on:
        for k in range(trace.heads):
            st.caption(t("multihead.head_name", h=k))
            PAGE.table(tables.attention_table(trace.weights[k], trace.tokens), f"head_{k}")
    st.caption(t("multihead.heads_distinct", distinct=lab.distinct_patterns, heads=trace.heads))
    code_view.trace_code(t, trace, ("qkv", "raw", "scaled", "softmax", "head_out"), key("code_heads"))


def section_dk(t, lab) -> None:
    st.header(t("multihead.sec_dk"), anchor="dk")
    d_model, h, d_k = lab.trace.X.shape[1], lab.trace.heads, lab.trace.Q.shape[2]
    st.latex(rf"d_k = d_v = \frac{{d_\text{{model}}}}{{h}} = \frac{{{d_model}}}{{{h}}} = {d_k}")
    st.markdown(t("multihead.explain_dk", d_model=d_model, heads=h, d_k=d_k))
    counts = lab.head_counts
    st.markdown(t("multihead.valid_heads", d_model=d_model, heads=", ".join(str(c) for c in counts)))
    axes = AxisText(t("multihead.axis_heads"), t("multihead.axis_dk"))
    fig = figures_multihead.head_dim_figure(
        d_model, counts, h, hover_heads=axes.x, hover_dim="d_k", axes=axes
    )
    PAGE.chart(fig, "dk", t("multihead.alt_dk", d_model=d_model, count=len(counts), heads=h, d_k=d_k))
    PAGE.table({t("multihead.axis_heads"): counts, "d_k": lab.head_dims}, "dk")
    st.info(t("multihead.tradeoff"))


def section_concat(t, trace, hover) -> None:
    st.header(t("multihead.sec_concat"), anchor="concat")
    h, n, d_model, d_v = trace.heads, trace.n, trace.X.shape[1], trace.V.shape[2]
    st.latex(r"\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_0, \dots, \mathrm{head}_{h-1})\, W^O")
    st.latex(
        rf"\underbrace{{[{n} \times {h * d_v}]}}_{{\mathrm{{Concat}}:\ n \times h d_v}}"
        rf"\cdot \underbrace{{[{h * d_v} \times {d_model}]}}_{{W^O:\ h d_v \times d_\text{{model}}}}"
        rf"= \underbrace{{[{n} \times {d_model}]}}_{{\text{{{t('multihead.tex_output')}}}:\ n \times d_\text{{model}}}}"
    )
    st.markdown(t("multihead.explain_concat", heads=h, d_v=d_v, width=h * d_v, d_model=d_model))
    feat = dict(token_title=t("multihead.axis_token"), dim_title=t("multihead.axis_dim"), hover=hover)
    concat_names = [f"h{i}·{j}" for i in range(h) for j in range(d_v)]
    out_names = [f"d{j}" for j in range(d_model)]
    small = n <= 8 and h * d_v <= 8

    st.subheader(t("multihead.concat_title", n=n, width=h * d_v), anchor="concat-map")
    fig = heatmaps.feature_heatmap(
        trace.concat, trace.tokens, dim_names=concat_names, show_text=small, **feat
    )
    fig = figures_multihead.add_head_boundaries(fig, h, d_v, "x")
    PAGE.chart(fig, "concat", t("multihead.alt_concat", n=n, width=h * d_v, heads=h))
    PAGE.table(lambda: tables.feature_table(trace.concat, trace.tokens, concat_names), "concat")
    c1, c2 = st.columns(2)
    with c1:
        st.subheader(t("multihead.wo_title", width=h * d_v, d_model=d_model), anchor="wo-map")
        dims = dict(row_hover=t("multihead.hover_dim"), col_hover=t("multihead.hover_dim"), hover=hover)
        titles = dict(row_title=t("multihead.axis_wo_rows"), col_title=t("multihead.axis_dim"))
        fig = heatmaps.matrix_heatmap(
            trace.W_O, concat_names, out_names, show_text=False, plot_px=HALF_PLOT_PX, **titles, **dims
        )
        fig = figures_multihead.add_head_boundaries(fig, h, d_v, "y")
        PAGE.chart(fig, "wo", t("multihead.alt_wo", width=h * d_v, d_model=d_model, heads=h))
        PAGE.table(lambda: tables.matrix_table(trace.W_O, concat_names, out_names), "wo")
    with c2:
        st.subheader(t("multihead.out_title", n=n, d_model=d_model), anchor="output-map")
        fig = heatmaps.feature_heatmap(
            trace.output, trace.tokens, dim_names=out_names, show_text=False, plot_px=HALF_PLOT_PX, **feat
        )
        PAGE.chart(fig, "output", t("multihead.alt_output", n=n, d_model=d_model))
        PAGE.table(lambda: tables.feature_table(trace.output, trace.tokens, out_names), "output")
    code_view.trace_code(t, trace, ("concat", "output"), key("code_concat"))


def section_cost(t) -> None:
    kit.opening(
        t("multihead.sec_cost"),
        t("multihead.explain_cost"),
        rf"\underbrace{{4\, d_\text{{model}}^2}}_{{\text{{{t('multihead.tex_params')}}}}},\quad "
        r"\underbrace{6 n d_\text{model}^2 + 2 n^2 d_\text{model} + 2 n^2 d_\text{model} + 2 n d_\text{model}^2}"
        rf"_{{\text{{{t('multihead.tex_matmul_flops')}}}:\ Q,K,V \ +\ QK^\top \ +\ AV \ +\ W^O}}",
        anchor="cost",
    )
    c1, c2 = st.columns(2)
    PAGE.widget(t, "number_input", "cost_n", *COST_N_RANGE, step=256, where=c1)
    PAGE.widget(
        t,
        "number_input",
        "cost_d_model",
        *COST_D_MODEL_RANGE,
        step=64,
        label="d_model",
        helped=True,
        where=c2,
    )
    n, d_model = int(PAGE.value("cost_n")), int(PAGE.value("cost_d_model"))
    with PAGE.guard(t, "head costs", known=[(ValueError, "multihead.err_config")]) as run:
        sweep = cached_sweep(n, d_model)
    if run.failed:
        return
    costs = sweep.costs
    for name, ids in (
        ("cost", figures_multihead.COST_COLUMNS_CONSTANT),
        ("cost_growing", figures_multihead.COST_COLUMNS_GROWING),
    ):
        columns = {t(f"multihead.col_{c}"): [getattr(x, c) for x in costs] for c in ids}
        PAGE.table(columns, name, always=True, hide_index=True, localized=columns)
    if sweep.params_constant and sweep.matmul_constant:
        params, flops = f"{costs[0].params_total:,}", f"{costs[0].flops_matmul:,}"
        st.success(t("multihead.cost_constant", count=len(costs), params=params, flops=flops))
    else:  # never expected with d_k = d_model / h; say so rather than hide it
        st.warning(t("multihead.cost_not_constant"))
    first, last = costs[0], costs[-1]
    e0, e1 = f"{first.attention_matrix_elements:,}", f"{last.attention_matrix_elements:,}"
    st.markdown(t("multihead.cost_grows", h0=first.heads, h1=last.heads, e0=e0, e1=e1))
    names = {sid: t(f"multihead.series_{sid}") for sid in figures_multihead.CHART_SERIES}
    axes = AxisText(t("multihead.axis_heads"), t("multihead.axis_count"))
    fig = figures_multihead.cost_vs_heads_figure(costs, names, axes=axes)
    PAGE.chart(fig, "cost", t("multihead.alt_cost", n=n, d_model=d_model, count=len(costs)))
    series = {names[sid]: [getattr(c, sid) for c in costs] for sid in figures_multihead.CHART_SERIES}
    PAGE.table(series, "cost_series", index=[c.heads for c in costs])


def section_split(t, lab) -> None:
    st.header(t("multihead.sec_split"), anchor="split")
    h, d_model, d_k = lab.trace.heads, lab.trace.X.shape[1], lab.trace.Q.shape[2]
    st.markdown(t("multihead.explain_split", heads=h, d_k=d_k, width=h * d_k))
    st.latex(
        r"\mathrm{split}_h\!\left(X W^Q\right)_i \;=\; X\, W^Q_{[:,\; i d_k : (i+1) d_k]}"
        rf"\qquad W^Q \in \mathbb{{R}}^{{{d_model} \times {h * d_k}}}"
    )
    check, diff = lab.split, f"{lab.split.max_abs_diff:.3g}"
    c1, c2 = st.columns(2)
    c1.metric(t("multihead.split_diff"), diff)
    c2.metric(t("multihead.split_vs_trace"), f"{lab.split_vs_trace:.3g}")
    if check.equal:
        st.success(t("multihead.split_equal", diff=diff))
    else:
        st.error(t("multihead.split_differs", diff=diff))
    st.caption(t("multihead.split_note"))


@PAGE.slides
def main() -> None:
    t = PAGE.open(controls)
    lab, hover = load_lab(t), PAGE.hover(t)
    if lab is not None:
        PAGE.section(section_heads, t, lab, hover)
        PAGE.section(section_dk, t, lab)
        PAGE.section(section_concat, t, lab.trace, hover)
        with st.sidebar:  # the lesson: every head, then every step on the learner's sentence (issue 45)
            buttons.lab_lesson_button(
                t, key("dl_lesson"), "app.nav_multihead", lambda: mh_lesson.section(t, lab, hover)
            )
    PAGE.section(section_cost, t)
    if lab is not None:
        PAGE.section(section_split, t, lab)


main()
