"""The view students follow: the teacher's sentence, settings, head and presenter step, as a plain
dict the store keeps, and the trace a student's page computes from it (the same core call as the
playground's, cached per process)."""

from __future__ import annotations

import streamlit as st

from attention_core import trace_text, worked_example_trace
from attention_ui.i18n import translate
from attention_ui.playground.settings import CONFIG_KEYS, DEFAULTS, read_config
from attention_ui.playground.steps_view import STEPS

cached_trace = st.cache_resource(max_entries=32, show_spinner=False)(trace_text)
cached_example = st.cache_resource(max_entries=1, show_spinner=False)(worked_example_trace)


def _plain(value):
    return value if isinstance(value, bool | int | float | str) or value is None else str(value)


def view_of(state) -> dict:
    """The teacher's playground state as the students' view (JSON-friendly values only)."""
    get = lambda key: state.get(key, DEFAULTS.get(key))  # noqa: E731
    step = get("pg_step")
    text = state.get("pg_text")
    if text is None:  # the playground not opened yet in this session: its starting sentence
        text = translate(str(state.get("lang", "en")), "playground.default_text")
    return {
        "text": str(text),
        "preset": str(get("pg_preset")),
        "max_tokens": _plain(get("pg_max_tokens")),
        "config": {key: _plain(get(f"pg_{key}")) for key in CONFIG_KEYS},
        "head": int(get("pg_head") or 0),
        "step": int(step) if isinstance(step, int) and 1 <= step <= len(STEPS) else 1,
    }


def trace_of(view: dict):
    """(trace, None) or (None, catalog key of why there is none) for a stored view."""
    try:
        if view.get("preset") == "example":
            return cached_example(), None
        text = view.get("text") or ""
        if not text.strip():
            return None, "class.wait_teacher"
        config, problems = read_config(dict(view.get("config") or {}))
        if config is None or problems:
            return None, "class.err_view"
        return cached_trace(text, config, max_tokens=int(view.get("max_tokens") or 64)), None
    except Exception:  # a view from another version of the app: nothing to draw, say so
        return None, "class.err_view"
