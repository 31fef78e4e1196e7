"""Attention playground: type a sentence, pick the settings, follow every step of self-attention.

Thin page: widgets (all state in ``pg_`` keys) -> AttentionConfig -> cached core call -> pure figure
builders -> st.plotly_chart. Every message comes from the ``playground`` catalog.
"""

from __future__ import annotations

import logging

import numpy as np
import streamlit as st

from attention_core import MASK_KINDS, AttentionConfig, AttentionConfigError, trace_text, worked_example_trace
from attention_core.tokenizer import DEFAULT_MAX_TOKENS
from attention_ui import figures, tables
from attention_ui.state import current_language, translator
from attention_ui.widgets import (
    D_MODEL_RANGE,
    DIVISOR_RANGE,
    HEAD_DIM_RANGE,
    HEADS_RANGE,
    PAD_RANGE,
    SCALE_CHOICES,
    SEED_RANGE,
    read_config,
    refresh_translated_choices,
    token_chips_markdown,
)

log = logging.getLogger(__name__)

DEFAULTS = {
    "pg_preset": "sentence",
    "pg_text": "the cat sat on the mat",
    "pg_d_model": 16,
    "pg_heads": 2,
    "pg_auto_dims": True,
    "pg_d_k": 8,
    "pg_d_v": 8,
    "pg_mask": "none",
    "pg_pad": 0,
    "pg_scale": "sqrt",
    "pg_divisor": 2.0,
    "pg_seed": 0,
    "pg_max_tokens": DEFAULT_MAX_TOKENS,
    "pg_positional": True,
    "pg_tables": False,
    "pg_head": 0,
}
PRESETS = ("sentence", "example")
MAX_TOKENS_RANGE = (4, 256)  # 256-token maps stay interactive (bench/page_latency.py)
CHOICE_KEYS = ("pg_preset", "pg_mask", "pg_scale", "pg_head")  # widgets whose labels are translated
KEEP = "session"  # widget values survive hiding the widget and switching pages


@st.cache_resource(max_entries=32, show_spinner=False)
def cached_trace(text: str, config: AttentionConfig, max_tokens: int = DEFAULT_MAX_TOKENS):
    """The core's trace for (text, config). Traces are frozen with read-only arrays, so sharing
    one object between reruns and sessions is safe and avoids copying."""
    return trace_text(text, config, max_tokens=max_tokens)


@st.cache_resource(max_entries=1, show_spinner=False)
def cached_example():
    return worked_example_trace()


def init_state() -> None:
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)


def start_manual_dims() -> None:
    """When d_k/d_v switch to manual, start from the values they had (d_model // heads)."""
    s = st.session_state
    if not s["pg_auto_dims"]:
        size = max(1, int(s["pg_d_model"]) // max(1, int(s["pg_heads"])))
        s["pg_d_k"] = s["pg_d_v"] = min(size, HEAD_DIM_RANGE[1])


def settings_sidebar(t, example: bool) -> None:
    """All AttentionConfig controls, compact, in the sidebar."""
    with st.sidebar:
        st.header(t("playground.settings"))
        st.selectbox(
            t("playground.preset"),
            PRESETS,
            key="pg_preset",
            format_func=lambda p: t(f"playground.preset_{p}"),
            persist_state=KEEP,
        )
        if example:
            st.info(t("playground.example_fixed"))
            st.markdown(t("playground.example_values"))
            st.toggle(t("playground.show_tables"), key="pg_tables", persist_state=KEEP)
            return
        st.text_area(
            t("playground.text"), key="pg_text", height=90, help=t("playground.text_help"), persist_state=KEEP
        )
        st.number_input(
            t("playground.max_tokens"), *MAX_TOKENS_RANGE, step=8, key="pg_max_tokens",
            help=t("playground.max_tokens_help"), persist_state=KEEP,
        )  # fmt: skip
        c1, c2 = st.columns(2)
        c1.number_input(
            "d_model",
            *D_MODEL_RANGE,
            step=1,
            key="pg_d_model",
            help=t("playground.d_model_help"),
            persist_state=KEEP,
        )
        c2.number_input(
            t("playground.heads"),
            *HEADS_RANGE,
            step=1,
            key="pg_heads",
            help=t("playground.heads_help"),
            persist_state=KEEP,
        )
        st.toggle(
            t("playground.auto_dims"),
            key="pg_auto_dims",
            on_change=start_manual_dims,
            help=t("playground.auto_dims_help"),
            persist_state=KEEP,
        )
        if not st.session_state["pg_auto_dims"]:
            c1, c2 = st.columns(2)
            c1.number_input("d_k", *HEAD_DIM_RANGE, step=1, key="pg_d_k", persist_state=KEEP)
            c2.number_input("d_v", *HEAD_DIM_RANGE, step=1, key="pg_d_v", persist_state=KEEP)
        st.selectbox(
            t("playground.mask"),
            MASK_KINDS,
            key="pg_mask",
            format_func=lambda m: t(f"playground.mask_{m.replace('+', '_')}"),
            persist_state=KEEP,
        )
        c1, c2 = st.columns(2)
        c1.number_input(
            t("playground.pad"),
            *PAD_RANGE,
            step=1,
            key="pg_pad",
            help=t("playground.pad_help"),
            persist_state=KEEP,
        )
        c2.number_input(t("playground.seed"), *SEED_RANGE, step=1, key="pg_seed", persist_state=KEEP)
        st.selectbox(
            t("playground.scale"),
            SCALE_CHOICES,
            key="pg_scale",
            format_func=lambda s: t(f"playground.scale_{s}"),
            persist_state=KEEP,
        )
        if st.session_state["pg_scale"] == "custom":
            st.number_input(
                t("playground.divisor"), float(DIVISOR_RANGE[0]), float(DIVISOR_RANGE[1]), step=0.5, format="%.3f",
                key="pg_divisor", persist_state=KEEP,
            )  # fmt: skip
        st.toggle(
            t("playground.positional"),
            key="pg_positional",
            help=t("playground.positional_help"),
            persist_state=KEEP,
        )
        st.toggle(t("playground.show_tables"), key="pg_tables", persist_state=KEEP)


def widget_values() -> dict:
    s = st.session_state
    return {
        "d_model": s["pg_d_model"],
        "heads": s["pg_heads"],
        "auto_dims": s["pg_auto_dims"],
        "d_k": s["pg_d_k"],
        "d_v": s["pg_d_v"],
        "mask": s["pg_mask"],
        "pad": s["pg_pad"],
        "scale": s["pg_scale"],
        "divisor": s["pg_divisor"],
        "seed": s["pg_seed"],
        "positional": s["pg_positional"],
    }


def load_trace(t, example: bool):
    """The trace to show, or None after showing why there is none."""
    if example:
        return cached_example()
    text = st.session_state["pg_text"] or ""
    if not text.strip():
        st.error(t("playground.err_empty"))
        return None
    config, problems = read_config(widget_values())
    for problem in problems:
        st.error(t(problem.key, **problem.values))
    if config is None:
        return None
    try:
        trace = cached_trace(text, config, int(st.session_state["pg_max_tokens"]))
    except AttentionConfigError as err:
        st.error(t("playground.err_config", detail=str(err)))
        return None
    except Exception:  # a bug must not leave the learner with a traceback
        log.exception("attention trace failed")
        st.error(t("playground.err_unexpected"))
        return None
    tok = trace.tokenization
    if tok is not None and tok.total_tokens > len(tok.tokens):
        st.warning(
            t(
                "playground.warn_truncated",
                total=tok.total_tokens,
                kept=len(tok.tokens),
                dropped=tok.total_tokens - len(tok.tokens),
            )
        )
    if tok is not None and tok.chars_cut:
        st.warning(t("playground.warn_chars_cut", chars=tok.chars_cut))
    if tok is not None and tok.removed_controls:
        st.info(t("playground.info_removed", count=tok.removed_controls))
    return trace


class Step:
    """Numbered step headings in computation order."""

    def __init__(self, t) -> None:
        self.t = t
        self.number = 0

    def heading(self, name: str) -> None:
        self.number += 1
        st.subheader(f"{self.number}. {self.t(f'playground.step_{name}')}", anchor=f"step-{name}")
        st.markdown(self.t(f"playground.explain_{name}"))


def shape_line(t, *parts: tuple[str, tuple[int, ...]]) -> None:
    """``Shapes: $Q$: 6×8 · …``; names are LaTeX written here, never user text."""
    text = "\u2003".join(f"${name}$: {' × '.join(str(s) for s in shape)}" for name, shape in parts)
    st.markdown(t("playground.shapes", shapes=text))


def value_range(a: np.ndarray) -> str:
    finite = np.asarray(a)[np.isfinite(a)]
    if not finite.size:
        return "—"
    return f"[{finite.min():.3f}, {finite.max():.3f}]"


def chart(fig, key: str, alt: str, square: bool = False) -> None:
    width = square_width(len(fig.data[0].y)) if square else "stretch"
    st.plotly_chart(fig, key=f"pg_chart_{key}", alt=alt, width=width, config={"displaylogo": False})


def square_width(n: int) -> int | str:
    """Keep the cells of a small n×n map roughly square instead of stretched across the page."""
    return "stretch" if n > 16 else 200 + 55 * n


def table(show: bool, frame) -> None:
    if show:
        st.dataframe(frame, width="stretch", height=min(420, 38 + 35 * len(frame)))


def render_steps(t, trace, example: bool) -> None:
    hover = figures.HoverText(
        query=t("playground.hover_query"),
        key=t("playground.hover_key"),
        token=t("playground.hover_token"),
        dim=t("playground.hover_dim"),
        value=t("playground.hover_value"),
        masked=t("playground.hover_masked"),
    )
    tokens = trace.tokens
    n, h = trace.n, trace.heads
    d_model = trace.X.shape[1]
    d_k, d_v = trace.Q.shape[2], trace.V.shape[2]
    show = bool(st.session_state["pg_tables"])
    axes = dict(query_title=t("playground.axis_query"), key_title=t("playground.axis_key"))
    feat = dict(token_title=t("playground.axis_token"), dim_title=t("playground.axis_dim"), hover=hover)
    step = Step(t)

    # X
    step.heading("x")
    st.latex(r"X = E + P" if not example else r"X \sim \mathcal{N}(0, 1)")
    if example:
        st.caption(t("playground.example_x_note"))
    shape_line(t, ("X", (n, d_model)))
    chart(
        figures.feature_heatmap(trace.X, tokens, **feat),
        "x",
        t("playground.alt_feature", name="X", n=n, d=d_model),
    )
    table(show, tables.feature_table(trace.X, tokens))

    # head selector, next to the per-head steps
    if st.session_state.get("pg_head", 0) not in range(h):
        st.session_state["pg_head"] = 0
    st.radio(
        t("playground.head"),
        list(range(h)),
        key="pg_head",
        format_func=lambda k: t("playground.head_name", h=k),
        horizontal=True,
        help=t("playground.head_help"),
        persist_state=KEEP,
    )
    k = int(st.session_state["pg_head"])

    # Q, K, V
    step.heading("qkv")
    st.latex(rf"Q_{{{k}}} = X W^Q_{{{k}}},\quad K_{{{k}}} = X W^K_{{{k}}},\quad V_{{{k}}} = X W^V_{{{k}}}")
    shape_line(t, ("W^Q, W^K", (d_model, d_k)), ("W^V", (d_model, d_v)), ("Q, K", (n, d_k)), ("V", (n, d_v)))
    cols = st.columns(3)
    for col, (name, mat) in zip(cols, (("Q", trace.Q[k]), ("K", trace.K[k]), ("V", trace.V[k])), strict=True):
        with col:
            st.markdown(f"**{name}**")
            chart(
                figures.feature_heatmap(mat, tokens, show_text=n <= 12 and mat.shape[1] <= 4, **feat),
                f"{name.lower()}",
                t(
                    "playground.alt_feature",
                    name=f"{name} ({t('playground.head_name', h=k)})",
                    n=n,
                    d=mat.shape[1],
                ),
            )
            table(show, tables.feature_table(mat, tokens))

    # raw scores
    step.heading("raw")
    st.latex(rf"S = Q_{{{k}}} K_{{{k}}}^\top")
    shape_line(t, ("Q", (n, d_k)), ("K^\\top", (d_k, n)), ("QK^\\top", (n, n)))
    raw = trace.scores_raw[k]
    chart(
        figures.attention_heatmap(raw, tokens, hover=hover, **axes),
        "raw",
        t("playground.alt_scores", what="QKᵀ", n=n),
        square=True,
    )
    table(show, tables.attention_table(raw, tokens))

    # scaled scores
    step.heading("scaled")
    st.latex(rf"S' = \frac{{S}}{{{_divisor_latex(trace, example)}}}")
    shape_line(t, ("S'", (n, n)))
    scaled = trace.scores_scaled[k]
    st.markdown(
        t(
            "playground.scale_summary",
            divisor=f"{trace.divisor:.4g}",
            before=value_range(raw),
            after=value_range(scaled),
        )
    )
    chart(
        figures.attention_heatmap(scaled, tokens, hover=hover, **axes),
        "scaled",
        t("playground.alt_scores", what=t("playground.step_scaled"), n=n),
        square=True,
    )
    table(show, tables.attention_table(scaled, tokens))

    # mask
    step.heading("mask")
    st.latex(r"M_{ij} = \begin{cases} 0 & \text{allowed} \\ -\infty & \text{masked} \end{cases}")
    kind = trace.config.mask if trace.config is not None else "causal"
    st.markdown(
        t(
            "playground.mask_summary",
            kind=t(f"playground.mask_{kind.replace('+', '_')}"),
            masked=int((~trace.mask).sum()),
            total=n * n,
        )
    )
    shape_line(t, ("M", (n, n)))
    chart(
        figures.mask_heatmap(trace.mask, tokens, hover=hover, **axes),
        "mask",
        t("playground.alt_mask", n=n),
        square=True,
    )
    table(show, tables.mask_table(trace.mask, tokens))

    # masked scores
    step.heading("masked")
    st.latex(r"S'' = S' + M")
    shape_line(t, ("S''", (n, n)))
    masked = trace.scores_masked[k]
    chart(
        figures.attention_heatmap(masked, tokens, allowed=trace.mask, hover=hover, **axes),
        "masked",
        t("playground.alt_scores", what=t("playground.step_masked"), n=n),
        square=True,
    )
    table(show, tables.attention_table(masked, tokens))

    # softmax
    step.heading("softmax")
    st.latex(r"A_{ij} = \frac{e^{S''_{ij}}}{\sum_{j'} e^{S''_{ij'}}}")
    shape_line(t, ("A", (n, n)))
    weights = trace.weights[k]
    if trace.fully_masked_rows.any():
        st.warning(
            t(
                "playground.warn_fully_masked",
                rows=", ".join(str(i) for i in np.flatnonzero(trace.fully_masked_rows)),
            )
        )
    chart(
        figures.attention_heatmap(weights, tokens, kind="weights", allowed=trace.mask, hover=hover, **axes),
        "weights",
        t("playground.alt_weights", head=k, n=n),
        square=True,
    )
    table(show, tables.attention_table(weights, tokens))

    # head output
    step.heading("head_out")
    st.latex(rf"\mathrm{{head}}_{{{k}}} = A V_{{{k}}}")
    shape_line(t, ("A", (n, n)), ("V", (n, d_v)), (rf"\mathrm{{head}}_{{{k}}}", (n, d_v)))
    out = trace.head_outputs[k]
    chart(
        figures.feature_heatmap(out, tokens, **feat),
        "head_out",
        t("playground.alt_feature", name=f"head {k}", n=n, d=d_v),
    )
    table(show, tables.feature_table(out, tokens))

    # all heads
    step.heading("all_heads")
    st.latex(r"A_0, A_1, \dots, A_{h-1}")
    shape_line(t, ("A", (h, n, n)))
    chart(
        figures.heads_small_multiples(
            trace.weights,
            tokens,
            allowed=trace.mask,
            hover=hover,
            head_title=t("playground.head_name", h="{h}"),
        ),
        "all_heads",
        t("playground.alt_all_heads", heads=h, n=n),
    )

    # concat
    step.heading("concat")
    st.latex(r"\mathrm{Concat}(\mathrm{head}_0, \dots, \mathrm{head}_{h-1})")
    shape_line(t, (r"\mathrm{Concat}", (n, h * d_v)))
    dim_names = [f"h{i}·{j}" for i in range(h) for j in range(d_v)]
    chart(
        figures.feature_heatmap(trace.concat, tokens, dim_names=dim_names, group_size=d_v, **feat),
        "concat",
        t("playground.alt_feature", name="Concat", n=n, d=h * d_v),
    )
    table(show, tables.feature_table(trace.concat, tokens, dim_names))

    # output
    step.heading("output")
    st.latex(r"\mathrm{Output} = \mathrm{Concat}(\dots)\, W^O")
    shape_line(
        t, (r"\mathrm{Concat}", (n, h * d_v)), ("W^O", (h * d_v, d_model)), (r"\mathrm{Output}", (n, d_model))
    )
    chart(
        figures.feature_heatmap(trace.output, tokens, **feat),
        "output",
        t("playground.alt_feature", name="Output", n=n, d=d_model),
    )
    table(show, tables.feature_table(trace.output, tokens))


def _divisor_latex(trace, example: bool) -> str:
    if example:
        return r"\sqrt{3}"
    scale = trace.config.scale
    if scale == "sqrt":
        return rf"\sqrt{{d_k}} = \sqrt{{{trace.config.head_dim_k}}}"
    if scale == "none":
        return "1"
    return f"{trace.divisor:g}"


def main() -> None:
    t = translator()
    init_state()
    refresh_translated_choices(st.session_state, CHOICE_KEYS, current_language(), "pg_lang_shown")
    example = st.session_state["pg_preset"] == "example"
    settings_sidebar(t, example)
    st.title(t("playground.title"))
    st.markdown(t("playground.intro"))
    if example:
        st.info(t("playground.example_note"))
    trace = load_trace(t, example)
    if trace is None:
        return
    st.markdown(t("playground.tokens", n=trace.n, pads=trace.n_pad))
    st.markdown(token_chips_markdown(trace.tokens, trace.n_pad))
    render_steps(t, trace, example)


main()
