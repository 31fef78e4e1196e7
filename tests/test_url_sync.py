"""attention_ui/playground/url_sync.py: a URL the session wrote before is not read again as a new link
(a browser that is behind sends an older URL of ours with its next click), unless the browser went
back or forward to it."""

from __future__ import annotations

import dataclasses

import pytest
from apptest_pages import open_page
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

from attention_ui.playground import url_sync


def _url(at) -> dict[str, str]:
    return {k: at.query_params[k][0] if isinstance(at.query_params[k], list) else at.query_params[k]
            for k in at.query_params}  # fmt: skip


@pytest.fixture
def moved():
    """A playground whose d_model went 16 -> 8 -> 4: three URLs written by the session."""
    at = open_page()
    urls = [_url(at)]
    for d in (8, 4):
        at.number_input(key="pg_d_model").set_value(d).run()
        urls.append(_url(at))
    assert [u.get("d_model") for u in urls] == ["16", "8", "4"]
    return at, urls


@pytest.mark.parametrize("behind", [0, 1])
def test_an_older_url_of_ours_does_not_undo_the_changes_after_it(moved, behind):
    at, urls = moved
    at.query_params.clear()
    at.query_params.update(urls[behind])  # the browser has not yet got the later URLs
    at.run()
    assert at.session_state["pg_d_model"] == 4
    assert _url(at)["d_model"] == "4"  # and the URL is put back to the view


def test_back_or_forward_to_an_older_url_of_ours_restores_it(moved, monkeypatch):
    at, urls = moved
    monkeypatch.setattr(url_sync, "history_navigation", lambda: True)
    at.query_params.clear()
    at.query_params.update(urls[0])
    at.run()
    assert at.session_state["pg_d_model"] == 16


def test_a_url_the_session_never_wrote_is_read(moved):
    at, urls = moved
    at.query_params.clear()
    at.query_params.update({**urls[0], "d_model": "32", "heads": "4"})
    at.run()
    assert at.session_state["pg_d_model"] == 32


def test_streamlit_still_says_which_runs_are_history_navigation():
    # url_sync.history_navigation reads this private field of the run's context
    assert "is_history_navigation" in {f.name for f in dataclasses.fields(ScriptRunContext)}
