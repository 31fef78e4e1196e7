"""Lab "Masks": where the mask goes, the classic mistakes, and leakage measured.

Thin page: widgets (``mk_`` keys) -> cached calls into ``attention_core`` (tokenize, embed,
init_params) and ``attention_core.lab_masks`` -> pure builders in ``attention_ui.figures`` and
``attention_ui.figures_masks`` -> st.plotly_chart. All text from the ``masks`` catalog.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import PAD_TOKEN, AttentionConfig, embed, init_params, tokenize
from attention_core.embeddings import positional_encoding, token_embedding
from attention_core.lab_masks import (
    LAB_MASK_KINDS,
    METHODS,
    leakage,
    leakage_matrix,
    mask_matrices,
    masked_attention,
)
from attention_core.steps import project
from attention_ui import figures, tables
from attention_ui import figures_masks as fmk
from attention_ui.state import current_language, translator
from attention_ui.steps_view import show_tokens
from attention_ui.widgets import escape_markdown, refresh_translated_choices

log = logging.getLogger(__name__)

MAX_TOKENS = 16  # the leakage matrix runs 2·n layers; 16 keeps it instant and the maps readable
D_MODEL = 16
HEADS = 2
PAD_RANGE = (0, 4)
WINDOW_RANGE = (1, 8)
SEED_RANGE = (0, 2**31 - 1)
CAUSAL_KINDS = ("causal", "causal+padding", "sliding")
KEEP = "session"

DEFAULTS = {
    "mk_kind": "causal",
    "mk_pad": 2,
    "mk_window": 2,
    "mk_seed": 0,
    "mk_head": 0,
    "mk_all": False,
    "mk_tables": False,
    "mk_position": 3,
    "mk_matrix_method": "zero_values",
}
CHOICE_KEYS = ("mk_kind", "mk_head", "mk_matrix_method", "mk_position")


def init_state() -> None:
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    t = translator()  # the sentence a learner starts with is in the page's language
    st.session_state.setdefault("mk_text", t("masks.default_text"))
    st.session_state.setdefault("mk_replacement", t("masks.default_replacement"))


def kind_key(kind: str) -> str:
    return "masks.kind_" + kind.replace("+", "_")


# --- cached core calls ------------------------------------------------------------------------------


@st.cache_data(max_entries=32, show_spinner=False)
def cached_model(tokens: tuple[str, ...], seed: int):
    """X [n, d_model], Q/K/V [h, n, d], the parameters and the divisor √d_k for the tokens."""
    config = AttentionConfig(d_model=D_MODEL, heads=HEADS, seed=seed)
    params = init_params(config)
    X = embed(tokens, D_MODEL, seed, positional=True)  # [n, d_model]
    Q = project(X, params.W_Q, params.b_Q)  # [h, n, d_k]
    K = project(X, params.W_K, params.b_K)  # [h, n, d_k]
    V = project(X, params.W_V, params.b_V)  # [h, n, d_v]
    return X, Q, K, V, params, config.divisor


@st.cache_data(max_entries=32, show_spinner=False)
def cached_methods(tokens: tuple[str, ...], seed: int, kind: str, n_pad: int, window: int, head: int):
    _, Q, K, V, _, divisor = cached_model(tokens, seed)
    allowed = mask_matrices(kind, len(tokens), n_pad, window).allowed
    return {m: masked_attention(m, Q[head], K[head], V[head], allowed, divisor) for m in METHODS}


@st.cache_data(max_entries=32, show_spinner=False)
def cached_leakage(
    tokens: tuple[str, ...], seed: int, kind: str, n_pad: int, window: int, position: int, replacement: str
):
    X, _, _, _, params, divisor = cached_model(tokens, seed)
    n = len(tokens)
    allowed = mask_matrices(kind, n, n_pad, window).allowed
    # The new token's vector, built exactly as the core builds X: its embedding plus the position's PE.
    row = token_embedding(replacement, D_MODEL, seed) + positional_encoding(n, D_MODEL)[position]
    return {m: leakage(X, params, position, m, allowed, divisor, replacement=row) for m in METHODS}


@st.cache_data(max_entries=32, show_spinner=False)
def cached_leakage_matrix(
    tokens: tuple[str, ...], seed: int, kind: str, n_pad: int, window: int, method: str
):
    X, _, _, _, params, divisor = cached_model(tokens, seed)
    allowed = mask_matrices(kind, len(tokens), n_pad, window).allowed
    return leakage_matrix(X, params, method, allowed, divisor, seed=seed)


# --- widgets ----------------------------------------------------------------------------------------


def controls(t) -> None:
    with st.sidebar:
        st.header(t("masks.settings"))
        st.text_area(t("masks.text"), key="mk_text", height=80, help=t("masks.text_help"), persist_state=KEEP)
        st.selectbox(
            t("masks.kind"), LAB_MASK_KINDS, key="mk_kind", format_func=lambda k: t(kind_key(k)),
            help=t("masks.kind_help"), persist_state=KEEP,
        )  # fmt: skip
        c1, c2 = st.columns(2)
        c1.number_input(
            t("masks.pad"), *PAD_RANGE, step=1, key="mk_pad", help=t("masks.pad_help"), persist_state=KEEP
        )
        c2.number_input(
            t("masks.window"),
            *WINDOW_RANGE,
            step=1,
            key="mk_window",
            help=t("masks.window_help"),
            persist_state=KEEP,
        )
        st.number_input(t("masks.seed"), *SEED_RANGE, step=1, key="mk_seed", persist_state=KEEP)
        st.toggle(t("masks.show_all"), key="mk_all", persist_state=KEEP)
        st.toggle(t("masks.show_tables"), key="mk_tables", persist_state=KEEP)


def read_tokens(t):
    """(tokens with pads, n_pad) or None after saying why not."""
    text = st.session_state["mk_text"] or ""
    tok = tokenize(text, max_tokens=MAX_TOKENS)
    if not tok.tokens:
        st.error(t("masks.err_empty"))
        return None
    if tok.total_tokens > len(tok.tokens):
        st.warning(t("masks.warn_truncated", total=tok.total_tokens, kept=len(tok.tokens)))
    n_pad = st.session_state["mk_pad"]
    if not (isinstance(n_pad, int) and PAD_RANGE[0] <= n_pad <= PAD_RANGE[1]):
        st.error(t("masks.err_range", name=t("masks.pad"), lo=PAD_RANGE[0], hi=PAD_RANGE[1]))
        return None
    tokens = tuple(tok.tokens) + (PAD_TOKEN,) * n_pad
    if len(tokens) < 2:
        st.error(t("masks.err_short"))
        return None
    return tokens, n_pad


def chart(fig, key: str, alt: str, width: int | str = "stretch") -> None:
    st.plotly_chart(fig, key=f"mk_chart_{key}", alt=alt, width=width, config={"displaylogo": False})


def table(frame: pd.DataFrame) -> None:
    if st.session_state["mk_tables"]:
        st.dataframe(frame, width="stretch", height=min(460, 38 + 35 * len(frame)))


def square_width(n: int) -> int | str:
    return "stretch" if n > 14 else 220 + 55 * n


def hover_text(t) -> figures.HoverText:
    return figures.HoverText(
        query=t("masks.hover_query"), key=t("masks.hover_key"), value=t("masks.hover_value"),
        masked=t("masks.hover_masked"),
    )  # fmt: skip


# --- sections ---------------------------------------------------------------------------------------


def section_masks(t, tokens, n_pad, kind, window, seed) -> None:
    n = len(tokens)
    hover = hover_text(t)
    axes = dict(query_title=t("masks.axis_query"), key_title=t("masks.axis_key"))
    st.header(t("masks.h_mask"))
    st.markdown(t("masks.explain_mask"))
    st.latex(
        r"\mathrm{Attention}(Q,K,V) = \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right)V,"
        r"\qquad M_{ij} = \begin{cases} 0 & j \in \mathcal{A}_i \\ -\infty & j \notin \mathcal{A}_i \end{cases}"
    )
    st.markdown(t("masks.allowed_set"))
    if st.session_state["mk_all"]:
        mats = [mask_matrices(k, n, n_pad, window) for k in LAB_MASK_KINDS]
        chart(
            fmk.panels_figure(
                [np.zeros((n, n))] * len(mats), [t(kind_key(k)) for k in LAB_MASK_KINDS], tokens, kind="mask",
                allowed=[m.allowed for m in mats], hover=hover,
            ),
            "all_masks",
            t("masks.alt_all_masks", n=n),
        )  # fmt: skip
        st.caption(t("masks.caption_all", w=window, pads=n_pad))
        table(
            pd.DataFrame(
                {t(kind_key(m.kind)): m.allowed_per_query for m in mats}, index=tables.token_index(tokens)
            ).rename_axis(t("masks.col_visible"))
        )
    lab = mask_matrices(kind, n, n_pad, window)
    st.markdown(
        t(
            "masks.mask_summary",
            kind=t(kind_key(kind)),
            masked=int((~lab.allowed).sum()),
            total=n * n,
            per_query=", ".join(str(int(c)) for c in lab.allowed_per_query),
        )
    )
    st.markdown(t(f"masks.about_{kind.replace('+', '_')}", w=window))
    st.radio(
        t("masks.head"), list(range(HEADS)), key="mk_head", horizontal=True,
        format_func=lambda h: t("masks.head_name", h=h), help=t("masks.head_help"), persist_state=KEEP,
    )  # fmt: skip
    head = int(st.session_state["mk_head"])
    res = cached_methods(tokens, seed, kind, n_pad, window, head)["correct"]
    c1, c2, c3 = st.columns(3)
    with c1:
        st.markdown(f"**{t('masks.m_title')}**")
        chart(
            figures.mask_heatmap(lab.allowed, tokens, hover=hover, **axes), "mask", t("masks.alt_mask", n=n)
        )
    with c2:
        st.markdown(f"**{t('masks.masked_scores_title')}**")
        scores = np.where(lab.allowed, res.scores, -np.inf)
        chart(
            figures.attention_heatmap(scores, tokens, allowed=lab.allowed, hover=hover, **axes),
            "masked_scores",
            t("masks.alt_masked_scores", n=n),
        )
    with c3:
        st.markdown(f"**{t('masks.weights_title')}**")
        chart(
            figures.attention_heatmap(
                res.effective_weights, tokens, kind="weights", allowed=lab.allowed, hover=hover, **axes
            ),
            "weights",
            t("masks.alt_weights", n=n),
        )
    table(tables.mask_table(lab.allowed, tokens))
    table(tables.attention_table(scores, tokens))
    table(tables.attention_table(res.effective_weights, tokens))


def section_mistakes(t, tokens, n_pad, kind, window, seed) -> None:
    n = len(tokens)
    hover = hover_text(t)
    st.header(t("masks.h_mistakes"))
    st.markdown(t("masks.explain_mistakes"))
    head = int(st.session_state["mk_head"])
    results = cached_methods(tokens, seed, kind, n_pad, window, head)
    lab = mask_matrices(kind, n, n_pad, window)
    if lab.allowed.all():
        st.info(t("masks.info_nothing_masked"))
    chart(
        fmk.panels_figure(
            [results[m].effective_weights for m in METHODS], [t(f"masks.method_{m}") for m in METHODS], tokens,
            kind="weights", allowed=None, hover=hover, max_cols=2,
        ),
        "methods",
        t("masks.alt_methods", n=n),
    )  # fmt: skip
    st.caption(t("masks.caption_methods"))
    if st.session_state["mk_tables"]:
        for m in METHODS:
            st.markdown(f"**{t(f'masks.method_{m}')}**")
            table(tables.attention_table(results[m].effective_weights, tokens))
    correct = results["correct"].output
    rows = []
    for m in METHODS:
        r = results[m]
        forbidden = float(np.where(lab.allowed, 0.0, r.effective_weights).sum())
        rows.append(
            {
                t("masks.col_method"): t(f"masks.method_{m}"),
                t("masks.col_row_sums"): f"{float(r.row_sums.min()):.4f} … {float(r.row_sums.max()):.4f}",
                t("masks.col_forbidden"): fmk.sci(forbidden, "0"),
                t("masks.col_diff"): fmk.sci(float(np.max(np.abs(r.output - correct))), "0"),
            }
        )
    st.dataframe(pd.DataFrame(rows).set_index(t("masks.col_method")), width="stretch")
    st.markdown(t("masks.explain_zero_v"))
    st.latex(
        r"\sum_{j \in \mathcal{A}_i} \frac{e^{s_{ij}}}{Z_i}\, v_j"
        r"\;\ne\; \sum_{j \in \mathcal{A}_i} \frac{e^{s_{ij}}}{\sum_{j' \in \mathcal{A}_i} e^{s_{ij'}}}\, v_j"
    )
    st.markdown(t("masks.explain_renormalise"))
    st.latex(
        r"\frac{w_{ij}}{\sum_{j' \in \mathcal{A}_i} w_{ij'}}"
        r"= \frac{e^{s_{ij}}/Z_i}{\sum_{j' \in \mathcal{A}_i} e^{s_{ij'}}/Z_i}"
        r"= \frac{e^{s_{ij}}}{\sum_{j' \in \mathcal{A}_i} e^{s_{ij'}}},\qquad Z_i = \sum_{j'=0}^{n-1} e^{s_{ij'}}"
    )
    st.markdown(t("masks.renormalise_caveat"))


def section_leakage(t, tokens, n_pad, kind, window, seed) -> None:
    n = len(tokens)
    st.header(t("masks.h_leak"))
    leak_kind = kind if kind in CAUSAL_KINDS else "causal"
    st.markdown(t("masks.explain_leak"))
    if leak_kind != kind:
        st.info(t("masks.info_leak_causal", kind=t(kind_key(kind))))
    positions = list(range(1, n))
    if st.session_state["mk_position"] not in positions:
        st.session_state["mk_position"] = min(3, n - 1)
    c1, c2 = st.columns(2)
    c1.selectbox(
        t("masks.position"), positions, key="mk_position", help=t("masks.position_help"),
        format_func=lambda i: f"#{i} {tokens[i]}", persist_state=KEEP,
    )  # fmt: skip
    c2.text_input(
        t("masks.replacement"), key="mk_replacement", help=t("masks.replacement_help"), persist_state=KEEP
    )
    position = int(st.session_state["mk_position"])
    replacement = (st.session_state["mk_replacement"] or "").strip()
    if not replacement or len(replacement) > 40:
        st.error(t("masks.err_replacement"))
        return
    if replacement == tokens[position]:
        st.info(t("masks.info_same_token"))
    results = cached_leakage(tokens, seed, leak_kind, n_pad, window, position, replacement)
    st.markdown(
        t(
            "masks.leak_setup",
            position=position,
            old=escape_markdown(tokens[position]),
            new=escape_markdown(replacement),
            kind=t(kind_key(leak_kind)),
        )
    )
    names = {m: t(f"masks.method_{m}") for m in METHODS}
    chart(
        fmk.leakage_bars(
            {m: r.moved for m, r in results.items()}, names, tokens, position, zero_label=t("masks.zero_exact"),
            x_title=t("masks.axis_earlier"), y_title=t("masks.axis_moved"), title=t("masks.title_leak_bars"),
        ),
        "leak_bars",
        t("masks.alt_leak_bars", position=position),
    )  # fmt: skip
    st.caption(t("masks.caption_leak_bars"))
    rows = []
    for m, r in results.items():
        verdict = "verdict_zero" if r.earlier_unchanged else (
            "verdict_rounding" if r.max_earlier < fmk.ROUNDING_LEVEL else "verdict_leak"
        )  # fmt: skip
        rows.append(
            {
                t("masks.col_method"): names[m],
                t("masks.col_max_earlier"): fmk.sci(r.max_earlier, "0.0"),
                t("masks.col_exact"): t("masks.yes") if r.earlier_unchanged else t("masks.no"),
                t("masks.col_verdict"): t(f"masks.{verdict}"),
            }
        )
    st.dataframe(pd.DataFrame(rows).set_index(t("masks.col_method")), width="stretch")
    if st.session_state["mk_tables"]:
        labels = tables.token_index(tokens)
        st.dataframe(
            pd.DataFrame(
                {names[m]: [fmk.sci(v, "0.0") for v in r.moved] for m, r in results.items()}, index=labels
            ),
            width="stretch",
        )
    st.markdown(t("masks.explain_leak_result"))

    st.subheader(t("masks.h_matrix"))
    st.markdown(t("masks.explain_matrix"))
    st.selectbox(
        t("masks.matrix_method"),
        METHODS,
        key="mk_matrix_method",
        format_func=lambda m: names[m],
        persist_state=KEEP,
    )
    method = st.session_state["mk_matrix_method"]
    with st.spinner(t("masks.computing")):
        lm = cached_leakage_matrix(tokens, seed, leak_kind, n_pad, window, method)
    chart(
        fmk.leakage_heatmap(
            lm.moved, tokens, zero_label=t("masks.zero_cell"), changed_title=t("masks.axis_changed"),
            output_title=t("masks.axis_output"),
        ),
        "leak_matrix",
        t("masks.alt_leak_matrix", method=names[method], leaks=lm.total_leaks),
        width=square_width(n),
    )  # fmt: skip
    st.markdown(t("masks.matrix_summary", method=names[method], leaks=lm.total_leaks, cells=n * (n - 1) // 2))
    if st.session_state["mk_tables"]:
        labels = tables.token_index(tokens)
        st.dataframe(
            pd.DataFrame(
                [[fmk.sci(v, "0.0") for v in row] for row in lm.moved], index=labels, columns=labels
            ),
            width="stretch",
        )


def main() -> None:
    t = translator()
    init_state()
    refresh_translated_choices(st.session_state, CHOICE_KEYS, current_language(), "mk_lang_shown")
    controls(t)
    st.title(t("masks.title"))
    st.markdown(t("masks.intro"))
    read = read_tokens(t)
    if read is None:
        return
    tokens, n_pad = read
    show_tokens(tokens, n_pad)
    kind = st.session_state["mk_kind"] if st.session_state["mk_kind"] in LAB_MASK_KINDS else "causal"
    window, seed = st.session_state["mk_window"], st.session_state["mk_seed"]
    if not (isinstance(window, int) and WINDOW_RANGE[0] <= window <= WINDOW_RANGE[1]):
        st.error(t("masks.err_range", name=t("masks.window"), lo=WINDOW_RANGE[0], hi=WINDOW_RANGE[1]))
        return
    if not (isinstance(seed, int) and SEED_RANGE[0] <= seed <= SEED_RANGE[1]):
        st.error(t("masks.err_range", name=t("masks.seed"), lo=SEED_RANGE[0], hi=SEED_RANGE[1]))
        return
    try:
        section_masks(t, tokens, n_pad, kind, window, seed)
        section_mistakes(t, tokens, n_pad, kind, window, seed)
        section_leakage(t, tokens, n_pad, kind, window, seed)
    except Exception:  # a bug must not leave the learner with a traceback
        log.exception("mask lab failed")
        st.error(t("masks.err_unexpected"))
        return
    st.header(t("masks.h_takeaway"))
    st.markdown(t("masks.takeaway"))


main()
