"""Attention Lab entry point: page config, language switch, navigation."""

import copy
import json

import streamlit as st

from attention_ui import (
    assets,
    chart_keys,
    frontend_words,
    narrow_fit,
    narrow_screen,
    nav,
    per_process,
    server_fixes,
    targets,
    touch,
)
from attention_ui.i18n import LANGUAGE_NAMES, LANGUAGES
from attention_ui.language import LANG_KEY, current_language, translator
from attention_ui.playground import first_screen

server_fixes.install()  # six fixes to Streamlit's server, once per process (see the module)

LANGUAGE_SHOWN_KEY = "app_language_shown"  # plain session key: the language switch has been drawn

st.set_page_config(page_title="Attention Lab", page_icon="🔍", layout="wide")

current_language()  # initialise from the browser locale once
t = translator()
with st.sidebar:
    language_box = st.container()  # the language switch, drawn once the page is known (below)
# Streamlit has no page-language option: <html lang> says "en" on every page. A constant script
# (the language code comes from LANGUAGES, never from the learner) sets it for screen readers and
# the browser's fonts and hyphenation; it runs again only when the language, and so the script, changes.
with st.sidebar:
    st.html(
        f"<script>document.documentElement.lang = {json.dumps(t.lang)};</script>",
        unsafe_allow_javascript=True,
    )
    # Captions carry content (notes under charts, hints): Streamlit draws them grey at 60 % opacity,
    # 2.6-3.9:1 on white; this colour, the one the charts' text uses, at full opacity is 6.3:1
    # (WCAG 2.1 AA asks 4.5:1). Constant CSS.
    st.html(assets.style("captions.css"))
    # A link in a page's text wraps instead of ending in "…" (Streamlit keeps page links on one line,
    # which cut the guided path's "Continue in the playground: …" on a phone). Constant CSS.
    st.html(assets.style("page_links.css"))
    # On a phone, the cell numbers of a map wider than kit.DENSE_COLUMNS would run together: hidden
    # there (hover or a tap gives each value). Constant CSS.
    st.html(assets.style("dense_maps.css"))
    # On a phone the sidebar closes after a page is chosen or the sentence applied (issue 24).
    narrow_screen.close_sidebar_when_done()
    # On a touch screen a tap on a chart that selects (on_select) selects the tapped cell (plotly.js #6721).
    touch.select_on_tap()
    # Display formulas shrink to a phone's width; a formula or table that still scrolls shades its hidden edge.
    narrow_fit.fit_to_width()
    # A chart's toolbar is one Tab stop (arrow keys move inside it), not one per button.
    chart_keys.one_tab_stop_per_chart(t("charts.toolbar"))
    # Streamlit's own tooltips and screen-reader names ("Fullscreen", "Help for …") in the page's language.
    frontend_words.in_page_language(t)
    # Every target at least 24 × 24 px (WCAG 2.2, 2.5.8); on a phone page links, buttons and boxes 44 px.
    targets.size_targets()

# The page files live in app_pages/, not pages/: a folder named pages/ next to app.py makes
# Streamlit run each new server's first session as a legacy multipage app (its file list in the
# sidebar, "Page not found" for /why-sqrt-dk) until app.py's st.navigation takes over. Which pages
# there are, with their icons and URLs, is attention_ui/nav.py's data.


def nav_page(t, p: nav.NavPage, **more) -> st.Page:
    """Streamlit's page for ``p``: its script, its title in ``t``'s language, its icon and URL path."""
    return st.Page(p.script, title=t(p.title_key), icon=p.icon, url_path=p.url_path, **more)


def redirect_page(old_url_path: str, target):
    """A hidden page at an old URL that switches to ``target``, keeping the link's query string."""

    def go() -> None:
        st.switch_page(target, query_params=st.query_params.to_dict())

    return st.Page(go, title=target.title, url_path=old_url_path, visibility="hidden")


def build_pages(t) -> tuple[dict, object]:
    """Every section's pages in ``t``'s language, and the playground's. Built once per process and
    language (below): building a page resolves its script's path on disk, a few system calls per
    page that each let go of the interpreter lock, a quarter of a student's page run when 150
    students of a class redraw at once (issue 47). Each run takes shallow copies: st.navigation
    marks the copy it picks as the one that may run, which must not be shared between sessions."""
    start = nav_page(t, nav.START, default=True)  # at "/" (its url_path is an internal name)
    labs = {p.url_path: nav_page(t, p) for p in nav.LABS}
    practice = {p.url_path: nav_page(t, p) for p in nav.PRACTICE}
    by_url = {"": start, **labs, **practice}  # an old URL's page: a lab's or a practice page's
    sections = {
        t("app.nav_section_explore"): [start],
        t("app.nav_section_labs"): [
            *labs.values(),
            *(redirect_page(old, by_url[new]) for old, new in nav.redirects().items()),
        ],
        t("app.nav_section_practice"): list(practice.values()),
        t("class.nav_section"): [nav_page(t, p) for p in nav.CLASS],
    }
    return sections, start


sections, playground = per_process.built(("pages", t.lang), lambda: build_pages(t))
pages = {name: [copy.copy(p) for p in section] for name, section in sections.items()}
# Every page stays listed: with more than twelve, Streamlit would hide some behind "View more".
page = st.navigation(pages, expanded=True)
# Each page names itself in the browser tab (and in bookmarks and the history), in the page's language.
st.set_page_config(page_title=t("app.page_title", page=page.title))


def language_switch() -> None:
    # Two buttons side by side, not a drop-down: one tap switches, and there is no pop-up list to
    # close. (A drop-down's list closes when the sidebar scrolls, and the sidebar scrolls the box into
    # view when it is clicked half below the window's edge, as it is at 1400×900 under the 17 pages:
    # the click opened the list and the scroll closed it at once.)
    with language_box:
        st.radio(t("app.language"), LANGUAGES, key=LANG_KEY, format_func=LANGUAGE_NAMES.get, horizontal=True)
    st.session_state[LANGUAGE_SHOWN_KEY] = True


# A new session that opens on the playground gets its language switch with the playground's settings,
# one run later (attention_ui/playground/first_screen.py): it is below the sidebar's first screen at
# 1366×768, and its widget's code, fetched by the browser before step 1's chart, made that chart later
# (bench/RESULTS.md, issue 24 point 11). Only while it has never been drawn in the session (a widget
# left out of a run after it was drawn would lose its value), and only when the playground did put
# the rest off (a first view that drew no step, or presenter mode, gets it at once).
later = (
    page.url_path == playground.url_path
    and first_screen.first_view(st.session_state, st.context.headers)
    and not st.session_state.get(LANGUAGE_SHOWN_KEY)
)
if not later:
    language_switch()
page.run()
if later and not st.session_state.get(first_screen.DONE_KEY):
    language_switch()
