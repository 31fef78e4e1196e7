"""The playground's first screen first: on a visitor's first view, steps 2–11 follow one run later.

Measured (bench/cold_start.py, issue 24 point 11): on a cold start the browser's main thread was busy
for ~2 s before the first chart appeared — rendering the whole page's Markdown and formulas (~1 s),
then evaluating Plotly's chunk and mounting all 11 charts in one task (all charts of a run appear
together). At 1366×768 and 1920×1080 the first screen ends inside step 1 or just below it, so the
session's first view of the steps draws step 1 and a short note, and the rest arrives in the next run, which a constant
script starts once step 1's chart is drawn (it clicks the note's button; the learner can click it too).
Nothing is lost: every later run of the session draws every step, and so does any rerun the learner
causes meanwhile (a widget change), since the deferral holds for one run only.

Only a browser runs that script, so only a browser session (one whose request has a User-Agent) is
deferred; AppTest, which has no browser, always gets every step. Nothing here reads user text.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping

import streamlit as st

DONE_KEY = "pg_first_view_done"  # plain session key: the session has had its first view of the steps
PENDING_KEY = "pg_rest_pending"  # the note's container (browser tests and benchmarks wait for it to go)
BUTTON_KEY = "pg_rest_now"

# Clicks the note's button once step 1's chart is drawn (two frames later, so it is painted), or after
# 8 s whatever happened; stops when the note has gone (another run drew the rest). Constant.
_SCRIPT = """
<script>
(() => {
  const started = performance.now();
  const tick = setInterval(() => {
    const button = document.querySelector(".st-key-__PENDING__ button");
    if (!button) { if (performance.now() - started > 15000) clearInterval(tick); return; }
    const drawn = document.querySelector('[data-testid="stMain"] .js-plotly-plot .mlayer > *');
    if (!drawn && performance.now() - started < 8000) return;
    clearInterval(tick);
    if (button.dataset.alClicked) return;
    button.dataset.alClicked = "1";
    requestAnimationFrame(() => requestAnimationFrame(() => button.click()));
  }, 50);
})();
</script>
""".replace("__PENDING__", PENDING_KEY)


def defer_rest(state: MutableMapping, headers: Mapping[str, str]) -> bool:
    """Whether this run draws only the first screen: the session's first view of the steps, in a
    browser. Marks the first view as had, so the next run (whatever starts it) draws every step."""
    first = not state.get(DONE_KEY, False)
    state[DONE_KEY] = True
    return first and bool(headers.get("User-Agent"))


def pending(t, first: int, last: int) -> None:
    """Where steps ``first``–``last`` will be: a note, its button and the script that presses it."""
    with st.container(key=PENDING_KEY):
        st.caption(t("playground.rest_pending", first=first, last=last))
        st.button(t("playground.rest_now", first=first, last=last), key=BUTTON_KEY)
        st.html(_SCRIPT, unsafe_allow_javascript=True)
