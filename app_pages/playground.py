"""Attention playground: type a sentence, pick the settings, follow every step of self-attention.

Widgets (all state in ``pg_`` keys, declared once in the table of ``attention_ui.playground.settings``) ->
AttentionConfig -> one cached ``trace_text`` call -> the steps of ``attention_ui.playground.steps_view``
(heatmaps from ``attention_ui.figures.heatmaps``). Every message comes from the ``playground``
catalog.
"""

from __future__ import annotations

import streamlit as st

from attention_core import MASK_KINDS, AttentionConfigError, trace_text, worked_example_trace
from attention_ui import kit
from attention_ui.playground import (
    explain_view,
    first_screen,
    grads_view,
    presenter,
    pretrained_view,
    sentence_box,
    share,
    steps_view,
    url_sync,
)
from attention_ui.playground.settings import (
    CONFIG_KEYS,
    D_MODEL_RANGE,
    DIVISOR_RANGE,
    HEAD_DIM_RANGE,
    HEADS_RANGE,
    MAX_TOKENS_RANGE,
    PAD_RANGE,
    PAGE,
    PRESETS,
    SCALE_CHOICES,
    TABLE,
    read_config,
)

# Traces are frozen with read-only arrays: one object can serve every rerun and session, uncopied.
cached_trace = kit.cached(trace_text)
cached_example = st.cache_resource(max_entries=1, show_spinner=False)(worked_example_trace)


def start_manual_dims() -> None:
    """When d_k/d_v switch to manual, start from the values they had (d_model // heads)."""
    s, key = st.session_state, TABLE.key
    if not s[key("auto_dims")]:
        size = max(1, int(s[key("d_model")]) // max(1, int(s[key("heads")])))
        s[key("d_k")] = s[key("d_v")] = min(size, HEAD_DIM_RANGE[1])


def settings_sidebar(t, example: bool, where) -> None:
    """All AttentionConfig controls, compact, in the sidebar's box ``where``."""
    with where:
        st.header(t("playground.settings"))
        PAGE.widget(t, "selectbox", "preset", PRESETS, format_func=lambda p: t(f"playground.preset_{p}"))
        if example:
            st.info(t("playground.example_fixed"))
            st.markdown(t("playground.example_values"))
            PAGE.tables_toggle(t)
            return
        PAGE.widget(t, "number_input", "max_tokens", *MAX_TOKENS_RANGE, step=8, helped=True)
        c1, c2 = st.columns(2)
        PAGE.widget(
            t, "number_input", "d_model", *D_MODEL_RANGE, step=1, label="d_model", helped=True, where=c1
        )
        PAGE.widget(t, "number_input", "heads", *HEADS_RANGE, step=1, helped=True, where=c2)
        PAGE.widget(t, "toggle", "auto_dims", on_change=start_manual_dims, helped=True)
        if not PAGE.value("auto_dims"):
            c1, c2 = st.columns(2)
            PAGE.widget(t, "number_input", "d_k", *HEAD_DIM_RANGE, step=1, label="d_k", where=c1)
            PAGE.widget(t, "number_input", "d_v", *HEAD_DIM_RANGE, step=1, label="d_v", where=c2)
        mask_name = {m: t(f"playground.mask_{m.replace('+', '_')}") for m in MASK_KINDS}
        PAGE.widget(t, "selectbox", "mask", MASK_KINDS, format_func=mask_name.get)
        c1, c2 = st.columns(2)
        PAGE.widget(t, "number_input", "pad", *PAD_RANGE, step=1, helped=True, where=c1)
        PAGE.seed_input(t, where=c2)
        PAGE.widget(t, "selectbox", "scale", SCALE_CHOICES, format_func=lambda s: t(f"playground.scale_{s}"))
        if PAGE.value("scale") == "custom":
            low, high = float(DIVISOR_RANGE[0]), float(DIVISOR_RANGE[1])
            PAGE.widget(t, "number_input", "divisor", low, high, step=0.5, format="%.3f")
        PAGE.widget(t, "toggle", "positional", helped=True)
        PAGE.tables_toggle(t)


def sidebar(t, example: bool, where) -> None:
    """The settings and the presenter button, in the sidebar's box ``where``."""
    settings_sidebar(t, example, where)
    with where:
        presenter.enter_button(t)


def load_trace(t, example: bool):
    """The trace to show, or None after showing why there is none."""
    if example:
        return cached_example()
    s = st.session_state
    text = s[PAGE.key("text")] or ""
    if not text.strip():
        st.error(t("playground.err_empty"))
        return None
    config, problems = read_config({name: s[PAGE.key(name)] for name in CONFIG_KEYS})
    for problem in problems:
        values = dict(problem.values)
        if values.get("name") in ("heads", "seed"):  # name the widget as its label does
            values["name"] = t(f"playground.{values['name']}")
        st.error(t(problem.key, **values))
    if config is None:
        return None
    trace = None
    with PAGE.guard(t, "attention trace", known=[(AttentionConfigError, "playground.err_config")]):
        trace = cached_trace(text, config, max_tokens=int(s[PAGE.key("max_tokens")]))
    tok = trace.tokenization if trace is not None else None
    PAGE.warn_truncated(t, tok)
    if tok is not None and tok.chars_cut:
        st.warning(t("playground.warn_chars_cut", chars=tok.chars_cut))
    if tok is not None and tok.removed_controls:
        st.info(t("playground.info_removed", count=tok.removed_controls))
    return trace


def head_selector(t, heads: int) -> None:
    """The head radio, drawn next to the per-head steps (both views)."""
    names = {k: t("playground.head_name", h=k) for k in range(heads)}
    PAGE.widget(t, "radio", "head", list(names), format_func=names.get, horizontal=True, helped=True)


def presenter_head_picker(t, heads: int):
    """Presenter mode's compact head picker: a selectbox in the controls row (same ``head`` state)."""

    def draw(where, disabled: bool) -> None:
        names = {k: t("playground.head_name", h=k) for k in range(heads)}
        PAGE.widget(
            t,
            "selectbox",
            "head",
            list(names),
            format_func=names.get,
            label_visibility="collapsed",
            disabled=disabled,
            where=where,
        )

    return draw


def make_view(t, trace, example: bool, text: dict | None = None, first: bool = False) -> steps_view.View:
    """The steps' view of ``trace``; ``first``: the session's first view (the practice switch comes
    one run later, with the sidebar's settings)."""
    if st.session_state.get(PAGE.key("head"), 0) not in range(trace.heads):
        st.session_state[PAGE.key("head")] = 0
    explain_view.clamp_cell(st.session_state, trace.n)
    return steps_view.View(
        t=t,
        trace=trace,
        example=example,
        head=int(PAGE.value("head")),
        show_tables=PAGE.tables_on,
        on_cell=explain_view.make_on_cell(trace.n, trace.V.shape[2]),
        after={"softmax": explain_view.cell_panel, "head_out": explain_view.row_panel},
        text=text or {},
        all_heads_switch=lambda: PAGE.widget(t, "toggle", "all_heads", text="all_heads_draw"),
        cell=explain_view.chosen_cell(st.session_state),
        shared_scale_switch=lambda: PAGE.widget(t, "toggle", "shared_scale", helped=True),
        practice_switch=not first,
    )


def render_steps(t, trace, example: bool, text: dict | None = None, selector=None) -> None:
    """Every step (steps_view.render_all), the URL written again after each per-head fragment run;
    ``selector`` replaces the head radio (the pretrained view has its picker above the overview).
    The session's first view in a browser draws step 1 first (first_screen)."""
    rest = None
    deferred = first_screen.defer_rest(st.session_state, st.context.headers)
    if deferred:
        rest = lambda first, last: first_screen.pending(t, first, last)  # noqa: E731
    steps_view.render_all(
        lambda: make_view(t, trace, example, text, first=deferred),
        selector or (lambda: head_selector(t, trace.heads)),
        write_url,
        rest=rest,
        tail=grads_view.section,
    )


def write_url() -> None:
    """The page's view into the URL: at the end of every run, and of every per-head fragment run."""
    url_sync.write_url(st.session_state)


def main() -> None:
    kit.init_state(PAGE.defaults)
    url_sync.read_url(st.session_state)  # first run (or a changed URL) only, before any widget
    t = PAGE.start()
    present = bool(st.session_state.get(presenter.PRESENT_KEY))
    if not present:
        presenter.class_banner(t)  # a live class runs from this browser: say so, and the way back to it
    example = PAGE.value("preset") == "example"
    try:
        ignored = url_sync.ignored_notice(st.session_state)
        if ignored:  # both views: a malformed ?layer= is as worth naming as a malformed ?seed=
            st.warning(t("playground.url_ignored", names=", ".join(kit.escape_markdown(n) for n in ignored)))
        # The session's first view sends the sidebar's weights radio, settings and practice switch
        # (and app.py the language switch, and the example picker beside the sentence) with steps
        # 2–11, one run later: at 1366×768 they are below the sidebar's first screen (its navigation
        # fills it), at 1920×1080 its foot, on a phone the sidebar is closed; drawing them first made
        # step 1's chart ~0.3 s later in the browser (bench/RESULTS.md). Their boxes stand where they
        # go in every run, so the page is laid out the same. The sentence box is on the first screen
        # and comes at once. A first view that draws no step (an error) draws them all at once, and
        # so does the pretrained view (its own controls come at once).
        later = not present and first_screen.first_view(st.session_state, st.context.headers)
        if not present:
            with st.sidebar:
                weights_box, side = st.container(), st.container()
            if pretrained_view.weights_switch(t, weights_box, draw=not later):  # all-MiniLM-L6-v2
                if later:
                    pretrained_view.weights_switch(t, weights_box)
                pretrained_view.page(t, lambda tr, text, selector: render_steps(t, tr, False, text, selector))
                return
            if not later:
                sidebar(t, example, side)
            presenter.return_script()
            PAGE.title(t)
            draw_picker = lambda: None  # noqa: E731
            if example:
                st.info(t("playground.example_note"))
            else:  # the sentence on the first screen, under the introduction that asks for it
                draw_picker = sentence_box.sentence_box(t, picker=not later)
        trace = load_trace(t, example)
        if trace is None:
            if later:
                pretrained_view.weights_switch(t, weights_box)
                sidebar(t, example, side)
                draw_picker()
            return
        if present:
            presenter.render(make_view(t, trace, example), presenter_head_picker(t, trace.heads))
            return
        st.markdown(t("playground.tokens", n=trace.n, pads=trace.n_pad))
        kit.show_tokens(trace.tokens, trace.n_pad)
        share.share_row(t, trace, int(st.session_state.get(PAGE.key("head"), 0)))
        render_steps(t, trace, example)
    finally:
        write_url()


main()
