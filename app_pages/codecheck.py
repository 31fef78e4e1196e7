"""Write it yourself (issue 44): the learner's own NumPy attention, checked step by step on their
sentence and on hidden cases, in a sandbox.

Widgets (declared in ``attention_ui.codecheck.settings``: the sentence, shared with the other pages,
the mask and the seed; the code box and its presets) -> *Check* -> ``attention_core.codecheck.check`` (the code runs in a worker
process of its own, never in this one) -> the report (``attention_ui.codecheck.views``). The check
is on for a local address and off on a shared server unless the operator turns it on
(``attention_ui.codecheck.gate``); the page says why when it is off. Words: the ``codecheck`` catalog.

The code box is ``st.text_area``: no maintained Streamlit code-editor component works offline
(docs/code-check.md says which were looked at and why).
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from attention_core import AttentionConfig, AttentionConfigError
from attention_ui import kit
from attention_ui.codecheck import views
from attention_ui.codecheck.settings import PAGE, TABLE

key = TABLE.key


def mask_name(t, kind: str) -> str:
    return t("codecheck.mask_" + kind.replace("+", "_"))


def controls(t) -> None:
    st.header(t("codecheck.settings"))
    PAGE.widget(t, "text_area", "text", height=80, helped=True)
    PAGE.widget(
        t, "selectbox", "kind", TABLE.setting("kind").choices, format_func=partial(mask_name, t), helped=True
    )
    PAGE.seed_input(t)


def code_box(t, on: bool) -> bool:
    """The presets, the code box and the Check button; True when Check was pressed."""
    st.session_state.setdefault(key("code"), views.preset_source("removed"))
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    PAGE.widget(
        t,
        "radio",
        "preset",
        TABLE.setting("preset").choices,
        format_func=lambda p: t(f"codecheck.preset_{p}"),
        horizontal=True,
        where=left,
    )
    right.button(
        t("codecheck.load"), on_click=views.load_preset, key=key("load"), help=t("codecheck.load_help")
    )
    st.markdown(views.MONO, unsafe_allow_html=True)  # constant CSS, no user text
    PAGE.widget(t, "text_area", "code", height=440, helped=True)
    return st.button(
        t("codecheck.check"), type="primary", disabled=not on, key=key("check"), icon=":material/play_arrow:"
    )


def run_check(t) -> None:
    from attention_core.codecheck.check import check
    from attention_core.codecheck.sandbox import SandboxUnavailable
    from attention_core.trace import trace_text

    s = st.session_state
    text = (s.get(key("text")) or "").strip()
    if not text:
        st.error(t("codecheck.err_empty"))
        return
    kind = s.get(key("kind"), "causal")
    seed = PAGE.whole(t, key("seed"), t("codecheck.seed"), kit.SEED_RANGE)
    if seed is None:
        return
    known = [(AttentionConfigError, "codecheck.err_config"), (SandboxUnavailable, "codecheck.unavailable")]
    with PAGE.guard(t, "code check", known=known):
        pad = views.PAD_FOR_PADDING if "padding" in kind else 0
        config = AttentionConfig(mask=kind, pad=pad, seed=seed)
        tokens = trace_text(text, config).tokens
        with st.spinner(t("codecheck.running")):
            report = check(s.get(key("code")) or "", text, config)
        s[key("report")] = (report, s.get(key("code")), tokens)


def main() -> None:
    t = PAGE.open(controls)
    on, why = views.session_gate()
    if not on:
        st.info(t(f"codecheck.{why}"), icon=":material/lock:")
    else:
        from attention_core.codecheck.sandbox import default_sandbox

        default_sandbox().prestart()  # a warm worker for the first check (one per server)
    if code_box(t, on) and on:
        run_check(t)
    stored = PAGE.value("report")
    if stored is not None:
        report, code, tokens = stored
        st.header(t("codecheck.h_report"))
        if code != PAGE.value("code"):
            st.caption(t("codecheck.stale"))
        views.show_report(t, PAGE, report, tokens)


main()
