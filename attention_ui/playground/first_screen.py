"""The playground's first screen first: on a visitor's first view, steps 2–11 follow one run later.

Measured (bench/cold_start.py, issue 24 point 11): on a cold start the browser's main thread was busy
for ~2 s before the first chart appeared — rendering the whole page's Markdown and formulas (~1 s),
then evaluating Plotly's chunk and mounting all 11 charts in one task (all charts of a run appear
together). At 1366×768 and 1920×1080 the first screen ends inside step 1 or just below it, so the
session's first view of the steps draws step 1 and a short note, and the rest arrives in the next run, which a constant
script starts once step 1's chart is drawn (it clicks the note's button; the learner can click it too).
Nothing is lost: every later run of the session draws every step, and so does any rerun the learner
causes meanwhile (a widget change), since the deferral holds for one run only.

The sidebar's controls come with that next run too (the playground's weights radio, settings and
practice switch, and app.py's language switch; the page keeps their boxes in place, so nothing
moves): drawing some twenty widgets in the browser before Plotly's chunk is evaluated was the largest
part left of the first chart's delay (bench/RESULTS.md, "Issue 24, point 11, third pass"); at
1366×768 they are below the sidebar's first screen anyway.

A link to an anchor of a later step (``/#step-softmax``): the script asks for the rest at once and
scrolls to the anchor once it is drawn (see the comment on ``_SCRIPT``).

Only a browser runs that script, so only a browser session (one whose request has a User-Agent) is
deferred; AppTest, which has no browser, always gets every step. No user text goes into HTML here
(the script only looks the address's fragment up as an element id).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping

import streamlit as st

from attention_ui import assets
from attention_ui.playground.settings import TABLE

DONE_KEY = TABLE.key("first_view_done")  # plain session key: the session has had its first view of the steps
# the note's container (browser tests and benchmarks wait for it to go)
PENDING_KEY = TABLE.key("rest_pending")
BUTTON_KEY = TABLE.key("rest_now")

# Clicks the note's button once step 1's chart is drawn (two frames later, so it is painted), or after
# 8 s whatever happened; stops when the note has gone (another run drew the rest). Constant.
#
# A link to a later step (``/#step-softmax``, with or without a query) cannot be seen by the server:
# browsers never send the fragment. Its element is not on the first view, so the browser's own jump
# to the anchor finds nothing (and Streamlit then drops the fragment from the address); here the
# script reads the address the page was opened at, asks for the rest at once, and once the anchor is on
# the page and nothing is pending, scrolls to it (below Streamlit's header) and keeps it there while
# the charts above it are drawn — until the learner scrolls, types or clicks, or after 3 s.
_SCRIPT = assets.script("first_screen.js").replace("__PENDING__", PENDING_KEY)


def first_view(state: Mapping, headers: Mapping[str, str]) -> bool:
    """Whether this run is the session's first view of the steps, in a browser (nothing is marked)."""
    return not state.get(DONE_KEY, False) and bool(headers.get("User-Agent"))


def defer_rest(state: MutableMapping, headers: Mapping[str, str]) -> bool:
    """Whether this run draws only the first screen: the session's first view of the steps, in a
    browser. Marks the first view as had, so the next run (whatever starts it) draws every step."""
    first = first_view(state, headers)
    state[DONE_KEY] = True
    return first


def pending(t, first: int, last: int) -> None:
    """Where steps ``first``–``last`` will be: a note, its button and the script that presses it."""
    with st.container(key=PENDING_KEY):
        st.caption(t("playground.rest_pending", first=first, last=last))
        st.button(t("playground.rest_now", first=first, last=last), key=BUTTON_KEY)
        st.html(_SCRIPT, unsafe_allow_javascript=True)
