"""Attention playground: type a sentence, pick the settings, follow every step of self-attention.

Thin page: widgets (all state in ``pg_`` keys) -> AttentionConfig -> cached core call -> pure figure
builders -> st.plotly_chart. Every message comes from the ``playground`` catalog.
"""

from __future__ import annotations

import logging

import streamlit as st

from attention_core import MASK_KINDS, AttentionConfig, AttentionConfigError, trace_text, worked_example_trace
from attention_core.tokenizer import DEFAULT_MAX_TOKENS
from attention_ui import examples, explain_view, export, presenter, pretrained_view, steps_view, url_sync
from attention_ui.state import current_language, translator
from attention_ui.widgets import (
    D_MODEL_RANGE,
    DIVISOR_RANGE,
    HEAD_DIM_RANGE,
    HEADS_RANGE,
    PAD_RANGE,
    SCALE_CHOICES,
    SEED_RANGE,
    escape_markdown,
    read_config,
    refresh_translated_choices,
)

log = logging.getLogger(__name__)

DEFAULTS = {
    "pg_preset": "sentence",
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
    "pg_all_heads": False,  # draw a large all-heads figure (steps_view.all_heads_on_request)
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
    t = translator()  # the sentence a learner starts with is in the page's language
    st.session_state.setdefault("pg_text", t("playground.default_text"))


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
        examples.example_picker(t, current_language())
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
        values = dict(problem.values)
        if values.get("name") in ("heads", "seed"):  # name the widget as its label does
            values["name"] = t(f"playground.{values['name']}")
        st.error(t(problem.key, **values))
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


def head_selector(t, heads: int) -> None:
    """The head radio, drawn next to the per-head steps (both views)."""
    st.radio(
        t("playground.head"),
        list(range(heads)),
        key="pg_head",
        format_func=lambda k: t("playground.head_name", h=k),
        horizontal=True,
        help=t("playground.head_help"),
        persist_state=KEEP,
    )


def make_view(t, trace, example: bool, text: dict | None = None) -> steps_view.View:
    if st.session_state.get("pg_head", 0) not in range(trace.heads):
        st.session_state["pg_head"] = 0
    explain_view.clamp_cell(st.session_state, trace.n)
    return steps_view.View(
        t=t,
        trace=trace,
        example=example,
        head=int(st.session_state["pg_head"]),
        show_tables=bool(st.session_state["pg_tables"]),
        on_cell=explain_view.make_on_cell(trace.n, trace.V.shape[2]),
        after={"softmax": explain_view.cell_panel, "head_out": explain_view.row_panel},
        text=text or {},
        all_heads_switch=lambda: all_heads_switch(t),
    )


def all_heads_switch(t) -> bool:
    """The switch for a large all-heads figure (its value is kept in the URL)."""
    return st.toggle(t("playground.all_heads_draw"), key="pg_all_heads", persist_state=KEEP)


def main() -> None:
    init_state()
    url_sync.read_url(st.session_state)  # first run (or a changed URL) only, before any widget
    t = translator()
    refresh_translated_choices(st.session_state, CHOICE_KEYS, current_language(), "pg_lang_shown")
    example = st.session_state["pg_preset"] == "example"
    present = bool(st.session_state.get(presenter.PRESENT_KEY))
    try:
        ignored = url_sync.ignored_notice(st.session_state)
        if ignored:  # both views: a malformed ?layer= is as worth naming as a malformed ?seed=
            st.warning(t("playground.url_ignored", names=", ".join(escape_markdown(n) for n in ignored)))
        if not present and pretrained_view.weights_switch(t):  # all-MiniLM-L6-v2: own controls, same steps
            pretrained_view.page(
                t,
                lambda tr, text: steps_view.render_all(
                    lambda: make_view(t, tr, False, text), lambda: head_selector(t, tr.heads), write_url
                ),
            )
            return
        if not present:
            settings_sidebar(t, example)
            with st.sidebar:
                presenter.enter_button(t)
        if not present:
            st.title(t("playground.title"))
            st.markdown(t("playground.intro"))
            if example:
                st.info(t("playground.example_note"))
        trace = load_trace(t, example)
        if trace is None:
            return
        if present:
            presenter.render(make_view(t, trace, example), lambda: head_selector(t, trace.heads))
            return
        st.markdown(t("playground.tokens", n=trace.n, pads=trace.n_pad))
        steps_view.show_tokens(trace.tokens, trace.n_pad)
        trace_downloads(t, trace)
        steps_view.render_all(lambda: make_view(t, trace, example), lambda: head_selector(t, trace.heads), write_url)
    finally:
        write_url()


def write_url() -> None:
    """The page's view into the URL: at the end of every run, and of every per-head fragment run."""
    url_sync.write_url(st.session_state)


def trace_downloads(t, trace) -> None:
    c1, c2, _ = st.columns([1, 1, 1.4])
    # Callables: the files are built when clicked, not on every rerun (the JSON took ~4.6 s per rerun at 256 tokens).
    c1.download_button(t("playground.download_npz"), data=lambda: export.npz_bytes(trace), file_name="attention_trace.npz",
                       mime="application/octet-stream", key="pg_dl_npz", icon=":material/download:")  # fmt: skip
    c2.download_button(t("playground.download_json"), data=lambda: export.json_bytes(trace), file_name="attention_trace.json",
                       mime="application/json", key="pg_dl_json", icon=":material/download:")  # fmt: skip


main()
