"""attention_ui/playground/url_sync.py: a URL the session wrote before is not read again as a new link
(a browser that is behind sends an older URL of ours with its next click), unless the browser went
back or forward to it."""

from __future__ import annotations

import dataclasses

import pytest
from apptest_pages import open_page
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

from attention_ui import kit


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
    monkeypatch.setattr(kit, "history_navigation", lambda: True)
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
    # kit.history_navigation reads this private field of the run's context
    assert "is_history_navigation" in {f.name for f in dataclasses.fields(ScriptRunContext)}


def test_a_lab_keeps_the_sentence_when_an_older_url_of_ours_comes_back():
    at = open_page("app_pages/masks.py")
    urls = [_url(at)]
    for text in ("one two three", "four five six"):
        at.text_area(key="masks_text").set_value(text).run()
        urls.append(_url(at))
    assert urls[-1]["text"] == "four five six"
    at.query_params.clear()
    at.query_params.update(urls[1])  # the browser is one run behind
    at.run()
    assert at.session_state["masks_text"] == "four five six"
    assert _url(at)["text"] == "four five six"


def test_a_page_url_skips_an_older_url_of_ours_unless_back_or_forward(monkeypatch):
    from attention_ui import page_url
    from attention_ui.playground.url_state import PARAMS

    url = page_url.PageUrl([p for p in PARAMS if p.url in ("d_model", "seed")], "zz_url_written")
    state: dict = {}
    for shown in ({"d_model": "8"}, {"d_model": "4"}):  # two runs, each writing its URL
        monkeypatch.setattr(page_url, "snapshot", lambda shown=shown: shown)
        url.read(state, {})
        monkeypatch.setattr(page_url.st, "query_params", _Query(shown))
        url.write(state)
    state["pg_d_model"] = 4
    monkeypatch.setattr(page_url, "snapshot", lambda: {"d_model": "8"})  # the browser one run behind
    assert url.read(state, {}) == () and state["pg_d_model"] == 4
    monkeypatch.setattr(kit, "history_navigation", lambda: True)  # ... or the Back button
    url.read(state, {})
    assert state["pg_d_model"] == 8
    with pytest.raises(ValueError):
        page_url.PageUrl(PARAMS, "zz_written")


class _Query(dict):
    def from_dict(self, d):
        self.clear()
        self.update(d)
