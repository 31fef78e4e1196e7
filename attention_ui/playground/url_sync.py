"""Thin Streamlit glue between ``st.query_params`` and the playground's session state.

* ``read_url(state)`` runs before any playground widget: on a session's first run (or when the URL
  changed from outside, e.g. back/forward), it copies valid URL values into the session and
  remembers which parameters were ignored. Otherwise the widgets own the values, so URL and
  widgets never fight.
* ``write_url(state)`` runs after the page has settled its values and updates the URL only when it
  differs, which does not trigger a rerun.

The language parameter is applied by ``attention_ui.language.current_language`` (app.py draws the
language selectbox before this page runs, so its value cannot be changed here).
"""

from __future__ import annotations

import streamlit as st

from attention_ui.playground import url_state

WRITTEN = "pg_url_written"  # the URL parameters this session last read or wrote
IGNORED = "pg_url_ignored"  # parameter names ignored at the last read
NOTICE_FOR = "pg_url_notice_for"  # the serialised view the notice belongs to


def snapshot() -> dict[str, str | list[str]]:
    params = st.query_params
    out: dict[str, str | list[str]] = {}
    for key in params.keys():
        values = params.get_all(key)
        out[key] = values[0] if len(values) == 1 else list(values)
    return out


def read_url(state) -> None:
    current = snapshot()
    if WRITTEN in state and state[WRITTEN] == current:
        return
    first = WRITTEN not in state
    if not first and not current:
        # another page's navigation dropped our parameters: keep the session's view
        state[WRITTEN] = current
        return
    parsed = url_state.parse(current)
    for key, value in parsed.values.items():
        if key == "lang":
            continue  # handled by current_language() before the app's language selectbox
        state[key] = value
    state[IGNORED] = list(parsed.ignored)
    state[NOTICE_FOR] = None
    state[WRITTEN] = current


def ignored_notice(state) -> list[str]:
    """Parameter names to list in the notice: shown until the user changes the view."""
    ignored = state.get(IGNORED) or []
    if not ignored:
        return []
    view = url_state.serialise(state)
    if state.get(NOTICE_FOR) is None:
        state[NOTICE_FOR] = view
    if state[NOTICE_FOR] != view:
        state[IGNORED] = []
        return []
    return list(ignored)


def write_url(state) -> None:
    target = url_state.serialise(state)
    if snapshot() != target:
        st.query_params.from_dict(target)
    state[WRITTEN] = dict(target)
