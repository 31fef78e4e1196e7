"""The view students follow: the teacher's sentence, settings, head and presenter step, as a plain
dict the store keeps, and the trace a student's page computes from it (the same core call as the
playground's, cached per process)."""

from __future__ import annotations

import streamlit as st

from attention_core import trace_text, worked_example_trace
from attention_ui import kit
from attention_ui.classroom.settings import TABLE
from attention_ui.i18n import translate
from attention_ui.playground.settings import CONFIG_KEYS, DEFAULTS, read_config
from attention_ui.playground.settings import TABLE as PLAYGROUND
from attention_ui.playground.steps_view import STEPS

cached_trace = kit.cached(trace_text)
cached_example = st.cache_resource(max_entries=1, show_spinner=False)(worked_example_trace)


def _plain(value):
    return value if isinstance(value, bool | int | float | str) or value is None else str(value)


def _live() -> dict[str, str]:
    """Setting name -> session key of what a student receives: the playground table's ``live`` entries."""
    return {key.removeprefix(PLAYGROUND.prefix + "_"): key for key in PLAYGROUND.live_keys}


def view_of(state) -> dict:
    """The teacher's playground state as the students' view (JSON-friendly values only): the table's
    ``live`` settings (attention_ui/playground/settings.py), the attention config's under ``config``."""
    live = {name: state.get(key, DEFAULTS.get(key)) for name, key in _live().items()}
    step = live.pop("step", None)
    text = live.pop("text", None)
    if text is None:  # the playground not opened yet in this session: its starting sentence
        text = translate(str(state.get("lang", "en")), "playground.default_text")
    view = {name: _plain(value) for name, value in live.items() if name not in CONFIG_KEYS}
    view["preset"], view["head"] = str(view.get("preset")), int(view.get("head") or 0)
    return {
        "text": str(text),
        **view,
        "config": {name: _plain(value) for name, value in live.items() if name in CONFIG_KEYS},
        "step": int(step) if isinstance(step, int) and 1 <= step <= len(STEPS) else 1,
    }


OWNER_KEY = TABLE.key(
    "view_owner"
)  # the class whose view this session's playground state is (it published it)


def adopt_view(state, view: dict) -> None:
    """The class's stored view into this session's playground state, each value checked as a URL's
    would be (attention_ui/playground/url_state.py). For a session that has not published the view
    itself: a reload of the class panel, or control resumed on another device, starts a session
    whose playground state is the default sentence at step 1, and going back to presenter mode
    would have published that to the class."""
    from attention_ui.playground import url_state
    from attention_ui.playground.settings import PAGE

    config = dict(view.get("config") or {})
    flat = {key: (config if name in CONFIG_KEYS else view).get(name) for name, key in _live().items()}
    params = {}
    for p in url_state.PARAMS:
        value = flat.get(p.state)
        if value is not None:
            try:
                params[p.url] = p.dump(value)
            except (TypeError, ValueError):  # a view from another version of the app: that value stays
                continue
    values = dict(url_state.parse(params).values)
    for key, value in values.items():
        state[key] = value
    kit.adopt_context(state, PAGE.shared, values)


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
