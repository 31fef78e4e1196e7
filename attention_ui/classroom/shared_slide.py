"""One drawing of a slide per view, shared by every student of the server process.

Every student following a teacher sees the same step of the same view: drawn per session, a step
change in a hall made each of them build the same figures and turn them into the same JSON at the
same moment (issue 47, py-spy on a process with 124 students: their full runs after a step change
were 42 % of its active samples, `render_step` 26 %, Plotly 13 %, the charts' element ids 8 %). So a step's body (its formula, shapes, chart(s), notes and explanation: everything
:func:`attention_ui.playground.steps_view.step_body` draws) is drawn once per (view content,
language, head, step) and replayed by Streamlit's cache to every other session: the replay copies
the recorded element messages into the session's page (DeltaGenerator._enqueue copies each one),
so no figure is built, serialised or hashed again and nothing cached is ever changed.

Only the body is shared. The step's heading, the practice-mode hook (a sidebar switch and the
session's own state, steps_view.render_step) and everything around the slide stay per session.
The body draws no widget on a phone: its charts take no clicks (View.on_cell is None), and its
switches (all heads, one colour scale) and code tab are not drawn there.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import streamlit as st

from attention_ui.playground import steps_view

# Slides kept per process: 11 steps × 2 languages × a few heads of the class's current view, and the
# last views before it. A slide holds its figures' JSON: a 10-token score map ~5 kB, a 64-token one
# ~170 kB, 8 heads of 64 tokens ~650 kB (so at most a few tens of MB in all).
SLIDES_MAX = 64


def view_key(view: dict) -> str:
    """The stored view's content as canonical JSON, without the step the teacher is at (the slide's
    step is a key of its own: a student away at their own step shares that step's drawing)."""
    content = {key: value for key, value in view.items() if key != "step"}
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


# cache_resource, not cache_data: cache_data pickles the recorded messages and unpickles them on
# every hit; cache_resource keeps them as they are, and the replay copies them into each page.
# (bench/RESULTS.md "Shared slides": a phone's slide 13 ms with cache_data, 8.6 ms with cache_resource.)
# max_entries is SLIDES_MAX written as a literal, as tests/test_cache_bounds.py asks of every cache.
@st.cache_resource(max_entries=64, show_spinner=False)
def _body(key: str, lang: str, head: int, name: str, _view: steps_view.View, _explanation: str) -> None:
    steps_view.step_body(_view, name, _explanation)


def drawer(view: dict, lang: str) -> Callable[[steps_view.View, str, str], None]:
    """The ``View.draw_body`` of a student's slide for the class's stored ``view`` in ``lang``."""
    key = view_key(view)

    def draw(v: steps_view.View, name: str, explanation: str) -> None:
        _body(key, lang, v.head, name, v, explanation)

    return draw


def clear() -> None:
    _body.clear()
