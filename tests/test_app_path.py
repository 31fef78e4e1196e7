"""The guided path page (app_pages/path.py) through AppTest: its progress lives in the URL, with the
copy-link button, and a page link in its text wraps instead of being cut."""

from __future__ import annotations

from tests.apptest_pages import html_bodies


def test_a_page_link_in_the_text_wraps_instead_of_being_cut():
    from tests.apptest_pages import open_page

    at = open_page("app_pages/path.py")
    css = [body for body in html_bodies(at) if "stPageLink-NavLink" in body]
    assert css and "white-space: normal" in css[0] and "text-overflow: clip" in css[0]


def test_the_guided_path_keeps_its_progress_in_the_url_and_has_the_copy_link_button():
    from tests.apptest_pages import open_page

    at = open_page("app_pages/path.py")
    assert any("al-copy-link" in el.proto.body for el in at.sidebar.get("html"))
