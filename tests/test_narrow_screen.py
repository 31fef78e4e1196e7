"""On a narrow screen the sidebar gets out of the way (attention_ui/narrow_screen.py): the script closes
it after navigation and after the sentence, and every page carries it."""

from __future__ import annotations

from tests.apptest_pages import html_bodies


def test_the_app_closes_the_sidebar_on_a_narrow_screen_after_navigation_and_the_sentence():
    from attention_ui import narrow_screen
    from tests.apptest_pages import open_page

    script = narrow_screen.sidebar_script()
    assert "const NARROW_PX = 768;" in script  # Streamlit's breakpoint, where the sidebar overlays the page
    for hook in ("stSidebarNavLink", '"change"', "Enter", 'aria-expanded") === "true"'):
        assert hook in script
    at = open_page("app_pages/masks.py")
    assert any("__alNarrowSidebar" in body for body in html_bodies(at))
