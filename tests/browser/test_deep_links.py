"""A lab's link opened as the very first visit to a freshly started server shows that lab, cleanly.

Streamlit decides on a server's first script run whether the app is a legacy multipage app: a
``pages/`` folder next to app.py made that first run list the folder's files in the sidebar
("app", "why sqrt dk", ...) and answer ``/why-sqrt-dk`` with a "Page not found" dialog before
app.py's own navigation took over. Only the first visit after each restart was hit, so each
case of ``test_first_visit_by_deep_link_shows_the_lab`` starts its own server and opens the link
as that server's first visitor; the other tests use the shared server. A watcher installed
before the app's scripts records every dialog and every sidebar link the page ever showed, so a
legacy list that is replaced a second later still counts.

Screenshots: artifacts/screenshots/deep_link_<lab>_<lang>.png.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from conftest import LOGS, _start_server, _stop
from playwright.sync_api import Browser, Page, expect
from st_browser import (
    assert_no_exception,
    new_context,
    screenshot,
    switch_language,
    wait_for_app_run,
    wait_until_idle,
)

from attention_ui import nav
from attention_ui.i18n import translate

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

SLOW_MS = 120_000  # a first run on a fresh server compiles and caches everything on a shared 2-core box

# Each lab's url path -> the catalog key of the title the lab itself shows (its h1).
LAB_TITLES = {
    "why-sqrt-dk": "scaling.title",
    "masks": "masks.title",
    "multi-head": "multihead.title",
    "cost": "cost.title",
    "lookalikes": "lookalikes.title",
    "quiz": "quiz.title",
    "decoder": "decoder.title",
    "positions": "positions.title",
    "inference": "inference.title",
    "block": "block.title",
    "heads": "heads.title",
    "training": "training.title",
}
# Links of the legacy file list (or shared from it) and the page each must reach ("" = the playground).
# codecheck: the code check's one name (its script's stem, AppTest's way in) reaches /code_check
OLD_LINKS = {
    "why_sqrt_dk": "why-sqrt-dk",
    "multi_head": "multi-head",
    "playground": "",
    "codecheck": "code_check",
}
TITLES = {**LAB_TITLES, "": "playground.title", "code_check": "codecheck.title"}

# Records every dialog text and every sidebar navigation link (href tail | text) ever shown.
WATCHER = """
window.__seen = {dialogs: [], links: []};
const record = () => {
  for (const d of document.querySelectorAll('[role="dialog"]')) {
    const text = d.innerText.trim();
    if (text && !window.__seen.dialogs.includes(text)) window.__seen.dialogs.push(text);
  }
  for (const a of document.querySelectorAll('[data-testid="stSidebarNav"] a')) {
    const link = (a.getAttribute('href') || '').split('?')[0].split('/').pop() + '|' + a.innerText.trim();
    if (!window.__seen.links.includes(link)) window.__seen.links.push(link);
  }
};
new MutationObserver(record).observe(document, {subtree: true, childList: true, characterData: true});
"""


def registered_labs() -> dict[str, str]:
    """url path -> page file of every lab the navigation registers (attention_ui/nav.py's LABS)."""
    return {p.url_path: p.script for p in nav.LABS}


def legacy_links() -> set[str]:
    """The links Streamlit's automatic file list would show: "app" plus one per file, named after it.

    A link counts as legacy when its text is a file name with "_" turned into " " (Streamlit's label
    for a file page), e.g. "why sqrt dk"; the app's own labels are catalog titles ("Why √d_k", "Quiz").
    """
    stems = {Path(p).stem for p in registered_labs().values()} | {"playground"}
    return {"app"} | {s.replace("_", " ") for s in stems}


def nav_titles(lang: str) -> set[str]:
    """Every label the app's own navigation may show in ``lang``: the catalog titles of every page
    the navigation registers (attention_ui/nav.py, sections excepted), read from its tables so that a
    new page is known here the day it is added."""
    keys = {p.title_key for p in nav.PAGES}
    assert len(keys) >= 18, sorted(keys)  # the playground, the labs, practice and the class
    return {translate(lang, k) for k in keys}


@pytest.fixture
def fresh_server() -> Iterator[str]:
    """A new ``streamlit run app.py`` that nobody has visited yet; stopped after the test."""
    LOGS.mkdir(parents=True, exist_ok=True)
    proc, base_url = _start_server(LOGS / "streamlit-deep-links.log")
    try:
        yield base_url
    finally:
        _stop(proc)


def open_link(browser: Browser, url: str, locale: str = "en-US") -> Page:
    """``url`` in a new browser context (no cookies, no storage), waited for until the run is done."""
    context = new_context(browser, locale=locale, timeout_ms=SLOW_MS)
    context.add_init_script(WATCHER)
    page = context.new_page()
    response = page.goto(url)
    assert response is not None and response.ok, f"GET {url} answered {response and response.status}"
    wait_for_app_run(page, timeout_ms=SLOW_MS)
    return page


def assert_clean_lab(page: Page, url_path: str, lang: str) -> None:
    """The lab's own title, the app's navigation only, and no dialog, ever, during the whole load."""
    title = translate(lang, TITLES[url_path])
    expect(page.get_by_role("heading", level=1).first).to_contain_text(title, timeout=SLOW_MS)
    assert_no_exception(page)
    wait_until_idle(page, SLOW_MS)  # the run is over: every dialog it sent has been drawn (and watched)
    seen = page.evaluate("window.__seen")
    assert not [d for d in seen["dialogs"] if "not found" in d.lower()], seen["dialogs"]
    assert seen["dialogs"] == [], f"unexpected dialog(s): {seen['dialogs']}"
    texts = {link.split("|", 1)[1].split("\n")[-1].strip() for link in seen["links"]}
    assert not texts & legacy_links(), f"the legacy pages/ file list was shown: {seen['links']}"
    assert texts <= nav_titles(lang), f"sidebar links other than the app's own: {sorted(texts)}"
    assert urlparse(page.url).path == "/" + url_path, page.url


def test_every_lab_has_a_title_to_check() -> None:
    assert set(registered_labs()) == set(LAB_TITLES)


# Only a server's first visit can show the bug, so each case costs a fresh server (~15 s on 2 cores).
# These two labs showed the two ways it failed (the "Page not found" dialog; the legacy file list);
# tests/test_app_smoke.py guards the cause for every page (no pages/ folder next to app.py).
FIRST_VISIT_LABS = ("why-sqrt-dk", "masks")


@pytest.mark.parametrize(
    "url_path",
    FIRST_VISIT_LABS,
)
def test_first_visit_by_deep_link_shows_the_lab(browser: Browser, fresh_server: str, url_path: str) -> None:
    """First visitor of a fresh server in Japanese, then a second one in English, each by a link in the
    other language: the browser's language wins over the link's (issue 24)."""
    for lang, locale, link_lang in (("ja", "ja-JP", "en"), ("en", "en-US", "ja")):
        page = open_link(browser, f"{fresh_server}/{url_path}?lang={link_lang}", locale)
        try:
            assert_clean_lab(page, url_path, lang)
            screenshot(page, f"deep_link_{url_path}_{lang}", full=False)
        finally:
            page.context.close()


def test_old_links_reach_their_page(browser: Browser, streamlit_server: str) -> None:
    """Links copied from the legacy list (``/why_sqrt_dk``, ``/playground``) land on their page, query kept."""
    for old, new in OLD_LINKS.items():
        page = open_link(browser, f"{streamlit_server}/{old}?lang=ja", "ja-JP")
        try:
            page.wait_for_url(
                lambda url, new=new: urlparse(url).path == "/" + new and "lang=ja" in urlparse(url).query,
                timeout=SLOW_MS,
            )
            wait_until_idle(page, SLOW_MS)  # the redirect reran nothing new: the same run drew the page
            assert_clean_lab(page, new, "ja")
        finally:
            page.context.close()


def test_language_switch_after_a_deep_link_keeps_the_lab_and_its_inputs(
    browser: Browser, streamlit_server: str
) -> None:
    page = open_link(browser, f"{streamlit_server}/why-sqrt-dk")
    try:
        assert_clean_lab(page, "why-sqrt-dk", "en")
        box = page.locator(".st-key-scaling_row input")
        box.fill("1 2 3 4")
        box.press("Enter")
        wait_for_app_run(page, timeout_ms=SLOW_MS)
        switch_language(page, "ja", timeout_ms=SLOW_MS)
        expect(page.get_by_role("heading", level=1).first).to_contain_text(
            translate("ja", "scaling.title"), timeout=SLOW_MS
        )
        expect(page.locator(".st-key-scaling_row input")).to_have_value("1 2 3 4")
        assert urlparse(page.url).path == "/why-sqrt-dk", page.url
        assert_no_exception(page)
    finally:
        page.context.close()
