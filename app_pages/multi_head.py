"""Multi-head lab: every head on the learner's sentence, d_k = d_model / h, Concat · W^O, and the
proof by numbers that more heads cost no extra parameters or matmul FLOPs.

Thin page: widgets (``mh_`` keys) -> cached core calls -> pure figure builders -> st.plotly_chart.
All text comes from the ``multihead`` catalog.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import AttentionConfig, AttentionConfigError, trace_text
from attention_core.lab_multihead import cost_vs_heads, split_vs_separate, valid_head_counts
from attention_core.tokenizer import DEFAULT_MAX_TOKENS
from attention_ui import figures, figures_multihead, tables
from attention_ui.state import translator

log = logging.getLogger(__name__)

D_MODEL_RANGE = (1, 128)  # the sentence's layer: small enough to draw every head
MAX_SHOWN_HEADS = 16  # small multiples beyond this are unreadable
COST_N_RANGE = (1, 1_000_000)
COST_D_MODEL_RANGE = (1, 8192)
SEED_RANGE = (0, 2**31 - 1)
KEEP = "session"

DEFAULTS = {
    "mh_d_model": 16,
    "mh_heads": 4,
    "mh_seed": 0,
    "mh_tables": False,
    "mh_cost_n": 1024,
    "mh_cost_d_model": 512,
}


@st.cache_resource(max_entries=32, show_spinner=False)
def cached_trace(text: str, d_model: int, heads: int, seed: int):
    """Frozen trace (read-only arrays), safe to share between reruns and sessions."""
    config = AttentionConfig(d_model=d_model, heads=heads, seed=seed)
    return trace_text(text, config, max_tokens=DEFAULT_MAX_TOKENS)


@st.cache_resource(max_entries=32, show_spinner=False)
def cached_costs(n: int, d_model: int):
    return cost_vs_heads(n, d_model)


@st.cache_resource(max_entries=32, show_spinner=False)
def cached_split(text: str, d_model: int, heads: int, seed: int):
    trace = cached_trace(text, d_model, heads, seed)
    # W^Q of all heads side by side: [h, d_model, d_k] -> [d_model, h·d_k]
    W = np.transpose(np.asarray(trace.W_Q), (1, 0, 2)).reshape(d_model, -1)
    check = split_vs_separate(trace.X, W, heads)
    vs_trace = float(np.max(np.abs(check.split - trace.Q))) if check.split.size else 0.0
    return check, vs_trace


def init_state() -> None:
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    t = translator()  # the sentence a learner starts with is in the page's language
    st.session_state.setdefault("mh_text", t("multihead.default_text"))


def head_choices(d_model: int) -> list[int]:
    return [h for h in valid_head_counts(d_model) if h <= MAX_SHOWN_HEADS]


def fit_heads(d_model: int) -> list[int]:
    """Keep the chosen h valid after d_model changed: the largest valid h not above it."""
    choices = head_choices(d_model)
    current = st.session_state.get("mh_heads", 1)
    if current not in choices:
        st.session_state["mh_heads"] = max([h for h in choices if h <= current] or [choices[0]])
    return choices


def chart(fig, key: str, alt: str, width: int | str = "stretch") -> None:
    st.plotly_chart(fig, key=f"mh_chart_{key}", alt=alt, width=width, config={"displaylogo": False})


def table(frame: pd.DataFrame, key: str) -> None:
    if st.session_state["mh_tables"]:
        st.dataframe(frame, width="stretch", height=min(420, 38 + 35 * len(frame)), key=f"mh_table_{key}")


def controls(t) -> None:
    st.text_area(
        t("multihead.text"), key="mh_text", height=80, help=t("multihead.text_help"), persist_state=KEEP
    )
    c1, c2, c3 = st.columns([1, 2, 1])
    c1.number_input(
        "d_model",
        *D_MODEL_RANGE,
        step=1,
        key="mh_d_model",
        help=t("multihead.d_model_help"),
        persist_state=KEEP,
    )
    d_model = int(st.session_state["mh_d_model"])
    choices = fit_heads(d_model)
    if len(choices) > 1:
        c2.select_slider(
            t("multihead.heads"), choices, key="mh_heads", help=t("multihead.heads_help"), persist_state=KEEP
        )
    else:
        st.session_state["mh_heads"] = choices[0]
        c2.markdown(t("multihead.one_head_only", d_model=d_model))
    c3.number_input(t("multihead.seed"), *SEED_RANGE, step=1, key="mh_seed", persist_state=KEEP)
    st.toggle(t("multihead.show_tables"), key="mh_tables", persist_state=KEEP)


def load_trace(t):
    text = st.session_state["mh_text"] or ""
    if not text.strip():
        st.error(t("multihead.err_empty"))
        return None
    d_model, heads = int(st.session_state["mh_d_model"]), int(st.session_state["mh_heads"])
    try:
        trace = cached_trace(text, d_model, heads, int(st.session_state["mh_seed"]))
    except AttentionConfigError as err:
        st.error(t("multihead.err_config", detail=str(err)))
        return None
    except Exception:  # a bug must not leave the learner with a traceback
        log.exception("multi-head trace failed")
        st.error(t("multihead.err_unexpected"))
        return None
    tok = trace.tokenization
    if tok is not None and tok.total_tokens > len(tok.tokens):
        st.warning(t("multihead.warn_truncated", total=tok.total_tokens, kept=len(tok.tokens)))
    return trace


def hover_text(t) -> figures.HoverText:
    return figures.HoverText(
        query=t("multihead.hover_query"),
        key=t("multihead.hover_key"),
        token=t("multihead.hover_token"),
        dim=t("multihead.hover_dim"),
        value=t("multihead.hover_value"),
        masked=t("multihead.hover_masked"),
    )


def section_heads(t, trace) -> None:
    st.header(t("multihead.sec_heads"), anchor="heads")
    st.markdown(t("multihead.explain_heads"))
    st.latex(
        r"\mathrm{head}_i = \mathrm{softmax}\!\left(\frac{Q_i K_i^\top}{\sqrt{d_k}}\right) V_i,\quad i = 0, \dots, h-1"
    )
    h, n = trace.heads, trace.n
    fig = figures.heads_small_multiples(
        trace.weights, trace.tokens, hover=hover_text(t), head_title=t("multihead.head_name", h="{h}")
    )
    chart(fig, "heads", t("multihead.alt_heads", heads=h, n=n))
    if st.session_state["mh_tables"]:
        for k in range(h):
            st.caption(t("multihead.head_name", h=k))
            table(tables.attention_table(trace.weights[k], trace.tokens), f"head_{k}")
    # How different are the heads? Each head's most-attended key for every query, as data.
    top = np.argmax(np.asarray(trace.weights), axis=2)  # [h, n]
    distinct = len({tuple(row) for row in top.tolist()})
    st.caption(t("multihead.heads_distinct", distinct=distinct, heads=h))


def section_dk(t, trace) -> None:
    st.header(t("multihead.sec_dk"), anchor="dk")
    d_model, h = trace.X.shape[1], trace.heads
    d_k = trace.Q.shape[2]
    st.latex(rf"d_k = d_v = \frac{{d_\text{{model}}}}{{h}} = \frac{{{d_model}}}{{{h}}} = {d_k}")
    st.markdown(t("multihead.explain_dk", d_model=d_model, heads=h, d_k=d_k))
    counts = valid_head_counts(d_model)
    st.markdown(t("multihead.valid_heads", d_model=d_model, heads=", ".join(str(c) for c in counts)))
    fig = figures_multihead.head_dim_figure(
        d_model,
        counts,
        h,
        x_title=t("multihead.axis_heads"),
        y_title=t("multihead.axis_dk"),
        hover_heads=t("multihead.axis_heads"),
        hover_dim="d_k",
    )
    chart(fig, "dk", t("multihead.alt_dk", d_model=d_model, count=len(counts), heads=h, d_k=d_k))
    table(pd.DataFrame({t("multihead.axis_heads"): counts, "d_k": [d_model // c for c in counts]}), "dk")
    st.info(t("multihead.tradeoff"))


def section_concat(t, trace) -> None:
    st.header(t("multihead.sec_concat"), anchor="concat")
    h, n = trace.heads, trace.n
    d_model, d_v = trace.X.shape[1], trace.V.shape[2]
    st.latex(r"\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_0, \dots, \mathrm{head}_{h-1})\, W^O")
    st.latex(
        rf"\underbrace{{[{n} \times {h * d_v}]}}_{{\mathrm{{Concat}}:\ n \times h d_v}}"
        rf"\cdot \underbrace{{[{h * d_v} \times {d_model}]}}_{{W^O:\ h d_v \times d_\text{{model}}}}"
        rf"= \underbrace{{[{n} \times {d_model}]}}_{{\text{{{t('multihead.tex_output')}}}:\ n \times d_\text{{model}}}}"
    )
    st.markdown(t("multihead.explain_concat", heads=h, d_v=d_v, width=h * d_v, d_model=d_model))
    hover = hover_text(t)
    feat = dict(token_title=t("multihead.axis_token"), dim_title=t("multihead.axis_dim"), hover=hover)
    concat_names = [f"h{i}·{j}" for i in range(h) for j in range(d_v)]
    out_names = [f"d{j}" for j in range(d_model)]
    small = n <= 8 and h * d_v <= 8

    st.subheader(t("multihead.concat_title", n=n, width=h * d_v))
    fig = figures.feature_heatmap(trace.concat, trace.tokens, dim_names=concat_names, show_text=small, **feat)
    chart(
        figures_multihead.add_head_boundaries(fig, h, d_v, "x"),
        "concat",
        t("multihead.alt_concat", n=n, width=h * d_v, heads=h),
    )
    table(tables.feature_table(trace.concat, trace.tokens, concat_names), "concat")

    c1, c2 = st.columns(2)
    with c1:
        st.subheader(t("multihead.wo_title", width=h * d_v, d_model=d_model))
        fig = figures.matrix_heatmap(
            trace.W_O, concat_names, out_names, kind="signed", row_title=t("multihead.axis_wo_rows"),
            col_title=t("multihead.axis_dim"), row_hover=t("multihead.hover_dim"), col_hover=t("multihead.hover_dim"),
            hover=hover, show_text=False,
        )  # fmt: skip
        chart(
            figures_multihead.add_head_boundaries(fig, h, d_v, "y"),
            "wo",
            t("multihead.alt_wo", width=h * d_v, d_model=d_model, heads=h),
        )
        table(pd.DataFrame(np.array(trace.W_O), index=concat_names, columns=out_names), "wo")
    with c2:
        st.subheader(t("multihead.out_title", n=n, d_model=d_model))
        fig = figures.feature_heatmap(
            trace.output, trace.tokens, dim_names=out_names, show_text=False, **feat
        )
        chart(fig, "output", t("multihead.alt_output", n=n, d_model=d_model))
        table(tables.feature_table(trace.output, trace.tokens, out_names), "output")


def section_cost(t) -> None:
    st.header(t("multihead.sec_cost"), anchor="cost")
    st.markdown(t("multihead.explain_cost"))
    st.latex(
        rf"\underbrace{{4\, d_\text{{model}}^2}}_{{\text{{{t('multihead.tex_params')}}}}},\quad "
        r"\underbrace{6 n d_\text{model}^2 + 2 n^2 d_\text{model} + 2 n^2 d_\text{model} + 2 n d_\text{model}^2}"
        rf"_{{\text{{{t('multihead.tex_matmul_flops')}}}:\ Q,K,V \ +\ QK^\top \ +\ AV \ +\ W^O}}"
    )
    c1, c2 = st.columns(2)
    c1.number_input(t("multihead.cost_n"), *COST_N_RANGE, step=256, key="mh_cost_n", persist_state=KEEP)
    c2.number_input(
        "d_model",
        *COST_D_MODEL_RANGE,
        step=64,
        key="mh_cost_d_model",
        help=t("multihead.cost_d_model_help"),
        persist_state=KEEP,
    )
    n, d_model = int(st.session_state["mh_cost_n"]), int(st.session_state["mh_cost_d_model"])
    try:
        costs = cached_costs(n, d_model)
    except ValueError as err:
        st.error(t("multihead.err_config", detail=str(err)))
        return
    labels = {c: t(f"multihead.col_{c}") for c in figures_multihead.COST_COLUMNS}
    st.dataframe(
        figures_multihead.cost_frame(costs, labels),
        hide_index=True,
        width="stretch",
        key="mh_table_cost",
        column_config={label: st.column_config.NumberColumn(format="localized") for label in labels.values()},
    )
    series = figures_multihead.cost_series(costs)
    same_params = len(set(series["params_total"])) == 1
    same_matmul = len(set(series["flops_matmul"])) == 1
    if same_params and same_matmul:
        st.success(
            t(
                "multihead.cost_constant",
                count=len(costs),
                params=f"{series['params_total'][0]:,}",
                flops=f"{series['flops_matmul'][0]:,}",
            )
        )
    else:  # never expected with d_k = d_model / h; say so rather than hide it
        st.warning(t("multihead.cost_not_constant"))
    first, last = costs[0], costs[-1]
    st.markdown(
        t(
            "multihead.cost_grows",
            h0=first.heads,
            h1=last.heads,
            e0=f"{first.attention_matrix_elements:,}",
            e1=f"{last.attention_matrix_elements:,}",
        )
    )
    names = {sid: t(f"multihead.series_{sid}") for sid in figures_multihead.CHART_SERIES}
    fig = figures_multihead.cost_vs_heads_figure(
        costs, names, x_title=t("multihead.axis_heads"), y_title=t("multihead.axis_count")
    )
    chart(fig, "cost", t("multihead.alt_cost", n=n, d_model=d_model, count=len(costs)))
    table(
        pd.DataFrame({names[k]: v for k, v in series.items()}, index=[c.heads for c in costs]), "cost_series"
    )


def section_split(t, trace) -> None:
    st.header(t("multihead.sec_split"), anchor="split")
    h, d_model = trace.heads, trace.X.shape[1]
    d_k = trace.Q.shape[2]
    st.markdown(t("multihead.explain_split", heads=h, d_k=d_k, width=h * d_k))
    st.latex(
        r"\mathrm{split}_h\!\left(X W^Q\right)_i \;=\; X\, W^Q_{[:,\; i d_k : (i+1) d_k]}"
        rf"\qquad W^Q \in \mathbb{{R}}^{{{d_model} \times {h * d_k}}}"
    )
    try:
        check, vs_trace = cached_split(
            st.session_state["mh_text"], d_model, h, int(st.session_state["mh_seed"])
        )
    except Exception:
        log.exception("split check failed")
        st.error(t("multihead.err_unexpected"))
        return
    c1, c2 = st.columns(2)
    c1.metric(t("multihead.split_diff"), f"{check.max_abs_diff:.3g}")
    c2.metric(t("multihead.split_vs_trace"), f"{vs_trace:.3g}")
    if check.equal:
        st.success(t("multihead.split_equal", diff=f"{check.max_abs_diff:.3g}"))
    else:
        st.error(t("multihead.split_differs", diff=f"{check.max_abs_diff:.3g}"))
    st.caption(t("multihead.split_note"))


def main() -> None:
    t = translator()
    init_state()
    st.title(t("multihead.title"))
    st.markdown(t("multihead.intro"))
    controls(t)
    trace = load_trace(t)
    if trace is not None:
        section_heads(t, trace)
        section_dk(t, trace)
        section_concat(t, trace)
    section_cost(t)
    if trace is not None:
        section_split(t, trace)


main()
