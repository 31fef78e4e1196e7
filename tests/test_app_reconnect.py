"""A browser that reconnects to a fresh session (its app process died, a load balancer moved it).

The page keeps showing the student's view and Streamlit's client does not rerun on a reconnect, so
the new process's session starts with the student's next change: its first run carries the widget
values the browser holds, and the URL (which the app keeps up to date) holds the same view. The
values the browser sent must win over the URL, or the change the student just made is undone.

AppTest expresses it: one session draws the page and a student changes controls in it; then the
session state is replaced by an empty one (what a new process has), and the rerun sends the
browser's widget values together with the URL the page wrote, as the real client does.
"""

from __future__ import annotations

from streamlit.runtime.state.safe_session_state import SafeSessionState
from streamlit.runtime.state.session_state import SessionState
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.app_test import TESTING_KEY, _AppTestSessionState

from attention_ui.playground.url_sync import browser_values
from tests.apptest_pages import no_exception, open_page


def rerun_in_a_fresh_session(at: AppTest) -> None:
    """What a reconnect to another process does: the browser's widget values and URL, sent to an
    empty server session (the values are read from the page before its old session is dropped)."""
    widget_states = at._tree.get_widget_states()
    state = SessionState()
    state[TESTING_KEY] = {}
    at._session_state = SafeSessionState(state, lambda: None)
    at.session_state = _AppTestSessionState(at._session_state)
    at._run(widget_states)


def test_first_change_after_a_reconnect_is_kept_and_the_rest_comes_from_the_url() -> None:
    at = open_page(params={"text": "tokalpha reads the notes", "seed": "7", "heads": "2"})
    assert at.query_params["seed"] == "7"
    at.number_input(key="pg_heads").set_value(4).run()  # made in the old process
    assert at.query_params["heads"] == "4"

    # The student's next change reaches the new process together with every other widget value.
    at.number_input(key="pg_seed").set_value(44)
    rerun_in_a_fresh_session(at)
    no_exception(at)
    assert at.session_state["pg_seed"] == 44, "the change the browser sent was undone by the URL"
    assert at.number_input(key="pg_seed").value == 44
    assert at.query_params["seed"] == "44"
    # The rest of the view is the student's: from the browser's widgets, which match the URL.
    assert at.session_state["pg_text"] == "tokalpha reads the notes"
    assert at.session_state["pg_heads"] == 4 and at.query_params["heads"] == "4"
    # And the session goes on normally: the next change is a plain rerun.
    at.number_input(key="pg_seed").set_value(45).run()
    assert at.session_state["pg_seed"] == 45 and at.query_params["seed"] == "45"


def test_a_fresh_page_load_still_takes_the_view_from_the_url() -> None:
    at = open_page(params={"text": "tokbravo reads", "seed": "9", "heads": "4"})
    no_exception(at)
    assert at.session_state["pg_seed"] == 9 and at.session_state["pg_heads"] == 4
    assert at.session_state["pg_text"] == "tokbravo reads"


def test_browser_values_are_checked_like_url_parameters() -> None:
    sent = [
        ("pg_seed", 44),  # a number input
        ("pg_heads", 4.0),  # a slider's one thumb arrives as a float
        ("pg_d_model", 16.5),  # not a whole number: dropped
        ("pg_pad", 10**9),  # out of range: dropped
        ("pg_tables", True),
        ("pg_text", "tokalpha reads"),
        ("pg_mask", "Causal (only earlier tokens)"),  # a choice widget's label: left to the URL
        ("lang", "ja"),  # the language is the app's, not the playground's
        ("pg_dl_json", True),  # not a view parameter
    ]
    assert browser_values(sent) == {
        "pg_seed": 44,
        "pg_heads": 4,
        "pg_tables": True,
        "pg_text": "tokalpha reads",
    }
