"""Look-alikes lab: self- vs cross-attention, additive vs dot-product scores, causal vs
bidirectional, self-attention vs an RNN, and a table of terms that are easy to mix up.

Thin page: widgets (``lk_`` keys) -> cached core calls (attention_core.lab_lookalikes, trace_text)
-> pure figure builders -> st.plotly_chart. Every message comes from the ``lookalikes`` catalog.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import AttentionConfig, AttentionConfigError, trace_text
from attention_core.lab_lookalikes import (
    LOOKALIKES,
    RNN_COMPARISON,
    compare_scores,
    cross_attention,
    init_additive_params,
    layer_cost,
    rnn_steps_illustration,
)
from attention_ui import figures, tables
from attention_ui.figures_lookalikes import CostText, PathText, cost_figure, path_figure
from attention_ui.state import translator

log = logging.getLogger(__name__)

MAX_TOKENS = 16  # two readable heatmaps side by side
D_MODEL_CHOICES = (8, 16, 32, 64)
HEAD_CHOICES = (1, 2, 4)
DEFAULTS = {
    "lk_d_model": 16,
    "lk_heads": 2,
    "lk_head": 0,
    "lk_seed": 0,
    "lk_d_a": 8,
    "lk_tables": False,
    "lk_n": 8,
    "lk_i": 0,
    "lk_j": 7,
    "lk_cost_n": 2048,
    "lk_cost_d": 512,
}
KEEP = "session"


def init_state() -> None:
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    t = translator()  # the sentences a learner starts with are in the page's language
    st.session_state.setdefault("lk_text_a", t("lookalikes.default_text_a"))
    st.session_state.setdefault("lk_text_b", t("lookalikes.default_text_b"))


@st.cache_resource(max_entries=32, show_spinner=False)
def cached_trace(text: str, d_model: int, heads: int, seed: int, mask: str):
    cfg = AttentionConfig(d_model=d_model, heads=heads, seed=seed, mask=mask)
    return trace_text(text, cfg, max_tokens=MAX_TOKENS)


@st.cache_resource(max_entries=32, show_spinner=False)
def cached_cross(text_a: str, text_b: str, d_model: int, heads: int, seed: int):
    a = cached_trace(text_a, d_model, heads, seed, "none")
    b = cached_trace(text_b, d_model, heads, seed, "none")
    # the same seed gives both sentences the same embeddings and the same W_Q, W_K, W_V, W_O
    return a, b, cross_attention(a.X, b.X, a.params, a.divisor)


@st.cache_resource(max_entries=32, show_spinner=False)
def cached_scores(text: str, d_model: int, heads: int, seed: int, head: int, d_a: int):
    tr = cached_trace(text, d_model, heads, seed, "none")
    Q, K = tr.Q[head], tr.K[head]  # [n, d_k] each
    params = init_additive_params(Q.shape[1], K.shape[1], d_a, seed=seed)
    return compare_scores(Q, K, params, divisor=tr.divisor)


def hover_text(t) -> figures.HoverText:
    return figures.HoverText(
        query=t("lookalikes.hover_query"),
        key=t("lookalikes.hover_key"),
        value=t("lookalikes.hover_value"),
        masked=t("lookalikes.hover_masked"),
    )


def weights_map(t, values, rows, cols, *, allowed=None, title: str = "", col_title: str | None = None):
    return figures.matrix_heatmap(
        values,
        rows,
        cols,
        kind="weights",
        allowed=allowed,
        title=title,
        row_title=t("lookalikes.axis_query"),
        col_title=col_title or t("lookalikes.axis_key"),
        row_hover=t("lookalikes.hover_query"),
        col_hover=t("lookalikes.hover_key"),
        hover=hover_text(t),
    )


def chart(fig, key: str, alt: str) -> None:
    st.plotly_chart(fig, key=f"lk_chart_{key}", alt=alt, width="stretch", config={"displaylogo": False})


def labelled_table(values, rows, cols) -> pd.DataFrame:
    return pd.DataFrame(
        np.array(values, dtype=float), index=tables.token_index(rows), columns=tables.token_index(cols)
    )


def table(frame: pd.DataFrame) -> None:
    if st.session_state["lk_tables"]:
        st.dataframe(frame, width="stretch", height=min(420, 38 + 35 * len(frame)))


def settings(t) -> None:
    with st.sidebar:
        st.header(t("lookalikes.settings"))
        st.text_input(
            t("lookalikes.text_a"), key="lk_text_a", help=t("lookalikes.text_a_help"), persist_state=KEEP
        )
        st.text_input(
            t("lookalikes.text_b"), key="lk_text_b", help=t("lookalikes.text_b_help"), persist_state=KEEP
        )
        c1, c2 = st.columns(2)
        c1.selectbox("d_model", D_MODEL_CHOICES, key="lk_d_model", persist_state=KEEP)
        c2.selectbox(t("lookalikes.heads"), HEAD_CHOICES, key="lk_heads", persist_state=KEEP)
        heads = int(st.session_state["lk_heads"])
        if st.session_state.get("lk_head", 0) not in range(heads):
            st.session_state["lk_head"] = 0
        st.selectbox(t("lookalikes.head"), list(range(heads)), key="lk_head", persist_state=KEEP)
        st.number_input(t("lookalikes.seed"), 0, 2**31 - 1, step=1, key="lk_seed", persist_state=KEEP)
        st.toggle(t("lookalikes.show_tables"), key="lk_tables", persist_state=KEEP)


def read_texts(t) -> tuple[str, str] | None:
    a = (st.session_state["lk_text_a"] or "").strip()
    b = (st.session_state["lk_text_b"] or "").strip()
    ok = True
    if not a:
        st.error(t("lookalikes.err_empty_a"))
        ok = False
    if not b:
        st.error(t("lookalikes.err_empty_b"))
        ok = False
    return (a, b) if ok else None


def warn_truncated(t, trace, which: str) -> None:
    tok = trace.tokenization
    if tok is not None and tok.total_tokens > len(tok.tokens):
        st.warning(t("lookalikes.warn_truncated", which=which, total=tok.total_tokens, kept=len(tok.tokens)))


def section_cross(t, a, b, cross, head: int) -> None:
    st.header(t("lookalikes.cross_title"), anchor="cross")
    st.markdown(t("lookalikes.cross_intro"))
    f1, f2 = st.columns(2)
    f1.markdown(f"**{t('lookalikes.self_label')}**")
    f1.latex(r"Q = XW^Q,\quad K = XW^K,\quad V = XW^V")
    f2.markdown(f"**{t('lookalikes.cross_label')}**")
    f2.latex(r"Q = XW^Q,\quad K = YW^K,\quad V = YW^V")
    na, nb = a.n, b.n
    st.markdown(t("lookalikes.cross_shapes", na=na, nb=nb))
    left, right = st.columns([na + 2, nb + 2])
    with left:
        fig = weights_map(t, a.weights[head], a.tokens, a.tokens, title=t("lookalikes.self_map", n=na))
        chart(fig, "self", t("lookalikes.alt_self", n=na, head=head))
        table(labelled_table(a.weights[head], a.tokens, a.tokens))
    with right:
        fig = weights_map(
            t,
            cross.weights[head],
            a.tokens,
            b.tokens,
            title=t("lookalikes.cross_map", na=na, nb=nb),
            col_title=t("lookalikes.axis_key_b"),
        )
        chart(fig, "cross", t("lookalikes.alt_cross", na=na, nb=nb, head=head))
        table(labelled_table(cross.weights[head], a.tokens, b.tokens))
    st.caption(t("lookalikes.cross_note", rows=na, cols=nb, out_rows=cross.output.shape[0]))


def section_scores(t, a, head: int, scores) -> None:
    st.header(t("lookalikes.score_title"), anchor="scores")
    st.markdown(t("lookalikes.score_intro"))
    st.slider(t("lookalikes.d_a"), 1, 32, key="lk_d_a", help=t("lookalikes.d_a_help"), persist_state=KEEP)
    heads_row = st.columns(2)  # formulas in their own row so both heatmaps start at the same height
    with heads_row[0]:
        st.subheader(t("lookalikes.additive_name"))
        st.latex(r"e_{ij} = v^\top \tanh(W_1 q_i + W_2 k_j)")
    with heads_row[1]:
        st.subheader(t("lookalikes.dot_name"))
        st.latex(r"e_{ij} = q_i \cdot k_j \,/\, \sqrt{d_k}")
    left, right = st.columns(2)
    with left:
        fig = weights_map(t, scores.additive_weights, a.tokens, a.tokens)
        chart(fig, "additive", t("lookalikes.alt_additive", n=a.n))
        st.caption(t("lookalikes.params_additive", count=scores.additive_params))
        table(labelled_table(scores.additive_scores, a.tokens, a.tokens))
    with right:
        fig = weights_map(t, scores.dot_weights, a.tokens, a.tokens)
        chart(fig, "dot", t("lookalikes.alt_dot", n=a.n))
        st.caption(t("lookalikes.params_dot", count=scores.dot_params))
        table(labelled_table(scores.dot_scores, a.tokens, a.tokens))
    st.latex(r"a_{ij} = \mathrm{softmax}_j(e_{ij})")
    st.markdown(t("lookalikes.score_note"))


def section_causal(t, bidir, causal, head: int) -> None:
    st.header(t("lookalikes.causal_title"), anchor="causal")
    st.markdown(t("lookalikes.causal_intro"))
    left, right = st.columns(2)
    with left:
        fig = weights_map(
            t, bidir.weights[head], bidir.tokens, bidir.tokens, title=t("lookalikes.bidir_name")
        )
        chart(fig, "bidir", t("lookalikes.alt_bidir", n=bidir.n))
        table(labelled_table(bidir.weights[head], bidir.tokens, bidir.tokens))
    with right:
        fig = weights_map(
            t,
            causal.weights[head],
            causal.tokens,
            causal.tokens,
            allowed=causal.mask,
            title=t("lookalikes.causal_name"),
        )
        chart(fig, "causal", t("lookalikes.alt_causal", n=causal.n))
        table(labelled_table(causal.weights[head], causal.tokens, causal.tokens))
    same_last = bool(np.allclose(bidir.weights[head][-1], causal.weights[head][-1], atol=1e-12))
    st.markdown(
        t(
            "lookalikes.causal_note",
            first=f"{causal.weights[head][0, 0]:.2f}",
            last=t("lookalikes.same_yes") if same_last else t("lookalikes.same_no"),
            masked=int((~causal.mask).sum()),
        )
    )


def section_rnn(t) -> None:
    st.header(t("lookalikes.rnn_title"), anchor="rnn")
    st.markdown(t("lookalikes.rnn_intro"))
    rows = [
        {
            t("lookalikes.col_aspect"): t(f"lookalikes.aspect_{row.aspect}"),
            t("lookalikes.col_attention"): row.self_attention,
            t("lookalikes.col_rnn"): row.rnn,
            t("lookalikes.col_meaning"): t(f"lookalikes.meaning_{row.aspect}"),
        }
        for row in RNN_COMPARISON
    ]
    st.table(pd.DataFrame(rows).set_index(t("lookalikes.col_aspect")))  # st.table wraps long text

    st.subheader(t("lookalikes.path_title"))
    c1, c2, c3 = st.columns(3)
    c1.slider("n", 2, 32, key="lk_n", persist_state=KEEP)
    n = int(st.session_state["lk_n"])
    for key in ("lk_i", "lk_j"):
        st.session_state[key] = min(int(st.session_state[key]), n - 1)
    c2.slider("i", 0, n - 1, key="lk_i", persist_state=KEEP)
    c3.slider("j", 0, n - 1, key="lk_j", persist_state=KEEP)
    ill = rnn_steps_illustration(n, int(st.session_state["lk_i"]), int(st.session_state["lk_j"]))
    text = PathText(
        rnn=t("lookalikes.rnn_name"),
        attention=t("lookalikes.attention_name"),
        rnn_steps=t("lookalikes.path_steps"),
        attention_steps=t("lookalikes.path_steps"),
        position=t("lookalikes.position"),
    )
    fig = path_figure(ill.n, ill.i, ill.j, ill.rnn_hidden_states, ill.attention_path_length, text)
    chart(
        fig,
        "path",
        t(
            "lookalikes.alt_path",
            n=n,
            i=ill.i,
            j=ill.j,
            rnn=ill.rnn_path_length,
            att=ill.attention_path_length,
        ),
    )
    m = st.columns(4)
    m[0].metric(t("lookalikes.metric_rnn_path"), ill.rnn_path_length)
    m[1].metric(t("lookalikes.metric_att_path"), ill.attention_path_length)
    m[2].metric(t("lookalikes.metric_rnn_seq"), ill.rnn_sequential_steps)
    m[3].metric(t("lookalikes.metric_att_seq"), ill.attention_sequential_steps)
    if st.session_state["lk_tables"]:
        st.dataframe(
            pd.DataFrame(
                {
                    t("lookalikes.col_aspect"): [t("lookalikes.metric_path"), t("lookalikes.metric_seq")],
                    t("lookalikes.rnn_name"): [ill.rnn_path_length, ill.rnn_sequential_steps],
                    t("lookalikes.attention_name"): [
                        ill.attention_path_length,
                        ill.attention_sequential_steps,
                    ],
                }
            ),
            hide_index=True,
        )

    st.subheader(t("lookalikes.cost_title"))
    st.markdown(t("lookalikes.cost_intro"))
    c1, c2 = st.columns(2)
    c1.number_input("n", 1, 1_000_000, step=64, key="lk_cost_n", persist_state=KEEP)
    c2.number_input("d", 1, 16_384, step=64, key="lk_cost_d", persist_state=KEEP)
    n_c, d_c = int(st.session_state["lk_cost_n"]), int(st.session_state["lk_cost_d"])
    cost = layer_cost(n_c, d_c)
    big_att, big_rnn = n_c * n_c * d_c, n_c * d_c * d_c  # the table's two terms, constants dropped
    st.latex(rf"n^2 d = {big_att:,}\qquad n d^2 = {big_rnn:,}".replace(",", r"{,}"))
    if n_c < d_c:
        verdict = t("lookalikes.cost_attention_cheaper", ratio=f"{big_rnn / big_att:.3g}")
    elif n_c > d_c:
        verdict = t("lookalikes.cost_rnn_cheaper", ratio=f"{big_att / big_rnn:.3g}")
    else:
        verdict = t("lookalikes.cost_equal")
    st.markdown(verdict)
    lo = max(1.0, min(n_c, d_c) / 16)
    hi = max(n_c, d_c) * 16
    ns = np.unique(np.round(np.geomspace(lo, hi, 120)))
    fig = cost_figure(
        ns,
        ns**2 * d_c,
        ns * float(d_c) ** 2,
        d_c,
        n_c,
        CostText(
            attention=t("lookalikes.cost_attention"),
            rnn=t("lookalikes.cost_rnn"),
            n_axis=t("lookalikes.cost_n_axis"),
            ops_axis=t("lookalikes.cost_ops_axis"),
            chosen=t("lookalikes.cost_chosen"),
            crossing=t("lookalikes.cost_crossing", d=d_c),
        ),
    )
    chart(fig, "cost", t("lookalikes.alt_cost", d=d_c, n=n_c))
    st.caption(
        t(
            "lookalikes.cost_exact",
            att_mix=f"{cost.attention_macs:,}",
            att_proj=f"{cost.attention_projection_macs:,}",
            att_total=f"{cost.attention_total_macs:,}",
            rnn_total=f"{cost.rnn_total_macs:,}",
            lstm_total=f"{cost.lstm_total_macs:,}",
        )
    )
    if st.session_state["lk_tables"]:
        st.dataframe(
            pd.DataFrame({"n": ns.astype(int), "n²·d": (ns**2 * d_c), "n·d²": ns * float(d_c) ** 2}),
            hide_index=True,
            height=240,
        )


def section_terms(t) -> None:
    st.header(t("lookalikes.terms_title"), anchor="terms")
    st.markdown(t("lookalikes.terms_intro"))
    rows = [
        {
            t("lookalikes.col_term"): t(f"lookalikes.term_{row.term}"),
            t("lookalikes.col_q_from"): t(f"lookalikes.source_{row.query_source}"),
            t("lookalikes.col_kv_from"): t(f"lookalikes.source_{row.key_value_source}"),
            t("lookalikes.col_score"): t(f"lookalikes.score_{row.score}"),
            t("lookalikes.col_mask"): t(f"lookalikes.mask_{row.mask}"),
            t("lookalikes.col_heads"): t("lookalikes.yes") if row.parallel_heads else t("lookalikes.no"),
            t("lookalikes.col_tell"): t(f"lookalikes.tell_{row.term}"),
        }
        for row in LOOKALIKES
    ]
    st.table(pd.DataFrame(rows).set_index(t("lookalikes.col_term")))


def main() -> None:
    t = translator()
    init_state()
    settings(t)
    st.title(t("lookalikes.title"))
    st.markdown(t("lookalikes.intro"))
    s = st.session_state
    d_model, heads, seed, head = (
        int(s["lk_d_model"]),
        int(s["lk_heads"]),
        int(s["lk_seed"]),
        int(s["lk_head"]),
    )
    texts = read_texts(t)
    if texts is not None:
        text_a, text_b = texts
        try:
            a, b, cross = cached_cross(text_a, text_b, d_model, heads, seed)
            causal = cached_trace(text_a, d_model, heads, seed, "causal")
            scores = cached_scores(text_a, d_model, heads, seed, head, int(s["lk_d_a"]))
        except AttentionConfigError as err:
            st.error(t("lookalikes.err_config", detail=str(err)))
        except Exception:  # a bug must not leave the learner with a traceback
            log.exception("look-alikes computation failed")
            st.error(t("lookalikes.err_unexpected"))
        else:
            warn_truncated(t, a, t("lookalikes.text_a"))
            warn_truncated(t, b, t("lookalikes.text_b"))
            section_cross(t, a, b, cross, head)
            section_scores(t, a, head, scores)
            section_causal(t, a, causal, head)
    section_rnn(t)
    section_terms(t)


main()
