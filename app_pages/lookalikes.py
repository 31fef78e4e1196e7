"""Look-alikes lab: self- vs cross-attention, additive vs dot-product scores, causal vs
bidirectional, self-attention vs an RNN, a table of terms easy to mix up, and state-space models
(``attention_ui.lookalikes.ssm_view``). Widgets (``lookalikes_`` keys, declared in ``attention_ui.lookalikes.settings``) -> ``attention_core.labs.lookalikes`` ->
``attention_ui.figures`` -> the page kit. Every message comes from the ``lookalikes`` catalog.
"""

from __future__ import annotations

from dataclasses import asdict

import streamlit as st

from attention_core import AttentionConfigError
from attention_core.labs import lookalikes as lab_lookalikes
from attention_core.labs.lookalikes import LOOKALIKES, RNN_COMPARISON, layer_cost, rnn_steps_illustration
from attention_ui import kit, tables
from attention_ui.figures import heatmaps
from attention_ui.lookalikes import ssm_view as lookalikes_ssm
from attention_ui.lookalikes.figures import CostText, PathText, cost_figure, path_figure
from attention_ui.lookalikes.settings import (
    COST_D_RANGE,
    COST_N_RANGE,
    D_A_RANGE,
    D_MODEL_CHOICES,
    HEAD_CHOICES,
    MAX_TOKENS,
    PAGE,
    PATH_N_RANGE,
    TABLE,
)

key = TABLE.key

cached_lab = kit.cached(lab_lookalikes.lookalikes_lab)
cached_curves = kit.cached(lab_lookalikes.cost_curves)


def weights_map(t, values, rows, cols, *, col_title: str | None = None, **kwargs):
    """Attention weights, queries as rows (``kwargs``: allowed, title)."""
    titles = dict(row_title=t("lookalikes.axis_query"), col_title=col_title or t("lookalikes.axis_key"))
    hovers = dict(
        row_hover=t("lookalikes.hover_query"), col_hover=t("lookalikes.hover_key"), hover=PAGE.hover(t)
    )
    return heatmaps.matrix_heatmap(values, rows, cols, kind="weights", **titles, **hovers, **kwargs)


def settings(t) -> None:
    st.header(t("lookalikes.settings"))
    PAGE.widget(t, "text_input", "text_a", helped=True)
    PAGE.sentence_origin(t, key("text_a"))
    PAGE.widget(t, "text_input", "text_b", helped=True)
    c1, c2 = st.columns(2)
    PAGE.widget(t, "selectbox", "d_model", D_MODEL_CHOICES, label="d_model", where=c1)
    PAGE.widget(t, "selectbox", "heads", HEAD_CHOICES, where=c2)
    heads = int(PAGE.value("heads"))
    if st.session_state.get(key("head"), 0) not in range(heads):
        st.session_state[key("head")] = 0
    PAGE.widget(t, "selectbox", "head", list(range(heads)))
    PAGE.seed_input(t)
    PAGE.tables_toggle(t)


def load_lab(t):
    """The cached lab for both sentences, or None after saying why there is none."""
    a, b = (PAGE.value("text_a") or "").strip(), (PAGE.value("text_b") or "").strip()
    if not a:
        st.error(t("lookalikes.err_empty_a"))
    if not b:
        st.error(t("lookalikes.err_empty_b"))
    if not (a and b):
        return None
    lab = None
    with PAGE.guard(t, "look-alikes computation", known=[(AttentionConfigError, "lookalikes.err_config")]):
        numbers = [int(PAGE.value(name)) for name in ("d_model", "heads", "seed", "head", "d_a")]
        lab = cached_lab(a, b, *numbers, MAX_TOKENS)
    if lab is not None:
        PAGE.warn_truncated(t, lab.a.tokenization, which=t("lookalikes.text_a"))
        PAGE.warn_truncated(t, lab.b.tokenization, which=t("lookalikes.text_b"))
    return lab


def weights_chart(t, name: str, alt: str, values, rows, cols, **kwargs) -> None:
    """A weights heatmap (query rows × key columns) and, while tables are on, its numbers."""
    PAGE.chart(weights_map(t, values, rows, cols, **kwargs), name, alt)
    PAGE.table(lambda: tables.labelled_table(values, rows, cols))


def section_cross(t, lab) -> None:
    a, b, head, cross = lab.a, lab.b, lab.head, lab.cross
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
        alt, title = t("lookalikes.alt_self", n=na, head=head), t("lookalikes.self_map", n=na)
        weights_chart(t, "self", alt, a.weights[head], a.tokens, a.tokens, title=title)
    with right:
        alt, title = (
            t("lookalikes.alt_cross", na=na, nb=nb, head=head),
            t("lookalikes.cross_map", na=na, nb=nb),
        )
        key_b = t("lookalikes.axis_key_b")
        weights_chart(t, "cross", alt, cross.weights[head], a.tokens, b.tokens, title=title, col_title=key_b)
    st.caption(t("lookalikes.cross_note", rows=na, cols=nb, out_rows=cross.output.shape[0]))


def section_scores(t, lab) -> None:
    a, scores = lab.a, lab.scores
    st.header(t("lookalikes.score_title"), anchor="scores")
    st.markdown(t("lookalikes.score_intro"))
    PAGE.widget(t, "slider", "d_a", *D_A_RANGE, helped=True)
    heads_row = st.columns(2)  # formulas in their own row so both heatmaps start at the same height
    formulas = (r"e_{ij} = v^\top \tanh(W_1 q_i + W_2 k_j)", r"e_{ij} = q_i \cdot k_j \,/\, \sqrt{d_k}")
    for column, name, formula in zip(heads_row, ("additive_name", "dot_name"), formulas, strict=True):
        column.subheader(t(f"lookalikes.{name}"))
        column.latex(formula)
    for column, kind in zip(st.columns(2), ("additive", "dot"), strict=True):
        weights, numbers = getattr(scores, f"{kind}_weights"), getattr(scores, f"{kind}_scores")
        with column:
            PAGE.chart(weights_map(t, weights, a.tokens, a.tokens), kind, t(f"lookalikes.alt_{kind}", n=a.n))
            st.caption(t(f"lookalikes.params_{kind}", count=getattr(scores, f"{kind}_params")))
            PAGE.table(lambda numbers=numbers: tables.labelled_table(numbers, a.tokens, a.tokens))
    st.latex(r"a_{ij} = \mathrm{softmax}_j(e_{ij})")
    st.markdown(t("lookalikes.score_note"))


def section_causal(t, lab) -> None:
    bidir, causal, head = lab.a, lab.causal, lab.head
    st.header(t("lookalikes.causal_title"), anchor="causal")
    st.markdown(t("lookalikes.causal_intro"))
    tokens, n = bidir.tokens, bidir.n
    left, right = st.columns(2)
    with left:
        alt = t("lookalikes.alt_bidir", n=n)
        weights_chart(t, "bidir", alt, bidir.weights[head], tokens, tokens, title=t("lookalikes.bidir_name"))
    with right:
        title, alt = t("lookalikes.causal_name"), t("lookalikes.alt_causal", n=n)
        weights_chart(
            t, "causal", alt, causal.weights[head], tokens, tokens, allowed=causal.mask, title=title
        )
    same = t("lookalikes.same_yes") if lab.causal_last_row_same else t("lookalikes.same_no")
    first = f"{causal.weights[head][0, 0]:.2f}"
    st.markdown(t("lookalikes.causal_note", first=first, last=same, masked=lab.causal_masked))


def section_rnn(t) -> None:
    st.header(t("lookalikes.rnn_title"), anchor="rnn")
    st.markdown(t("lookalikes.rnn_intro"))
    rows = {
        t("lookalikes.col_attention"): [row.self_attention for row in RNN_COMPARISON],
        t("lookalikes.col_rnn"): [row.rnn for row in RNN_COMPARISON],
        t("lookalikes.col_meaning"): [t(f"lookalikes.meaning_{row.aspect}") for row in RNN_COMPARISON],
    }
    aspects = [t(f"lookalikes.aspect_{row.aspect}") for row in RNN_COMPARISON]
    # st.table, not a dataframe: it wraps long text
    st.table(kit.frame(rows, index=aspects, index_name=t("lookalikes.col_aspect")))

    st.subheader(t("lookalikes.path_title"))
    c1, c2, c3 = st.columns(3)
    PAGE.widget(t, "slider", "n", *PATH_N_RANGE, label="n", where=c1)
    n = int(PAGE.value("n"))
    for end in ("i", "j"):
        st.session_state[key(end)] = min(int(PAGE.value(end)), n - 1)
    PAGE.widget(t, "slider", "i", 0, n - 1, label="i", where=c2)
    PAGE.widget(t, "slider", "j", 0, n - 1, label="j", where=c3)
    ill = rnn_steps_illustration(n, int(PAGE.value("i")), int(PAGE.value("j")))
    rnn, attention = t("lookalikes.rnn_name"), t("lookalikes.attention_name")
    steps = t("lookalikes.path_steps")
    text = PathText(rnn, attention, steps, steps, t("lookalikes.position"))
    fig = path_figure(ill.n, ill.i, ill.j, ill.rnn_hidden_states, ill.attention_path_length, text)
    lengths = dict(rnn=ill.rnn_path_length, att=ill.attention_path_length)
    PAGE.chart(fig, "path", t("lookalikes.alt_path", n=n, i=ill.i, j=ill.j, **lengths))
    m = st.columns(4)
    m[0].metric(t("lookalikes.metric_rnn_path"), ill.rnn_path_length)
    m[1].metric(t("lookalikes.metric_att_path"), ill.attention_path_length)
    m[2].metric(t("lookalikes.metric_rnn_seq"), ill.rnn_sequential_steps)
    m[3].metric(t("lookalikes.metric_att_seq"), ill.attention_sequential_steps)
    path = {
        t("lookalikes.col_aspect"): [t("lookalikes.metric_path"), t("lookalikes.metric_seq")],
        rnn: [ill.rnn_path_length, ill.rnn_sequential_steps],
        attention: [ill.attention_path_length, ill.attention_sequential_steps],
    }
    PAGE.table(path, hide_index=True)

    st.subheader(t("lookalikes.cost_title"))
    st.markdown(t("lookalikes.cost_intro"))
    c1, c2 = st.columns(2)
    PAGE.widget(t, "number_input", "cost_n", *COST_N_RANGE, step=64, label="n", where=c1)
    PAGE.widget(t, "number_input", "cost_d", *COST_D_RANGE, step=64, label="d", where=c2)
    n_c, d_c = int(PAGE.value("cost_n")), int(PAGE.value("cost_d"))
    cost, curves = layer_cost(n_c, d_c), cached_curves(n_c, d_c)
    st.latex(rf"n^2 d = {curves.n2d:,}\qquad n d^2 = {curves.nd2:,}".replace(",", r"{,}"))
    st.markdown(t(f"lookalikes.cost_{curves.verdict}", ratio=f"{curves.ratio:.3g}"))
    words = {
        name: t(f"lookalikes.cost_{name}") for name in ("attention", "rnn", "n_axis", "ops_axis", "chosen")
    }
    text = CostText(**words, crossing=t("lookalikes.cost_crossing", d=d_c))
    fig = cost_figure(curves.ns, curves.attention, curves.rnn, d_c, n_c, text)
    PAGE.chart(fig, "cost", t("lookalikes.alt_cost", d=d_c, n=n_c))
    macs = {name: f"{count:,}" for name, count in asdict(cost).items()}  # every count of the layer
    st.caption(t("lookalikes.cost_exact", **macs))
    numbers = {"n": [int(x) for x in curves.ns], "n²·d": curves.attention, "n·d²": curves.rnn}
    PAGE.table(numbers, hide_index=True, height=240)


def section_terms(t) -> None:
    st.header(t("lookalikes.terms_title"), anchor="terms")
    st.markdown(t("lookalikes.terms_intro"))
    yes_no = {True: t("lookalikes.yes"), False: t("lookalikes.no")}
    rows = {
        t("lookalikes.col_q_from"): [t(f"lookalikes.source_{r.query_source}") for r in LOOKALIKES],
        t("lookalikes.col_kv_from"): [t(f"lookalikes.source_{r.key_value_source}") for r in LOOKALIKES],
        t("lookalikes.col_score"): [t(f"lookalikes.score_{r.score}") for r in LOOKALIKES],
        t("lookalikes.col_mask"): [t(f"lookalikes.mask_{r.mask}") for r in LOOKALIKES],
        t("lookalikes.col_heads"): [yes_no[r.parallel_heads] for r in LOOKALIKES],
        t("lookalikes.col_tell"): [t(f"lookalikes.tell_{r.term}") for r in LOOKALIKES],
    }
    terms = [t(f"lookalikes.term_{r.term}") for r in LOOKALIKES]
    st.table(kit.frame(rows, index=terms, index_name=t("lookalikes.col_term")))


@PAGE.slides
def main() -> None:
    t = PAGE.open(settings)
    lab = load_lab(t)
    if lab is not None:
        PAGE.section(section_cross, t, lab)
        PAGE.section(section_scores, t, lab)
        PAGE.section(section_causal, t, lab)
    for section in (section_rnn, section_terms):
        PAGE.section(section, t)
    PAGE.section(lookalikes_ssm.section_ssm, t, PAGE)


main()
